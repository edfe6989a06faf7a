/**
 * Errors of the store that callers (the API, the engine) treat specially, whatever the backend.
 */

/**
 * The store cannot accept writes right now (e.g. the embedded store's disk is full, or a write to
 * its journal failed and it has not yet recovered). Nothing was written. The API answers 503
 * `store_unavailable`; the engine releases the run for recovery instead of failing it.
 * `retryAfterMs` is a hint for clients (milliseconds).
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly retryAfterMs: number;

  /** `message` says what is wrong and what would fix it (e.g. "disk full on /data"). */
  constructor(message: string, options: { cause?: unknown; retryAfterMs?: number } = {}) {
    super(message, { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs ?? 5_000;
  }
}

/** True when `error` is a {@link StoreUnavailableError} (also across module copies, by name). */
export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError || (error instanceof Error && error.name === 'StoreUnavailableError');
}
