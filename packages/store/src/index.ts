export * from './document-collection.ts';
export { StoreUnavailableError, isStoreUnavailable } from './errors.ts';
export { openStore, type OpenStoreOptions, type StoreLogger } from './open-store.ts';
export { openMongoStore } from './mongo/mongo-store.ts';
export { DEFAULT_COMPACTION_MIN_BYTES, openEmbeddedStore, type EmbeddedStoreOptions } from './embedded/embedded-store.ts';
export * from './repositories/index.ts';
export { STORE_OPERATIONS, timedStore, type StoreOperation, type StoreTiming, type StoreTimingObserver } from './timed-store.ts';
