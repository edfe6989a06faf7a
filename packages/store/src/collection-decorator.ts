/**
 * One way to put behaviour around every call of the store port: {@link decorateCollection} wraps
 * each {@link DocumentCollection} method in an `around` function and {@link decorateStore} does so
 * for every collection of a {@link DocumentStore}. The timing decorator (timed-store.ts) and the
 * MongoDB backend's error translation (mongo/transient-errors.ts) are built on it.
 */
import type { Document, DocumentCollection, DocumentStore } from './document-collection.ts';

/** The operations of the port (every method of {@link DocumentCollection}). */
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

/** One operation of the port. */
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

/**
 * Runs one call of the port: `call` performs it (it may throw synchronously or reject); the
 * function returns the result the caller sees.
 */
export type AroundCall = <R>(operation: StoreOperation, call: () => Promise<R>) => Promise<R>;

/** `inner` with every method run through `around`; `collectionName` passes through. */
export function decorateCollection<T extends Document>(inner: DocumentCollection<T>, around: AroundCall): DocumentCollection<T> {
  return {
    collectionName: inner.collectionName,
    insertOne: (doc) => around('insertOne', () => inner.insertOne(doc)),
    findOne: (filter, options) => around('findOne', () => inner.findOne(filter, options)),
    find: (filter, options) => around('find', () => inner.find(filter, options)),
    countDocuments: (filter) => around('countDocuments', () => inner.countDocuments(filter)),
    findOneAndUpdate: (filter, update, options) => around('findOneAndUpdate', () => inner.findOneAndUpdate(filter, update, options)),
    updateOne: (filter, update, options) => around('updateOne', () => inner.updateOne(filter, update, options)),
    updateMany: (filter, update, options) => around('updateMany', () => inner.updateMany(filter, update, options)),
    deleteOne: (filter) => around('deleteOne', () => inner.deleteOne(filter)),
    deleteMany: (filter) => around('deleteMany', () => inner.deleteMany(filter)),
    createIndex: (keys, options) => around('createIndex', () => inner.createIndex(keys, options)),
    dropIndex: (name) => around('dropIndex', () => inner.dropIndex(name)),
  };
}

/**
 * `store` whose collections are decorated by `aroundFor(collectionName)`, each wrapped once per
 * name. `backend`, `close()` and `compact()` pass through undecorated.
 */
export function decorateStore(store: DocumentStore, aroundFor: (collection: string) => AroundCall): DocumentStore {
  const wrapped = new Map<string, DocumentCollection>();
  return {
    backend: store.backend,
    close: () => store.close(),
    compact: () => store.compact(),
    collection<T extends Document = Document>(name: string): DocumentCollection<T> {
      let collection = wrapped.get(name);
      if (collection === undefined) {
        const inner = store.collection(name);
        collection = decorateCollection(inner, aroundFor(inner.collectionName));
        wrapped.set(name, collection);
      }
      return collection as unknown as DocumentCollection<T>;
    },
  };
}
