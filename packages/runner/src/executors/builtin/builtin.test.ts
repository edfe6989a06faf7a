import { describe, expect, it } from 'vitest';
import { createBuiltinExecutor } from './builtin.ts';
import { ExecutorError } from '../types.ts';
import type { ExecutorCall } from '../types.ts';

function call(args: Record<string, unknown>, overrides: Partial<ExecutorCall> = {}): ExecutorCall {
  return {
    arguments: args,
    input: { from: 'previous step' },
    attempt: 1,
    signal: new AbortController().signal,
    context: { runId: 'run-1', nodeId: 'node-1', nodeName: 'step' },
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<ExecutorError> {
  const error: unknown = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ExecutorError);
  return error as ExecutorError;
}

describe('builtin echo', () => {
  it('resolves with the arguments and the step input', async () => {
    const echo = createBuiltinExecutor('builtin.echo', 'echo', 60_000);
    expect(echo).toMatchObject({ kind: 'builtin', key: 'builtin.echo' });
    await expect(echo.invoke(call({ a: 1 }))).resolves.toEqual({ arguments: { a: 1 }, input: { from: 'previous step' } });
  });
});

describe('builtin fail', () => {
  const fail = createBuiltinExecutor('flaky', 'fail', 60_000);

  it('rejects every attempt with a retryable error by default', async () => {
    for (const attempt of [1, 2, 5]) {
      const error = await rejection(fail.invoke(call({}, { attempt })));
      expect(error.retryable).toBe(true);
      expect(error.message).toBe(`builtin fail: attempt ${attempt} failed`);
    }
  });

  it('fails attempts up to `times`, then succeeds like echo', async () => {
    const args = { times: 2, message: 'boom' };
    expect((await rejection(fail.invoke(call(args, { attempt: 1 })))).message).toBe('boom');
    expect((await rejection(fail.invoke(call(args, { attempt: 2 })))).retryable).toBe(true);
    await expect(fail.invoke(call(args, { attempt: 3 }))).resolves.toEqual({ arguments: args, input: { from: 'previous step' } });
  });

  it('rejects a non-number `times` as not retryable', async () => {
    const error = await rejection(fail.invoke(call({ times: '2' })));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('arguments.times must be a finite number, got "2"');
  });
});

describe('builtin sleep', () => {
  const sleep = createBuiltinExecutor('sleep', 'sleep', 60_000);
  const activeTimers = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

  it('waits arguments.ms, then resolves like echo', async () => {
    const started = performance.now();
    await expect(sleep.invoke(call({ ms: 60 }))).resolves.toEqual({ arguments: { ms: 60 }, input: { from: 'previous step' } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('waits 100 ms by default', async () => {
    const started = performance.now();
    await sleep.invoke(call({}));
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('rejects promptly with a non-retryable "cancelled" error on abort, leaving no timer', async () => {
    const timersBefore = activeTimers();
    const controller = new AbortController();
    const started = performance.now();
    const result = sleep.invoke(call({ ms: 60_000 }, { signal: controller.signal }));
    expect(activeTimers()).toBe(timersBefore + 1);
    setTimeout(() => controller.abort(new Error('run cancelled')), 20);
    const error = await rejection(result);
    expect(error).toMatchObject({ message: 'cancelled', retryable: false });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(activeTimers()).toBe(timersBefore);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const error = await rejection(sleep.invoke(call({ ms: 60_000 }, { signal: AbortSignal.abort() })));
    expect(error).toMatchObject({ message: 'cancelled', retryable: false });
  });

  it('rejects an out-of-range ms as not retryable', async () => {
    const error = await rejection(sleep.invoke(call({ ms: -1 })));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/arguments\.ms must be between 0 and/);
  });
});
