import { describe, expect, it } from 'vitest';
import { LimitReachedError, ValueTooLargeError } from './errors.ts';
import { buildAskRequirement } from './hitl.ts';
import {
  DEFAULT_RUN_BOUNDS,
  HUMAN_REQUEST_ANSWER_RESERVE_BYTES,
  MAX_HUMAN_REQUEST_ANSWER_BYTES,
  MAX_HUMAN_REQUEST_BYTES,
  checkDecisionSize,
  checkHumanRequestFields,
  checkHumanRequestSize,
  humanRequestRefusal,
  type RunBounds,
} from './run-bounds.ts';
import type { WorkflowNode } from './schemas/workflow.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const NODE = { id: 'agent', name: 'Agent', nodeType: 'step', executorKey: 'echo' } as unknown as WorkflowNode;

function ask(prompt: string, context: string | null = null, choices: string[] | null = null) {
  return buildAskRequirement({ node: NODE, iterationPath: '', token: 'abcdef012345', prompt, context, choices, timeoutSeconds: null, now: NOW });
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('nothing thrown');
}

describe('human request bounds', () => {
  it('refuses a prompt, context or choices over its byte limit, naming the field and the limit', () => {
    // 4 000 characters pass the schema; as 3-byte characters they are 12 002 bytes of JSON.
    const prompt = thrown(() => checkHumanRequestFields({ prompt: '€'.repeat(4_000) }));
    expect(prompt).toBeInstanceOf(ValueTooLargeError);
    expect(prompt).toMatchObject({ status: 400, code: 'invalid_request', details: { field: 'prompt', bytes: 12_002, limitBytes: 8_192 } });
    expect((prompt as Error).message).toBe('prompt is 12002 bytes of JSON, over the limit of 8192 bytes');
    expect(thrown(() => checkHumanRequestFields({ prompt: 'q', context: '\u0001'.repeat(6_000) }))).toMatchObject({ details: { field: 'context' } });
    expect(thrown(() => checkHumanRequestFields({ prompt: 'q', choices: Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(500, '€')) }))).toMatchObject({
      details: { field: 'choices' },
    });
    expect(() => checkHumanRequestFields({ prompt: 'p'.repeat(4_000), context: 'c'.repeat(20_000), choices: null })).not.toThrow();
  });

  it('bounds the request as stored, where prompt and context appear twice', () => {
    const fits = ask('p'.repeat(4_000), 'c'.repeat(20_000));
    expect(checkHumanRequestSize(fits)).toBeLessThanOrEqual(MAX_HUMAN_REQUEST_BYTES);
    const choices = Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(500, 'x'));
    const error = thrown(() => checkHumanRequestSize(ask('p'.repeat(4_000), 'c'.repeat(20_000), choices)));
    expect(error).toMatchObject({ status: 400, details: { field: 'humanRequest', limitBytes: MAX_HUMAN_REQUEST_BYTES } });
    expect((error as Error).message).toContain('count twice');
  });
});

describe('decision bounds', () => {
  const gate = { phase: 'pre' as const };
  const question = { phase: 'ask' as const };

  it('bounds editedOutput, userInput and feedback of a gate by maxDecisionBytes', () => {
    const big = { text: 'x'.repeat(300 * 1024) };
    expect(thrown(() => checkDecisionSize(gate, { editedOutput: big }, DEFAULT_RUN_BOUNDS.maxDecisionBytes))).toMatchObject({
      details: { field: 'editedOutput', limitBytes: 256 * 1024 },
    });
    expect(thrown(() => checkDecisionSize(gate, { userInput: big }, DEFAULT_RUN_BOUNDS.maxDecisionBytes))).toMatchObject({ details: { field: 'userInput' } });
    expect(thrown(() => checkDecisionSize(gate, { feedback: 'f'.repeat(2_000) }, 1_024))).toMatchObject({ details: { field: 'feedback', limitBytes: 1_024 } });
    expect(() => checkDecisionSize(gate, { editedOutput: { text: 'x'.repeat(200 * 1024) } }, DEFAULT_RUN_BOUNDS.maxDecisionBytes)).not.toThrow();
  });

  it('bounds the answer to a human request tighter', () => {
    const answer = { response: 'a'.repeat(MAX_HUMAN_REQUEST_ANSWER_BYTES) };
    expect(thrown(() => checkDecisionSize(question, { userInput: answer }, DEFAULT_RUN_BOUNDS.maxDecisionBytes))).toMatchObject({
      details: { field: 'userInput', limitBytes: MAX_HUMAN_REQUEST_ANSWER_BYTES },
    });
    // The schema's longest feedback (10 000 characters) fits.
    expect(() => checkDecisionSize(question, { feedback: 'f'.repeat(10_000) }, DEFAULT_RUN_BOUNDS.maxDecisionBytes)).not.toThrow();
  });
});

describe('humanRequestRefusal', () => {
  const bounds: RunBounds = { maxOpenHumanRequests: 3, maxStoredRequirements: 5, humanRequestRunBudgetBytes: 1024 * 1024, maxDecisionBytes: 1024 };
  const open = { phase: 'ask' as const, decidedAt: null };
  const answered = { phase: 'ask' as const, decidedAt: NOW };
  const gate = { phase: 'pre' as const, decidedAt: null };

  it('refuses past the open human requests, counting neither decided ones nor gates', () => {
    expect(humanRequestRefusal({ pendingRequirements: [open, open, answered, gate] }, 100, bounds)).toBeNull();
    const refusal = humanRequestRefusal({ pendingRequirements: [open, open, open] }, 100, bounds);
    expect(refusal).toBeInstanceOf(LimitReachedError);
    expect(refusal).toMatchObject({ status: 409, code: 'limit_reached', details: { limit: 'openHumanRequests', max: 3, current: 3 } });
    expect(refusal?.message).toContain('SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS=3');
  });

  it('refuses past the stored requirements, gates and decided requests included', () => {
    expect(humanRequestRefusal({ pendingRequirements: [answered, answered, gate, gate, open] }, 100, bounds)).toMatchObject({
      details: { limit: 'storedRequirements', max: 5, current: 5 },
    });
  });

  it('refuses when the document, the request and room for every open answer (this one included) would pass the budget', () => {
    const run = { pendingRequirements: [open], note: 'x'.repeat(1024 * 1024 - 2 * HUMAN_REQUEST_ANSWER_RESERVE_BYTES) };
    expect(humanRequestRefusal(run, 1, bounds)).toMatchObject({ details: { limit: 'humanRequestRunBudgetBytes', max: 1024 * 1024 } });
    const smaller = { ...run, note: 'x'.repeat(1024 * 1024 - 2 * HUMAN_REQUEST_ANSWER_RESERVE_BYTES - 2_000) };
    expect(humanRequestRefusal(smaller, 1, bounds)).toBeNull();
  });

  it('with the defaults, 100 open requests of the largest size fit the budget', () => {
    expect(DEFAULT_RUN_BOUNDS.maxOpenHumanRequests * (MAX_HUMAN_REQUEST_BYTES + HUMAN_REQUEST_ANSWER_RESERVE_BYTES)).toBeLessThanOrEqual(
      DEFAULT_RUN_BOUNDS.humanRequestRunBudgetBytes,
    );
  });
});
