/**
 * Bounds on concurrent executor calls (security issue, item 9): at most `maxCalls` calls in flight
 * in one registry (one service instance), and at most `maxCallsPerTarget` to one target (an HTTP
 * origin, an A2A agent's origin, an MCP server: {@link Executor.target}). A call over a bound waits
 * in line (first come, first served) until a slot frees, or until its signal aborts (cancel, step
 * timeout, shutdown): then it leaves the line at once, having sent nothing. In-process executors
 * (`builtin`, no target) are not limited.
 *
 * The per-target slot is taken first, then the instance slot, so calls waiting for a busy target
 * never hold instance slots that calls to other targets could use.
 */
import { abortedError } from './abort.ts';
import type { Executor, ExecutorCall } from '../types.ts';

/** Default of `SWITCHYARD_MAX_CONCURRENT_CALLS`: executor calls in flight per service instance. */
export const DEFAULT_MAX_CONCURRENT_CALLS = 256;

/** Default of `SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN`: executor calls in flight per target. */
export const DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN = 32;

/** A counting semaphore whose waiters leave the line when their signal aborts. */
export class Semaphore {
  readonly #limit: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  /** `limit`: slots, at least 1. */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a semaphore needs a positive integer limit, got ${limit}`);
    this.#limit = limit;
  }

  /** Slots taken. */
  get active(): number {
    return this.#active;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Takes a slot, waiting in line while none is free. Resolves with the function that gives it
   * back (idempotent). Rejects with `abortedError(signal)` when `signal` aborts first (also when
   * already aborted), taking no slot.
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(abortedError(signal));
    if (this.#active < this.#limit) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(this.#releaser());
      };
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(grant);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(abortedError(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(grant);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes to the first in line, if any; else it is free.
      const next = this.#waiting.shift();
      if (next === undefined) this.#active--;
      else next();
    };
  }
}

/** Bounds of a {@link CallLimiter}. */
export interface CallLimits {
  /** Most calls in flight in all (default {@link DEFAULT_MAX_CONCURRENT_CALLS}). */
  maxCalls?: number;
  /** Most calls in flight to one target (default {@link DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN}). */
  maxCallsPerTarget?: number;
}

/** The bounds on concurrent calls of one registry (see the module comment). */
export class CallLimiter {
  readonly maxCalls: number;
  readonly maxCallsPerTarget: number;
  readonly #all: Semaphore;
  readonly #targets = new Map<string, Semaphore>();

  constructor(limits: CallLimits = {}) {
    this.maxCalls = limits.maxCalls ?? DEFAULT_MAX_CONCURRENT_CALLS;
    this.maxCallsPerTarget = limits.maxCallsPerTarget ?? DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN;
    this.#all = new Semaphore(this.maxCalls);
  }

  /** Calls holding a slot of `target`: running, or waiting for an instance slot (0 for a target not called now). */
  active(target: string): number {
    return this.#targets.get(target)?.active ?? 0;
  }

  /**
   * Runs `task` once a slot for `target` and one of the instance are free; gives both back when
   * it settles. Rejects with `abortedError(signal)` when `signal` aborts while waiting (the task
   * never runs).
   */
  async run<T>(target: string, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    let semaphore = this.#targets.get(target);
    if (semaphore === undefined) this.#targets.set(target, (semaphore = new Semaphore(this.maxCallsPerTarget)));
    const releaseTarget = await semaphore.acquire(signal);
    try {
      const releaseAll = await this.#all.acquire(signal);
      try {
        return await task();
      } finally {
        releaseAll();
      }
    } finally {
      releaseTarget();
      // Idle targets are forgotten, so that the map does not grow with every origin ever called.
      if (semaphore.active === 0 && semaphore.waiting === 0) this.#targets.delete(target);
    }
  }

  /** `executor` with its calls limited (see {@link run}); an executor without a target as it is. */
  wrap(executor: Executor): Executor {
    const target = executor.target;
    if (target === undefined) return executor;
    // Everything the executor declares (its token binding too), only the call waits for a slot.
    return { ...executor, invoke: (call: ExecutorCall) => this.run(target, call.signal, () => executor.invoke(call)) };
  }
}
