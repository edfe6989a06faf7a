import { ExecutorError } from '../types.ts';

/** The error an executor rejects with when its call's signal aborts for cancellation. Not retryable. */
export function cancelledError(signal: AbortSignal): ExecutorError {
  return new ExecutorError('cancelled', { retryable: false, cause: signal.reason });
}

/**
 * The abort reason of a call that ran out of time: a `TimeoutError` DOMException, like the reason
 * of `AbortSignal.timeout()`, whose message is `timed out after <N> s`.
 */
export function timeoutReason(ms: number): DOMException {
  return new DOMException(`timed out after ${formatSeconds(ms)} s`, 'TimeoutError');
}

/** True when `reason` says the call ran out of time (see {@link timeoutReason}; `AbortSignal.timeout()` too). */
export function isTimeoutReason(reason: unknown): reason is DOMException {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}

/**
 * The error an executor rejects with when its call's signal aborts: for a timeout (see
 * {@link timeoutReason}) a retryable `<subject> timed out after N s` (`<subject> timed out` for a
 * reason that does not say how long), else {@link cancelledError}.
 */
export function abortedError(signal: AbortSignal, subject?: string): ExecutorError {
  const reason: unknown = signal.reason;
  if (!isTimeoutReason(reason)) return cancelledError(signal);
  // Our own reasons say how long; others (e.g. `AbortSignal.timeout()`'s) do not.
  const what = reason.message.startsWith('timed out') ? reason.message : 'timed out';
  return new ExecutorError(subject === undefined ? what : `${subject} ${what}`, { retryable: true });
}

/**
 * A controller whose signal also aborts when any of `sources` does (with that source's reason),
 * like `AbortSignal.any([...sources, controller.signal])` but without its cost (about 10 µs and
 * weak references per signal on Node 20: too much for one executor call of a fast step).
 * `unlink()` must be called when the call is over: it removes the listeners from the sources.
 */
export function linkedAbortController(sources: readonly AbortSignal[]): { controller: AbortController; unlink(): void } {
  const controller = new AbortController();
  const links: Array<[AbortSignal, () => void]> = [];
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const forward = (): void => controller.abort(source.reason);
    source.addEventListener('abort', forward, { once: true });
    links.push([source, forward]);
  }
  return {
    controller,
    unlink: () => {
      for (const [source, forward] of links) source.removeEventListener('abort', forward);
    },
  };
}

/** `ms` as seconds for messages: `5`, `0.2`, `1.5` (at most three decimals). */
export function formatSeconds(ms: number): string {
  return String(Math.round(ms) / 1000);
}

/**
 * Settles like `promise`, unless `signal` aborts first: then it rejects at once with
 * {@link abortedError} (also when already aborted). `promise` itself keeps running; use this to
 * stop waiting for shared work (a connection, a tool list) that other callers still need.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortedError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
