/**
 * A timing decorator of the store port: {@link timedStore} wraps a {@link DocumentStore} so that
 * every {@link DocumentCollection} call reports how long it took (wall time, seconds), which
 * collection and which operation it was, and whether it failed. The Prometheus metrics
 * (`switchyard_store_operation_duration_seconds`, docs/operations/metrics.md) observe the store
 * here; repositories and backends know nothing of it.
 */
import { performance } from 'node:perf_hooks';
import type { Document, DocumentCollection, DocumentStore } from './document-collection.ts';

/** The operations of the port that are timed (every method of {@link DocumentCollection}). */
export const STORE_OPERATIONS = [
  'insertOne',
  'findOne',
  'find',
  'countDocuments',
  'findOneAndUpdate',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'createIndex',
  'dropIndex',
] as const;

/** One timed operation. */
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

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
  const wrapped = new Map<string, DocumentCollection>();
  return {
    backend: store.backend,
    close: () => store.close(),
    compact: () => store.compact(),
    collection<T extends Document = Document>(name: string): DocumentCollection<T> {
      let collection = wrapped.get(name);
      if (collection === undefined) {
        collection = timedCollection(store.collection(name), observe, now);
        wrapped.set(name, collection);
      }
      return collection as unknown as DocumentCollection<T>;
    },
  };
}

function timedCollection(inner: DocumentCollection, observe: StoreTimingObserver, now: () => number): DocumentCollection {
  const collection = inner.collectionName;
  const report = (operation: StoreOperation, started: number, failed: boolean): void => {
    try {
      observe({ collection, operation, seconds: (now() - started) / 1000, failed });
    } catch {
      // an observer bug must not fail a store call
    }
  };
  const timed = <R>(operation: StoreOperation, call: () => Promise<R>): Promise<R> => {
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
  return {
    collectionName: collection,
    insertOne: (doc) => timed('insertOne', () => inner.insertOne(doc)),
    findOne: (filter, options) => timed('findOne', () => inner.findOne(filter, options)),
    find: (filter, options) => timed('find', () => inner.find(filter, options)),
    countDocuments: (filter) => timed('countDocuments', () => inner.countDocuments(filter)),
    findOneAndUpdate: (filter, update, options) => timed('findOneAndUpdate', () => inner.findOneAndUpdate(filter, update, options)),
    updateOne: (filter, update, options) => timed('updateOne', () => inner.updateOne(filter, update, options)),
    updateMany: (filter, update, options) => timed('updateMany', () => inner.updateMany(filter, update, options)),
    deleteOne: (filter) => timed('deleteOne', () => inner.deleteOne(filter)),
    deleteMany: (filter) => timed('deleteMany', () => inner.deleteMany(filter)),
    createIndex: (keys, options) => timed('createIndex', () => inner.createIndex(keys, options)),
    dropIndex: (name) => timed('dropIndex', () => inner.dropIndex(name)),
  };
}
