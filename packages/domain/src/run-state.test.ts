import { describe, expect, it } from 'vitest';
import { buildAskRequirement } from './hitl.ts';
import type { RequirementRecord, RunRecord } from './records.ts';
import { deriveRunState, ORPHANED_AFTER_MS, type RunStateInput } from './run-state.ts';
import type { RunStatus } from './run-status.ts';
import { pendingRequirementsOf } from './views.ts';

const NOW = Date.parse('2026-11-28T10:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();

/** A running run with a live lease and nothing pending, changed by `over`. */
function input(over: Partial<RunStateInput> = {}): RunStateInput {
  return { runId: 'r1', status: 'running', leaseExpiresAt: NOW + 30_000, heartbeatAt: NOW - 1_000, pendingRequirements: [], now: NOW, ...over };
}

const gate = { stepId: 'review', requestedAt: at(NOW - 5_000), phase: 'pre', nodeId: 'review' };
const ask = { stepId: 'agent:ask-9f86d081884c', requestedAt: at(NOW - 3_000), phase: 'ask', nodeId: 'agent' };

describe('deriveRunState', () => {
  it('shows a running run whose step waits on a human request as waiting-approval, naming the node and the request', () => {
    expect(deriveRunState(input({ pendingRequirements: [ask] }))).toEqual({
      runId: 'r1',
      state: 'waiting-approval',
      blocked: { kind: 'approval', nodeId: 'agent', requestId: 'agent:ask-9f86d081884c', requestedAt: ask.requestedAt },
      computedAt: at(NOW),
    });
  });

  it('names the oldest open human request when several are open', () => {
    const later = { ...ask, stepId: 'other:ask-000000000001', nodeId: 'other', requestedAt: at(NOW - 1_000) };
    expect(deriveRunState(input({ pendingRequirements: [ask, later] })).blocked).toMatchObject({ nodeId: 'agent', requestId: ask.stepId });
  });

  it('lets a human request win over a step in retry backoff (the backoff ends by itself)', () => {
    const view = deriveRunState(input({ pendingRequirements: [ask], retryWaits: [{ nodeId: 'flaky', wakeAt: NOW + 5_000 }] }));
    expect(view.state).toBe('waiting-approval');
    expect(view.blocked).toMatchObject({ kind: 'approval', requestId: ask.stepId });
  });

  it('still shows a retry backoff as waiting-timer when no human request is open', () => {
    expect(deriveRunState(input({ retryWaits: [{ nodeId: 'flaky', wakeAt: NOW + 5_000 }] })).blocked).toEqual({ kind: 'timer', nodeId: 'flaky', wakeAt: at(NOW + 5_000) });
  });

  it('is running when nothing is pending and nothing waits', () => {
    expect(deriveRunState(input()).state).toBe('running');
  });

  it('keeps a gate of a run awaiting approval in its former shape (stepId as nodeId, no requestId), before an older human request', () => {
    const olderAsk = { ...ask, requestedAt: at(NOW - 9_000) };
    expect(deriveRunState(input({ status: 'awaiting_approval', leaseExpiresAt: null, pendingRequirements: [olderAsk, gate] })).blocked).toEqual({
      kind: 'approval',
      nodeId: 'review',
      requestedAt: gate.requestedAt,
    });
  });

  it('names the human request of a run awaiting approval that has no gate pending', () => {
    expect(deriveRunState(input({ status: 'awaiting_approval', leaseExpiresAt: null, pendingRequirements: [ask] })).blocked).toEqual({
      kind: 'approval',
      nodeId: 'agent',
      requestId: ask.stepId,
      requestedAt: ask.requestedAt,
    });
  });

  it('reports an expired lease as stale (then orphaned) even while a human request is open: nobody is polling for the answer', () => {
    expect(deriveRunState(input({ leaseExpiresAt: NOW - 1_000, pendingRequirements: [ask] })).state).toBe('stale');
    expect(deriveRunState(input({ leaseExpiresAt: NOW - ORPHANED_AFTER_MS - 1, pendingRequirements: [ask] })).state).toBe('orphaned');
  });

  it('keeps paused and ended runs as they are, whatever is pending', () => {
    for (const [status, state] of [
      ['paused', 'paused'],
      ['completed', 'succeeded'],
      ['cancelled', 'cancelled'],
      ['failed', 'failed'],
    ] as const) {
      expect(deriveRunState(input({ status, pendingRequirements: [ask] }))).toEqual({ runId: 'r1', state, computedAt: at(NOW) });
    }
  });
});

describe('pendingRequirementsOf', () => {
  const askRecord = buildAskRequirement({
    node: { id: 'agent', name: 'Agent', nodeType: 'step' },
    iterationPath: '',
    token: '9f86d081884c',
    prompt: 'Which region?',
    context: null,
    choices: ['eu', 'us'],
    timeoutSeconds: null,
    now: new Date(NOW),
  });
  const gateRecord: RequirementRecord = { ...askRecord, stepId: 'review', gateKey: 'review@#pre#0', nodeId: 'review', phase: 'pre', prompt: undefined, context: undefined };
  const run = (status: RunStatus, requirements: RequirementRecord[]): Pick<RunRecord, 'status' | 'pendingRequirements'> => ({ status, pendingRequirements: requirements });

  it('lists open human requests whatever the status of a run that has not ended', () => {
    for (const status of ['pending', 'running', 'paused'] as const) {
      expect(pendingRequirementsOf(run(status, [gateRecord, askRecord])).map((r) => r.stepId)).toEqual([askRecord.stepId]);
    }
  });

  it('lists gates and human requests in the order raised while the run awaits approval', () => {
    expect(pendingRequirementsOf(run('awaiting_approval', [gateRecord, askRecord])).map((r) => r.stepId)).toEqual(['review', askRecord.stepId]);
  });

  it('drops a human request once it is decided, and everything once the run has ended', () => {
    const answered: RequirementRecord = { ...askRecord, resolution: 'route_select', selectedChoices: ['eu'], decidedBy: 'human', decidedAt: new Date(NOW) };
    expect(pendingRequirementsOf(run('running', [answered]))).toEqual([]);
    for (const status of ['completed', 'failed', 'cancelled'] as const) expect(pendingRequirementsOf(run(status, [askRecord]))).toEqual([]);
  });
});
