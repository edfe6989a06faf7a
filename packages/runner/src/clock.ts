/**
 * Time as a dependency (STYLE.md §5 "Runner"): the engine never calls `Date.now()` or
 * `setTimeout` directly, so tests can control time.
 */

/** Current time and abortable waiting. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` milliseconds; rejects with the signal's reason when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      // setTimeout holds at most 2^31-1 ms (about 24.8 days); longer waits are capped there.
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.min(ms, 2 ** 31 - 1));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
