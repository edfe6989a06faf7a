/**
 * A timing decorator of the store port: {@link timedStore} wraps a {@link DocumentStore} so that
 * every {@link DocumentCollection} call reports how long it took (wall time, seconds), which
 * collection and which operation it was, and whether it failed. The Prometheus metrics
 * (`switchyard_store_operation_duration_seconds`, docs/operations/metrics.md) observe the store
 * here; repositories and backends know nothing of it.
 */
import { performance } from 'node:perf_hooks';
import type { DocumentStore } from './document-collection.ts';
import { decorateStore, type AroundCall, type StoreOperation } from './collection-decorator.ts';

export { STORE_OPERATIONS, type StoreOperation } from './collection-decorator.ts';

/** One call of the port as the observer sees it. */
export interface StoreTiming {
  /** The collection's name (`workflow_runs`, `run_events`, ...). */
  collection: string;
  operation: StoreOperation;
  /** Wall time from the call to its settling, seconds. */
  seconds: number;
  /** True when the call rejected. */
  failed: boolean;
}

/** Receives every {@link StoreTiming}; must not throw (a throw is swallowed, the call's result stands). */
export type StoreTimingObserver = (timing: StoreTiming) => void;

/**
 * `store` with every collection call timed and reported to `observe`. `backend`, `close()` and
 * `compact()` pass through untimed. Collections are wrapped once per name. `now` returns
 * milliseconds (default `performance.now`; tests pass their own).
 */
export function timedStore(store: DocumentStore, observe: StoreTimingObserver, now: () => number = () => performance.now()): DocumentStore {
  return decorateStore(store, (collection) => timedCall(collection, observe, now));
}

function timedCall(collection: string, observe: StoreTimingObserver, now: () => number): AroundCall {
  const report = (operation: StoreOperation, started: number, failed: boolean): void => {
    try {
      observe({ collection, operation, seconds: (now() - started) / 1000, failed });
    } catch {
      // an observer bug must not fail a store call
    }
  };
  return <R>(operation: StoreOperation, call: () => Promise<R>): Promise<R> => {
    const started = now();
    let promise: Promise<R>;
    try {
      promise = call();
    } catch (error) {
      report(operation, started, true);
      return Promise.reject(error);
    }
    return promise.then(
      (result) => {
        report(operation, started, false);
        return result;
      },
      (error: unknown) => {
        report(operation, started, true);
        throw error;
      },
    );
  };
}
