/**
 * MongoDB errors that say "not now" rather than "never": no reachable server, a dropped
 * connection, a primary stepping down or an election in progress (a failover). The MongoDB
 * backend reports them as {@link StoreUnavailableError}, as the embedded store reports a full
 * disk, so that every caller treats a store outage one way: the API answers 503
 * `store_unavailable` with `Retry-After`, the engine releases the run for recovery
 * (docs/operations/production.md "When something fails"). The driver has already retried a
 * retryable read or write once when the error reaches us.
 */
import { MongoNetworkError, MongoNotConnectedError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
import { StoreUnavailableError } from '../errors.ts';
import type { AroundCall, StoreOperation } from '../collection-decorator.ts';

/**
 * Server error codes of a replica-set state change or shutdown (MongoDB's error_codes.yml):
 * HostUnreachable 6, HostNotFound 7, NetworkTimeout 89, ShutdownInProgress 91, PrimarySteppedDown
 * 189, SocketException 9001, NotWritablePrimary 10107, InterruptedAtShutdown 11600,
 * InterruptedDueToReplStateChange 11602, NotPrimaryNoSecondaryOk 13435, NotPrimaryOrSecondary 13436.
 */
const TRANSIENT_CODES = new Set([6, 7, 89, 91, 189, 9001, 10107, 11600, 11602, 13435, 13436]);

/** How long a client is told to wait, ms (`Retry-After` says it in seconds): about one election. */
const RETRY_AFTER_MS = 5_000;

/** True when `error` is a MongoDB error of an outage or failover (see the module comment). */
export function isTransientMongoError(error: unknown): boolean {
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError
  ) {
    return true;
  }
  return error instanceof MongoServerError && (TRANSIENT_CODES.has(Number(error.code)) || error.hasErrorLabel('RetryableWriteError'));
}

/**
 * Runs one call of the port and rethrows an outage error of the driver as a
 * {@link StoreUnavailableError} (the driver's error kept as `cause`); any other error as it is.
 */
export const translateTransientErrors: AroundCall = async <R>(operation: StoreOperation, call: () => Promise<R>): Promise<R> => {
  try {
    return await call();
  } catch (error) {
    if (!isTransientMongoError(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError(`MongoDB is unavailable (${operation} failed: ${reason}); retry shortly`, { cause: error, retryAfterMs: RETRY_AFTER_MS });
  }
};
