/**
 * Time as a dependency (STYLE.md §5 "Runner"): the engine, its lease heartbeat, recovery and the
 * sweepers never call `Date.now()`, `setTimeout` or `setInterval` directly, so tests can drive
 * time with a manual clock (testing/manual-clock.ts) instead of real-time margins.
 */

/** Current time, abortable waiting, and periodic work. Milliseconds throughout. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` milliseconds; rejects with the signal's reason when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `tick` every `ms` milliseconds until the returned function is called. The timer does not
   * keep the process alive. `tick` must not throw (it is not awaited).
   */
  every(ms: number, tick: () => void): () => void;
  /** Calls `fire` once after `ms` milliseconds unless the returned function is called first. Does not keep the process alive. */
  after(ms: number, fire: () => void): () => void;
}

/** Longest wait `setTimeout` holds (2^31-1 ms, about 24.8 days); longer waits are capped there. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The real clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.min(ms, MAX_TIMER_MS));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  after: (ms, fire) => {
    const timer = setTimeout(fire, Math.min(ms, MAX_TIMER_MS));
    timer.unref();
    return () => clearTimeout(timer);
  },
  every: (ms, tick) => {
    const timer = setInterval(tick, Math.min(ms, MAX_TIMER_MS));
    timer.unref();
    return () => clearInterval(timer);
  },
};
