import { ExecutorError } from './types.ts';

/** The error an executor rejects with when its call's signal aborts. Not retryable. */
export function cancelledError(signal: AbortSignal): ExecutorError {
  return new ExecutorError('cancelled', { retryable: false, cause: signal.reason });
}

/**
 * Settles like `promise`, unless `signal` aborts first: then it rejects at once with
 * {@link cancelledError} (also when already aborted). `promise` itself keeps running; use this to
 * stop waiting for shared work (a connection, a tool list) that other callers still need.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelledError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelledError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
