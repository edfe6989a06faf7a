/**
 * The bounds on concurrent executor calls (`call-limiter.ts`): calls beyond a bound wait in line,
 * first come first served; a waiting call leaves the line when its signal aborts (cancel, timeout)
 * without ever running; calls to a busy target never hold slots calls to other targets need.
 */
import { describe, expect, it } from 'vitest';
import { timeoutReason } from './abort.ts';
import { CallLimiter, Semaphore } from './call-limiter.ts';
import { ExecutorError } from '../types.ts';
import type { Executor, ExecutorCall } from '../types.ts';

/** A task that runs until released; `started` tells whether it began. */
function gate(): { task: () => Promise<string>; started: () => boolean; release: (value?: string) => void } {
  let started = false;
  let release!: (value: string) => void;
  const done = new Promise<string>((resolve) => (release = resolve));
  return {
    task: () => {
      started = true;
      return done;
    },
    started: () => started,
    release: (value = 'done') => release(value),
  };
}

/** Lets pending promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Semaphore', () => {
  it('hands out its slots, then serves waiters in order as slots come back', async () => {
    const semaphore = new Semaphore(2);
    const signal = new AbortController().signal;
    const first = await semaphore.acquire(signal);
    await semaphore.acquire(signal);
    const order: string[] = [];
    const third = semaphore.acquire(signal).then((release) => (order.push('third'), release));
    const fourth = semaphore.acquire(signal).then((release) => (order.push('fourth'), release));
    await settle();
    expect([semaphore.active, semaphore.waiting, order]).toEqual([2, 2, []]);
    first();
    first(); // giving back twice frees one slot only
    await settle();
    expect(order).toEqual(['third']);
    (await third)();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
    expect(semaphore.active).toBe(2);
  });

  it('drops a waiter whose signal aborts, which then takes no slot', async () => {
    const semaphore = new Semaphore(1);
    const release = await semaphore.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(ExecutorError);
    await expect(waiting).rejects.toThrow('cancelled');
    expect(semaphore.waiting).toBe(0);
    release();
    expect(semaphore.active).toBe(0);
    await expect(semaphore.acquire(AbortSignal.abort())).rejects.toThrow('cancelled');
  });
});

describe('CallLimiter', () => {
  it('keeps at most maxCallsPerTarget calls in flight to one target and maxCalls in all', async () => {
    const limiter = new CallLimiter({ maxCalls: 3, maxCallsPerTarget: 2 });
    const signal = new AbortController().signal;
    const toA = Array.from({ length: 4 }, gate);
    const toB = Array.from({ length: 2 }, gate);
    const results = [...toA.map((g) => limiter.run('a', signal, g.task)), ...toB.map((g) => limiter.run('b', signal, g.task))];
    await settle();
    // Two to `a` (its cap); the third instance slot goes to `b`, not to a call waiting for `a`.
    expect(toA.map((g) => g.started())).toEqual([true, true, false, false]);
    expect(toB.map((g) => g.started())).toEqual([true, false]);
    // The second call to `b` holds `b`'s slot, waiting for an instance slot.
    expect([limiter.active('a'), limiter.active('b')]).toEqual([2, 2]);
    toA[0]!.release();
    await settle();
    // The freed instance slot goes to the call waiting for one longest (the second to `b`); the
    // freed `a` slot to the next call to `a`, which now waits for an instance slot.
    expect(toB[1]!.started()).toBe(true);
    expect(toA.map((g) => g.started())).toEqual([true, true, false, false]);
    toB[0]!.release();
    await settle();
    expect(toA.map((g) => g.started())).toEqual([true, true, true, false]);
    for (const g of [...toA, ...toB]) g.release();
    await expect(Promise.all(results)).resolves.toHaveLength(6);
    expect([limiter.active('a'), limiter.active('b')]).toEqual([0, 0]);
  });

  it('limits the calls of a wrapped executor by its target; a call cancelled while waiting never runs', async () => {
    const limiter = new CallLimiter({ maxCalls: 10, maxCallsPerTarget: 1 });
    const held = gate();
    let invoked = 0;
    const executor: Executor = {
      kind: 'http',
      key: 'hook',
      target: 'http://127.0.0.1:1',
      timeoutMs: 1000,
      invoke: () => (++invoked === 1 ? held.task() : Promise.resolve('second')),
    };
    const wrapped = limiter.wrap(executor);
    const call = (signal: AbortSignal): ExecutorCall => ({ arguments: {}, input: null, attempt: 1, signal, context: { runId: 'r', nodeId: 'n', nodeName: 'n' } });
    const first = wrapped.invoke(call(new AbortController().signal));
    const cancelled = new AbortController();
    const queued = wrapped.invoke(call(cancelled.signal));
    const timedOut = new AbortController();
    const late = wrapped.invoke(call(timedOut.signal));
    await settle();
    cancelled.abort();
    timedOut.abort(timeoutReason(1500));
    await expect(queued).rejects.toThrow('cancelled');
    await expect(late).rejects.toThrow('timed out after 1.5 s');
    held.release('first');
    await expect(first).resolves.toBe('first');
    expect(invoked).toBe(1);
    // Free again: the next call runs at once.
    await expect(wrapped.invoke(call(new AbortController().signal))).resolves.toBe('second');
  });

  it('leaves an executor without a target (in-process) as it is', () => {
    const builtin: Executor = { kind: 'builtin', key: 'echo', timeoutMs: 1000, invoke: async () => null };
    expect(new CallLimiter({ maxCalls: 1 }).wrap(builtin)).toBe(builtin);
  });
});
