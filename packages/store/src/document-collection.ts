/**
 * The persistence port of DESIGN.md "Persistence": the narrow slice of a MongoDB collection that
 * repositories are allowed to use. Filter and update documents are the official driver's own
 * types, so the very same documents run on MongoDB (`mongo/`) and on the embedded backend
 * (`embedded/`, mingo).
 *
 * Rules both backends honour:
 * - documents are copied in and out (a caller never shares an object with the store);
 * - a single-document operation is atomic (findOneAndUpdate is a compare-and-set);
 * - a unique-index violation throws an error with `code === 11000` (see {@link isDuplicateKeyError});
 * - there is no multi-document atomicity.
 */
import type { Document, Filter, UpdateFilter, Sort } from 'mongodb';

export type { Document, Filter, UpdateFilter, Sort };

/** Options of {@link DocumentCollection.find}. `skip`/`limit` are document counts. */
export interface FindOptions {
  sort?: Sort;
  skip?: number;
  limit?: number;
  projection?: Document;
}

/** Options of {@link DocumentCollection.findOneAndUpdate}. */
export interface FindOneAndUpdateOptions {
  /** Filters for `$[ident]` positional operators, as in MongoDB. */
  arrayFilters?: Document[];
  /** Insert when nothing matches (fields of equality filters + `$setOnInsert` + update). */
  upsert?: boolean;
  /** Which version to return; default `'after'` (note: the driver's default is 'before'). */
  returnDocument?: 'before' | 'after';
  projection?: Document;
  sort?: Sort;
}

/** Options of {@link DocumentCollection.updateOne} / {@link DocumentCollection.updateMany}. */
export interface UpdateOptions {
  arrayFilters?: Document[];
  upsert?: boolean;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  /** The `_id` of an upserted document, else null. */
  upsertedId: unknown;
}

export interface DeleteResult {
  deletedCount: number;
}

/** Index options of {@link DocumentCollection.createIndex}. */
export interface IndexOptions {
  name?: string;
  unique?: boolean;
  /** Only documents matching this filter are indexed (and checked for uniqueness). */
  partialFilterExpression?: Document;
  /**
   * TTL: MongoDB deletes a document this many seconds after the date in the index's single key
   * field (0: at that date; its background task runs about once a minute). The embedded backend
   * records the option but deletes nothing: callers that rely on expiry sweep as well.
   */
  expireAfterSeconds?: number;
}

/** One collection. Every method rejects with the backend's error; none retries. */
export interface DocumentCollection<T extends Document = Document> {
  readonly collectionName: string;
  /** Inserts a copy of `doc` (which must carry its `_id`). Throws code 11000 on a unique clash. */
  insertOne(doc: T): Promise<void>;
  findOne(filter: Filter<T>, options?: Pick<FindOptions, 'projection' | 'sort'>): Promise<T | null>;
  find(filter: Filter<T>, options?: FindOptions): Promise<T[]>;
  countDocuments(filter: Filter<T>): Promise<number>;
  /** Atomic compare-and-set: returns the matched document (after the update by default) or null. */
  findOneAndUpdate(filter: Filter<T>, update: UpdateFilter<T>, options?: FindOneAndUpdateOptions): Promise<T | null>;
  updateOne(filter: Filter<T>, update: UpdateFilter<T>, options?: UpdateOptions): Promise<UpdateResult>;
  updateMany(filter: Filter<T>, update: UpdateFilter<T>, options?: UpdateOptions): Promise<UpdateResult>;
  deleteOne(filter: Filter<T>): Promise<DeleteResult>;
  deleteMany(filter: Filter<T>): Promise<DeleteResult>;
  /** Idempotent; returns the index name. `keys` maps field paths to 1 (asc) or -1 (desc). */
  createIndex(keys: Record<string, 1 | -1>, options?: IndexOptions): Promise<string>;
  /** Drops the index named `name`; resolves false when there is none (idempotent, for retiring indexes at start). */
  dropIndex(name: string): Promise<boolean>;
}

/** A set of collections behind one backend. */
export interface DocumentStore {
  /** `'mongodb'` or `'embedded'`; logged at start. */
  readonly backend: 'mongodb' | 'embedded';
  collection<T extends Document = Document>(name: string): DocumentCollection<T>;
  /** Flushes and releases the backend (closes the client or the journal). */
  close(): Promise<void>;
  /**
   * Reclaims the space of deleted documents where the backend needs to be told (the embedded
   * store rewrites its snapshot and empties its journal; MongoDB reuses space by itself: no-op).
   * Resolves whether or not there was anything to reclaim; a failure is reported by the backend
   * (a warning), not thrown.
   */
  compact(): Promise<void>;
}

/** A document over MongoDB's 16 MiB BSON limit (the embedded backend's error; see {@link isDocumentTooLarge}). */
export class DocumentTooLargeError extends RangeError {
  override readonly name = 'DocumentTooLargeError';
}

/**
 * True when a write failed because the document would exceed MongoDB's size limit, on either
 * backend (MongoDB: code 10334 BSONObjectTooLarge, code 17419 "Resulting document after update is
 * larger than 16777216", or the driver refusing to serialize it).
 */
export function isDocumentTooLarge(error: unknown): boolean {
  if (error instanceof DocumentTooLargeError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 10334 || code === 17419 || (typeof message === 'string' && /too large|BSONObj size|bytes of BSON|larger than (the maximum size )?\d+/i.test(message));
}

/** True for a unique-index violation from either backend (MongoDB error code 11000). */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
