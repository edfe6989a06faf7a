import { describe, expect, it } from 'vitest';
import { askOutcomeOf, buildAskRequirement, timeoutDecision, validateDecision, type AskRequest } from './hitl.ts';
import type { RequirementRecord } from './records.ts';

const ADA = { userId: 'u-ada', username: 'ada', via: 'jwt' } as const;
const BOB = { userId: 'u-bob', username: 'bob', via: 'jwt' } as const;

const now = new Date('2026-01-01T00:00:00.000Z');
const ask = (fields: Partial<AskRequest> = {}): RequirementRecord =>
  buildAskRequirement({
    node: { id: 'agent', name: 'Agent', nodeType: 'step' },
    iterationPath: '',
    token: 'abc123',
    prompt: 'Deploy?',
    context: null,
    choices: null,
    timeoutSeconds: null,
    now,
    ...fields,
  });
const decided = (requirement: RequirementRecord, fields: Partial<RequirementRecord>): RequirementRecord => ({ ...requirement, decidedAt: now, ...fields });

describe('human requests (phase ask)', () => {
  it('are addressed apart from the gates of their node, and timed from the moment they are made', () => {
    const free = ask({ iterationPath: '2/1', context: 'prod cluster', timeoutSeconds: 60 });
    expect(free).toMatchObject({
      stepId: 'agent@2/1:ask-abc123',
      gateKey: 'agent@2/1#ask:abc123#0',
      phase: 'ask',
      requiresUserInput: true,
      requiresRouteSelection: false,
      userInputMessage: 'Deploy?\n\nprod cluster',
      availableChoices: null,
      onTimeout: 'cancel',
      timeoutAt: new Date('2026-01-01T00:01:00.000Z'),
      prompt: 'Deploy?',
      context: 'prod cluster',
    });
    expect(free.userInputSchema).toEqual([{ name: 'response', fieldType: 'str', description: 'Your answer', required: false, value: null, allowedValues: null }]);
    expect(ask({ choices: ['yes', 'no'] })).toMatchObject({ stepId: 'agent:ask-abc123', requiresUserInput: false, requiresRouteSelection: true, availableChoices: ['yes', 'no'], userInputSchema: null, timeoutAt: null });
  });

  it('accept confirm, user_input and reject for free text; route_select of one choice and reject with choices', () => {
    const free = ask();
    const stepId = free.stepId;
    expect(validateDecision(free, { stepId, resolution: 'confirm' }).userInput).toEqual({});
    expect(validateDecision(free, { stepId, resolution: 'user_input', userInput: { response: 'yes' } }).userInput).toEqual({ response: 'yes' });
    expect(() => validateDecision(free, { stepId, resolution: 'user_input', userInput: { response: 3 } })).toThrow(/must be of type str/);
    expect(() => validateDecision(free, { stepId, resolution: 'route_select', selectedChoices: ['yes'] })).toThrow(/not one/);
    expect(validateDecision(free, { stepId, resolution: 'reject', feedback: 'no' }).rejectionFeedback).toBe('no');

    const choice = ask({ choices: ['yes', 'no'] });
    expect(validateDecision(choice, { stepId, resolution: 'route_select', selectedChoices: ['no'] }).selectedChoices).toEqual(['no']);
    expect(() => validateDecision(choice, { stepId, resolution: 'route_select', selectedChoices: ['yes', 'no'] })).toThrow(/allows one choice/);
    expect(() => validateDecision(choice, { stepId, resolution: 'route_select', selectedChoices: ['maybe'] })).toThrow(/Unknown choice/);
    expect(() => validateDecision(choice, { stepId, resolution: 'confirm' })).toThrow(/pick one of its choices with route_select/);
    expect(() => validateDecision(choice, { stepId, resolution: 'user_input', userInput: { response: 'yes' } })).toThrow(/does not/);
  });

  it('tell the asking agent how they ended', () => {
    expect(askOutcomeOf(ask())).toEqual({ status: 'pending', decision: null, response: null, answeredBy: null });
    expect(askOutcomeOf(decided(ask(), { decidedBy: 'human', decidedByUser: ADA, resolution: 'user_input', userInput: { response: 'ship it' } }))).toEqual({
      status: 'answered',
      decision: 'approved',
      response: 'ship it',
      answeredBy: ADA,
    });
    expect(askOutcomeOf(decided(ask(), { decidedBy: 'human', decidedByUser: ADA, resolution: 'confirm', userInput: {} }))).toMatchObject({ decision: 'approved', response: null });
    expect(askOutcomeOf(decided(ask({ choices: ['a', 'b'] }), { decidedBy: 'human', resolution: 'route_select', selectedChoices: ['b'] }))).toMatchObject({
      status: 'answered',
      response: 'b',
    });
    expect(askOutcomeOf(decided(ask(), { decidedBy: 'human', decidedByUser: BOB, resolution: 'reject', rejectionFeedback: 'not now' }))).toEqual({
      status: 'answered',
      decision: 'blocked',
      response: 'not now',
      answeredBy: BOB,
    });
    const timeout = timeoutDecision(ask({ timeoutSeconds: 1 }));
    expect(timeout).toMatchObject({ resolution: 'cancel', decidedBy: 'timeout' });
    expect(askOutcomeOf(decided(ask(), { ...timeout }))).toEqual({ status: 'expired', decision: 'blocked', response: null, answeredBy: null });
    expect(askOutcomeOf(decided(ask(), { decidedBy: 'run_ended', resolution: 'cancel' }))).toEqual({ status: 'cancelled', decision: 'blocked', response: null, answeredBy: null });
  });
});
