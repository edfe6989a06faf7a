/**
 * Backend selection at start-up (DESIGN.md "Persistence"): MongoDB when a URI is configured,
 * otherwise the embedded store under the data directory.
 */
import type { DocumentStore } from './document-collection.ts';
import { openEmbeddedStore } from './embedded/embedded-store.ts';
import { databaseNameFromUri } from './mongo/database-name.ts';
import { openMongoStore } from './mongo/mongo-store.ts';

/** The logging `openStore` needs (pino-compatible). */
export interface StoreLogger {
  info(obj: object, msg: string): void;
  /** Operator warnings of the embedded store (torn journal tail dropped, failed compaction, lock taken over or lost). */
  warn(obj: object, msg: string): void;
}

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** MongoDB connection string (`MONGODB_URI`); absent or empty selects the embedded backend. */
  mongodbUri?: string;
  /** Data directory of the embedded backend (`DATA_DIR`); unused with MongoDB. */
  dataDir: string;
  /** Where the backend choice is logged; default: console. */
  logger?: StoreLogger;
  /** Embedded backend: journal bytes below which it is not compacted for its size (`SWITCHYARD_COMPACT_JOURNAL_BYTES`; see EmbeddedStoreOptions). */
  compactionMinBytes?: number;
}

const consoleLogger: StoreLogger = { info: (obj, msg) => console.info(msg, obj), warn: (obj, msg) => console.warn(msg, obj) };

/**
 * Opens the configured backend and logs which one is in use (`backend`, plus `database` or
 * `dataDir`; never the URI, which may hold credentials). Rejects as `openMongoStore` or
 * `openEmbeddedStore`.
 */
export async function openStore(options: OpenStoreOptions): Promise<DocumentStore> {
  const { mongodbUri, dataDir, logger = consoleLogger } = options;
  if (mongodbUri) {
    const database = databaseNameFromUri(mongodbUri);
    const store = await openMongoStore(mongodbUri, database);
    logger.info({ backend: 'mongodb', database }, `STORE BACKEND: mongodb (database "${database}")`);
    return store;
  }
  const store = await openEmbeddedStore({ dataDir, compactionMinBytes: options.compactionMinBytes, onWarning: (message) => logger.warn({ backend: 'embedded', dataDir }, message) });
  logger.info(
    { backend: 'embedded', dataDir },
    `STORE BACKEND: embedded (no MONGODB_URI set) - data persisted under ${dataDir}; not for multi-instance deployments`,
  );
  return store;
}
