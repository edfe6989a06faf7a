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
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
