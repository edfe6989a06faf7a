/**
 * One collection of the embedded backend. Every operation runs synchronously inside the call
 * (the async methods only wrap it, and settle once what it saw is durable: see group-commit.ts),
 * so a single-document operation is atomic, and a findOneAndUpdate is a compare-and-set.
 * Documents are held as BSON-normalized objects in a Map keyed by the canonical key of their
 * `_id`; callers only ever get copies. A write normalizes the document through BSON once, and
 * those bytes are the journal's; a live document is never mutated (an update works on a copy that
 * replaces it), and reads copy it out without BSON (`cloneStored`).
 */
import type {
  DeleteResult,
  Document,
  DocumentCollection,
  Filter,
  FindOneAndUpdateOptions,
  FindOptions,
  IndexOptions,
  UpdateFilter,
  UpdateOptions,
  UpdateResult,
} from '../document-collection.ts';
import { requireId } from '../require-id.ts';
import { canonicalKey } from './canonical-key.ts';
import { CollectionIndexes, type PreparedIndex } from './collection-indexes.ts';
import { assertDocumentSize, cloneStored, copyDocument, documentBytes, fieldBytes, isNormalized, normalizeDocument } from './copy.ts';
import { DuplicateKeyError } from './errors.ts';
import { indexDefinition, type IndexDefinition } from './index-definition.ts';
import { applyPatch, encodePatch, type JournalEntry } from './journal-entry.ts';
import { indexablePins } from './pinned-fields.ts';
import { compileFilter, projectDocument, selectDocuments, type Selection } from './query.ts';
import { sortSpec } from './sort-spec.ts';
import { parseUpdate, touchedFields, updatedCopy, upsertDocument, type ParsedUpdate } from './update.ts';

/** The fields of `doc` named by `like`'s keys. */
function pick(doc: Document, like: Document): Document {
  const picked: Document = {};
  for (const field of Object.keys(like)) picked[field] = doc[field];
  return picked;
}

/** How a collection makes its changes durable: the store's journal, written by group commit (group-commit.ts). */
export interface CommitLog {
  /**
   * Records `entry` (e.g. queues it for the journal) and applies it at once through `apply`,
   * which mutates memory and cannot fail; `undo` reverts exactly that mutation (and cannot fail)
   * should the recording fail later. Throws, without calling `apply`, when the entry cannot be
   * recorded (store closed, data directory fenced, unencodable entry).
   */
  commit(entry: JournalEntry, apply: () => void, undo: () => void): void;
  /**
   * Runs the synchronous `operation` now; settles with its result or error once every entry
   * recorded so far is durable, or rejects with the recording's error (a StoreUnavailableError)
   * when that fails, its changes undone.
   */
  settle<T>(operation: () => T): Promise<T>;
}

/** One query an {@link QueryAudit} sees: what the planner check needs (see index-coverage.ts). */
export interface AuditedQuery {
  readonly collection: string;
  readonly operation: 'findOne' | 'find' | 'countDocuments' | 'findOneAndUpdate' | 'updateOne' | 'updateMany' | 'deleteOne' | 'deleteMany';
  readonly filter: Filter<Document>;
  readonly sort?: FindOptions['sort'];
  /** At most this many documents: `find`'s limit, 1 for the single-document operations. */
  readonly limit?: number;
  /** The collection's indexes when the query ran (`_id` aside). */
  readonly indexes: readonly IndexDefinition[];
}

/**
 * Sees every query of the store before it runs (tests only: see `EmbeddedStoreOptions.queryAudit`);
 * a throw fails the query.
 */
export type QueryAudit = (query: AuditedQuery) => void;

/** A `DocumentCollection` held in memory (see the module comment); obtained from the embedded store. */
export class EmbeddedCollection implements DocumentCollection {
  readonly collectionName: string;
  readonly #log: CommitLog;
  readonly #documents: Map<string, Document>;
  readonly #indexes: CollectionIndexes;
  /** Bytes of BSON of live documents, by canonical key, as far as known (see {@link #bytesOf}). */
  readonly #sizes = new Map<string, number>();
  /** The store's query audit; undefined (the default) costs one check per query. */
  readonly #audit: QueryAudit | undefined;

  /**
   * A collection named `name` writing through `log`, holding `documents` (canonical `_id` key →
   * BSON-normalized document, taken over) and the `indexes` built over them. Throws a
   * DuplicateKeyError or IndexConflictError when they are inconsistent. `audit` sees every query.
   */
  constructor(name: string, log: CommitLog, documents = new Map<string, Document>(), indexes: Iterable<IndexDefinition> = [], audit?: QueryAudit) {
    this.collectionName = name;
    this.#log = log;
    this.#audit = audit;
    this.#documents = documents;
    this.#indexes = new CollectionIndexes(name);
    for (const definition of indexes) {
      const prepared = this.#indexes.prepare(definition, documents);
      if (prepared) this.#indexes.install(prepared);
    }
  }

  /** Number of documents. */
  get size(): number {
    return this.#documents.size;
  }

  /** The collection's state as entries: index definitions, then documents (shared, not copies). */
  *stateEntries(): Generator<JournalEntry> {
    const collection = this.collectionName;
    for (const index of this.#indexes.definitions()) yield { op: 'index', collection, index };
    for (const document of this.#documents.values()) yield { op: 'put', collection, document };
  }

  insertOne(doc: Document): Promise<void> {
    return this.#log.settle(() => {
      requireId(doc);
      const { document, bytes } = normalizeDocument(doc);
      this.#insert(document, bytes);
    });
  }

  findOne(filter: Filter<Document>, options: Pick<FindOptions, 'projection' | 'sort'> = {}): Promise<Document | null> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('findOne', filter, options.sort, 1);
      const [doc] = this.#select(filter, { ...options, limit: 1 });
      return doc ? cloneStored(doc) : null;
    });
  }

  find(filter: Filter<Document>, options: FindOptions = {}): Promise<Document[]> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('find', filter, options.sort, options.limit);
      return this.#select(filter, options).map(cloneStored);
    });
  }

  countDocuments(filter: Filter<Document>): Promise<number> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('countDocuments', filter);
      const matches = compileFilter(filter);
      let count = 0;
      for (const doc of this.#candidates(filter)) if (matches(doc)) count += 1;
      return count;
    });
  }

  findOneAndUpdate(filter: Filter<Document>, update: UpdateFilter<Document>, options: FindOneAndUpdateOptions = {}): Promise<Document | null> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('findOneAndUpdate', filter, options.sort, 1);
      return this.#findOneAndUpdate(filter, update, options);
    });
  }

  updateOne(filter: Filter<Document>, update: UpdateFilter<Document>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('updateOne', filter, undefined, 1);
      return this.#updateMatches(filter, update, options, 1);
    });
  }

  updateMany(filter: Filter<Document>, update: UpdateFilter<Document>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('updateMany', filter);
      return this.#updateMatches(filter, update, options, 0);
    });
  }

  deleteOne(filter: Filter<Document>): Promise<DeleteResult> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('deleteOne', filter, undefined, 1);
      return { deletedCount: this.#deleteMatches(filter, 1) };
    });
  }

  deleteMany(filter: Filter<Document>): Promise<DeleteResult> {
    return this.#log.settle(() => {
      if (this.#audit) this.#audited('deleteMany', filter);
      return { deletedCount: this.#deleteMatches(filter, 0) };
    });
  }

  createIndex(keys: Record<string, 1 | -1>, options?: IndexOptions): Promise<string> {
    return this.#log.settle(() => {
      const definition = indexDefinition(keys, options);
      const prepared = this.#indexes.prepare(definition, this.#documents);
      if (prepared) {
        this.#log.commit(
          { op: 'index', collection: this.collectionName, index: definition },
          () => this.#indexes.install(prepared),
          () => this.#indexes.uninstall(prepared),
        );
      }
      return definition.name;
    });
  }

  dropIndex(name: string): Promise<boolean> {
    return this.#log.settle(() => {
      if (!this.#indexes.has(name)) return false;
      let dropped: PreparedIndex | undefined;
      this.#log.commit(
        { op: 'dropIndex', collection: this.collectionName, name },
        () => {
          dropped = this.#indexes.drop(name);
        },
        () => {
          if (dropped) this.#indexes.install(dropped);
        },
      );
      return true;
    });
  }

  /** Shows the query to the audit (set). */
  #audited(operation: AuditedQuery['operation'], filter: Filter<Document>, sort?: FindOptions['sort'], limit?: number): void {
    this.#audit!({ collection: this.collectionName, operation, filter, sort, limit, indexes: [...this.#indexes.definitions()] });
  }

  #findOneAndUpdate(filter: Filter<Document>, update: UpdateFilter<Document>, options: FindOneAndUpdateOptions): Document | null {
    const parsed = parseUpdate(update, options.arrayFilters);
    const returnBefore = options.returnDocument === 'before';
    const [target] = this.#select(filter, { sort: options.sort, limit: 1 });
    let result: Document | null = null;
    if (target) {
      const updated = this.#update(target, parsed, filter);
      result = returnBefore ? target : updated;
    } else if (options.upsert) {
      const inserted = this.#upsert(filter, parsed);
      result = returnBefore ? null : inserted;
    }
    if (!result) return null;
    return cloneStored(options.projection ? projectDocument(result, options.projection) : result);
  }

  /** Matching live documents (callers copy them out), narrowed by the `_id` map or an equality index. */
  #select(filter: Filter<Document>, options: FindOptions): Document[] {
    const selection: Selection = { ...options, sort: options.sort === undefined ? undefined : sortSpec(options.sort) };
    return selectDocuments(this.#candidates(filter), filter, selection);
  }

  /** The documents that can match `filter`: by `_id` lookup, by the narrowest equality index, or all. */
  #candidates(filter: Filter<Document>): Iterable<Document> {
    const pins = indexablePins(filter);
    const ids = pins.get('_id');
    const docKeys = ids ? new Set(ids.map(canonicalKey)) : this.#indexes.candidates(pins);
    if (!docKeys) return this.#documents.values();
    const candidates: Document[] = [];
    for (const docKey of docKeys) {
      const doc = this.#documents.get(docKey);
      if (doc) candidates.push(doc);
    }
    return candidates;
  }

  #updateMatches(filter: Filter<Document>, update: UpdateFilter<Document>, options: UpdateOptions, limit: number): UpdateResult {
    const parsed = parseUpdate(update, options.arrayFilters);
    const targets = this.#select(filter, { limit });
    if (targets.length === 0 && options.upsert) {
      const inserted = this.#upsert(filter, parsed);
      return { matchedCount: 0, modifiedCount: 0, upsertedId: cloneStored(inserted._id) };
    }
    let modifiedCount = 0;
    for (const target of targets) if (this.#update(target, parsed, filter) !== target) modifiedCount += 1;
    return { matchedCount: targets.length, modifiedCount, upsertedId: null };
  }

  #deleteMatches(filter: Filter<Document>, limit: number): number {
    const targets = this.#select(filter, { limit });
    for (const target of targets) {
      const docKey = canonicalKey(target._id);
      this.#log.commit(
        { op: 'delete', collection: this.collectionName, id: target._id },
        () => {
          this.#documents.delete(docKey);
          this.#sizes.delete(docKey);
          this.#indexes.remove(docKey, target);
        },
        // Back in the Map, but last in its (natural, unsorted) order.
        () => {
          this.#documents.set(docKey, target);
          this.#indexes.add(docKey, target);
        },
      );
    }
    return targets.length;
  }

  /**
   * Applies `update` to the live `target` by copy on write: only the top-level fields the update
   * touches are copied (the rest is shared with `target`, which stays as it was), and the journal
   * gets a `patch` of those fields, not the whole document. Returns the new live document, or
   * `target` when nothing changed. Throws a DocumentTooLargeError past 16 MiB, a DuplicateKeyError
   * on a unique clash, BSON's error for values it cannot hold; nothing is changed then.
   */
  #update(target: Document, update: ParsedUpdate, filter: Filter<Document>): Document {
    const touched = touchedFields(update);
    const { document: working, changed, normalized } = updatedCopy(target, update, filter);
    if (!changed) return target;
    const set: Document = {};
    const unset: string[] = [];
    for (const field of touched) {
      // A field the plain path left as it was is still `target`'s own value: nothing to journal.
      if (field in working) {
        if (!normalized || working[field] !== target[field] || !(field in target)) set[field] = working[field];
      } else if (field in target) unset.push(field);
    }
    // Operator values were normalized by parseUpdate; what mingo's operators computed may not be.
    const updated = normalized || isNormalized(set) ? working : applyPatch(target, { set: copyDocument(set), unset });
    const docKey = canonicalKey(target._id);
    const patch = { set: pick(updated, set), unset };
    const encoded = encodePatch(target._id, patch.set, unset);
    // The size changes by what the patch replaces: its fields' old bytes out, their new bytes in.
    const bytes = this.#bytesOf(docKey, target) - fieldBytes(target, [...Object.keys(set), ...unset]) + encoded.setFieldBytes;
    assertDocumentSize(bytes);
    const reindex = this.#indexes.reads(touched);
    if (reindex) this.#indexes.assertUnique(docKey, updated);
    this.#log.commit(
      { op: 'patch', collection: this.collectionName, id: target._id, ...patch, bytes: encoded.bytes },
      () => {
        this.#documents.set(docKey, updated);
        this.#sizes.set(docKey, bytes);
        if (reindex) this.#indexes.replace(docKey, target, updated);
      },
      () => {
        this.#documents.set(docKey, target);
        this.#sizes.delete(docKey);
        if (reindex) this.#indexes.replace(docKey, updated, target);
      },
    );
    return updated;
  }

  /** Bytes of BSON of the live document `doc` under `docKey` (measured once, then kept up to date). */
  #bytesOf(docKey: string, doc: Document): number {
    let bytes = this.#sizes.get(docKey);
    if (bytes === undefined) {
      bytes = documentBytes(doc);
      this.#sizes.set(docKey, bytes);
    }
    return bytes;
  }

  /** Inserts the document an upsert of `filter` with `update` creates; returns it (live). */
  #upsert(filter: Filter<Document>, update: ParsedUpdate): Document {
    const { document, bytes } = normalizeDocument(upsertDocument(filter, update));
    requireId(document);
    this.#insert(document, bytes);
    return document;
  }

  /** Inserts the BSON-normalized `doc` (encoded as `bytes`), which becomes live. Throws a DuplicateKeyError on a unique clash. */
  #insert(doc: Document, bytes: Uint8Array): void {
    const docKey = canonicalKey(doc._id);
    if (this.#documents.has(docKey)) {
      throw new DuplicateKeyError(this.collectionName, '_id_', { _id: 1 }, { _id: doc._id });
    }
    this.#indexes.assertUnique(docKey, doc);
    this.#log.commit(
      { op: 'put', collection: this.collectionName, document: doc, bytes },
      () => {
        this.#documents.set(docKey, doc);
        this.#sizes.set(docKey, bytes.byteLength);
        this.#indexes.add(docKey, doc);
      },
      () => {
        this.#documents.delete(docKey);
        this.#sizes.delete(docKey);
        this.#indexes.remove(docKey, doc);
      },
    );
  }
}
