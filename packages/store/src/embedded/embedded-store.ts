/**
 * The embedded backend (DESIGN.md "Persistence"): collections in memory, queried and updated with
 * mingo, persisted under a data directory through a journal that every write reaches before it
 * is acknowledged (the writes of one event-loop turn together, see group-commit.ts), compacted
 * into a snapshot now and then.
 */
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
import { canonicalKey } from './canonical-key.ts';
import type { DataDirLockTimings } from './data-dir-lock.ts';
import { DataDir } from './data-dir.ts';
import { EmbeddedCollection, type CommitLog, type QueryAudit } from './embedded-collection.ts';
import { GroupCommit } from './group-commit.ts';
import type { IndexDefinition } from './index-definition.ts';
import { applyPatch, type JournalEntry } from './journal-entry.ts';
import type { JournalFileSystem } from './journal.ts';
import { processWarning, type WarningSink } from './warnings.ts';

/** Options of {@link openEmbeddedStore}. */
export interface EmbeddedStoreOptions {
  /** Directory of the journal and snapshot (created if missing); null keeps everything in memory (tests). */
  dataDir: string | null;
  /**
   * Journal entries below which no compaction happens (default 10 000). Past it, the journal is
   * compacted once it holds more than 4 entries per live document.
   */
  compactionMinEntries?: number;
  /**
   * Journal bytes below which no compaction happens for the journal's size (default
   * {@link DEFAULT_COMPACTION_MIN_BYTES}, 64 MiB). Past it, the journal is compacted once it is more
   * than 4 times the size of the snapshot (the state as of the last compaction), so that large
   * rewritten documents (each patch journals the changed fields whole) cannot grow it without end.
   */
  compactionMinBytes?: number;
  /**
   * Timings of the data-directory lock in milliseconds (`staleMs` default 10 000, `updateMs`,
   * `waitMs`, `retryIntervalMs`; see data-dir-lock.ts). Tests shorten them.
   */
  lock?: DataDirLockTimings;
  /** Receives operator warnings (torn journal tail dropped, failed compaction, lock taken over or lost); default `process.emitWarning`. */
  onWarning?: WarningSink;
  /** File operations of the journal; default node:fs. For tests that inject write failures. */
  journalFileSystem?: JournalFileSystem;
  /**
   * Sees every query (filter, sort, limit, the collection's indexes) before it runs; a throw fails
   * the query. For tests: `index-coverage.test.ts` checks with it that a declared index serves
   * each repository query. Default none (no cost).
   */
  queryAudit?: QueryAudit;
}

const DEFAULT_COMPACTION_MIN_ENTRIES = 10_000;
/** Default of {@link EmbeddedStoreOptions.compactionMinBytes} (`SWITCHYARD_COMPACT_JOURNAL_BYTES`): 64 MiB. */
export const DEFAULT_COMPACTION_MIN_BYTES = 64 * 1024 * 1024;
/** The journal is compacted past this many entries per live document, or this many times the snapshot's bytes. */
const COMPACTION_RATIO = 4;

/** When the journal is compacted (see {@link EmbeddedStoreOptions}). */
interface CompactionThresholds {
  minEntries: number;
  minBytes: number;
}

/**
 * Opens the embedded store. With a `dataDir`, locks it and loads its snapshot and journal; a
 * write that cannot reach the journal (e.g. a full disk) then throws a StoreUnavailableError and
 * changes nothing, and writes work again once the disk has room. Rejects with a
 * `DataDirLockedError` when another live instance has the directory open (after waiting up to
 * `lock.waitMs` for a lock whose holder cannot be checked), a `CorruptFileError` naming file,
 * line, byte offset and the repair command when its files are corrupt, and fs errors.
 */
export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<DocumentStore> {
  const thresholds: CompactionThresholds = {
    minEntries: options.compactionMinEntries ?? DEFAULT_COMPACTION_MIN_ENTRIES,
    minBytes: options.compactionMinBytes ?? DEFAULT_COMPACTION_MIN_BYTES,
  };
  const warn = options.onWarning ?? processWarning;
  if (options.dataDir === null) return new EmbeddedStore(null, new Map(), thresholds, warn, options.queryAudit);
  const loaded = new Map<string, LoadedCollection>();
  const dataDir = await DataDir.open(options.dataDir, (entry) => replay(loaded, entry), {
    lock: options.lock,
    fileSystem: options.journalFileSystem,
    warn,
  });
  try {
    return new EmbeddedStore(dataDir, loaded, thresholds, warn, options.queryAudit);
  } catch (error) {
    await dataDir.close();
    throw new Error(`embedded store in ${options.dataDir} holds inconsistent data: ${(error as Error).message}`, { cause: error });
  }
}

/** A collection as read back from disk, before its indexes are built. */
interface LoadedCollection {
  readonly documents: Map<string, Document>;
  readonly indexes: Map<string, IndexDefinition>;
}

function replay(loaded: Map<string, LoadedCollection>, entry: JournalEntry): void {
  let collection = loaded.get(entry.collection);
  if (!collection) {
    collection = { documents: new Map(), indexes: new Map() };
    loaded.set(entry.collection, collection);
  }
  switch (entry.op) {
    case 'put':
      collection.documents.set(canonicalKey(entry.document._id), entry.document);
      break;
    case 'patch': {
      const key = canonicalKey(entry.id);
      const document = collection.documents.get(key);
      if (document === undefined) throw new Error(`a patch of collection ${entry.collection} names a document that does not exist`);
      collection.documents.set(key, applyPatch(document, entry));
      break;
    }
    case 'delete':
      collection.documents.delete(canonicalKey(entry.id));
      break;
    case 'index':
      collection.indexes.set(entry.index.name, entry.index);
      break;
    case 'dropIndex':
      collection.indexes.delete(entry.name);
      break;
  }
}

class EmbeddedStore implements DocumentStore {
  readonly backend = 'embedded';
  readonly #dataDir: DataDir | null;
  readonly #collections = new Map<string, EmbeddedCollection>();
  readonly #thresholds: CompactionThresholds;
  readonly #warn: WarningSink;
  readonly #audit: QueryAudit | undefined;
  /** The journal's group commit; undefined in memory (changes are applied at once, nothing to wait for). */
  readonly #group: GroupCommit | undefined;
  /** Journal entries before which no compaction is attempted again (raised after a failure). */
  #compactionFloor: number;
  /** Journal bytes before which no compaction is attempted again for the journal's size (raised after a failure). */
  #compactionBytesFloor: number;
  #closed = false;

  constructor(dataDir: DataDir | null, loaded: ReadonlyMap<string, LoadedCollection>, thresholds: CompactionThresholds, warn: WarningSink, audit?: QueryAudit) {
    this.#dataDir = dataDir;
    this.#audit = audit;
    this.#warn = warn;
    this.#thresholds = thresholds;
    this.#compactionFloor = thresholds.minEntries;
    this.#compactionBytesFloor = thresholds.minBytes;
    this.#group = dataDir ? new GroupCommit((lines, count) => dataDir.appendLines(lines, count), () => this.#compactIfDue()) : undefined;
    for (const [name, { documents, indexes }] of loaded) {
      this.#collections.set(name, new EmbeddedCollection(name, this.#log, documents, indexes.values(), audit));
    }
  }

  collection<T extends Document = Document>(name: string): DocumentCollection<T> {
    if (typeof name !== 'string' || name === '' || name.includes('$') || name.includes('\0')) {
      throw new TypeError(`invalid collection name ${JSON.stringify(name)}`);
    }
    let collection = this.#collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection(name, this.#log, undefined, undefined, this.#audit);
      this.#collections.set(name, collection);
    }
    return collection as unknown as DocumentCollection<T>;
  }

  /**
   * Writes the writes of the current turn, closes the journal and releases the data directory.
   * Later writes reject; reads still answer from memory.
   */
  async close(): Promise<void> {
    this.#group?.flush();
    this.#closed = true;
    await this.#dataDir?.close();
  }

  /** Compacts now (e.g. after retention purged runs): see {@link DocumentStore.compact}. */
  async compact(): Promise<void> {
    if (this.#closed) return;
    this.#group?.flush();
    this.#compact();
  }

  /**
   * The collections' {@link CommitLog}. In memory, a change is applied at once. With a data
   * directory, its journal line is queued and the change applied at once (group-commit.ts);
   * operations settle after the turn's lines are written, and compaction follows that write.
   */
  readonly #log: CommitLog = {
    commit: (entry, apply, undo) => {
      if (this.#closed) throw new Error('the embedded store is closed');
      if (!this.#group || !this.#dataDir) apply();
      else this.#group.add(this.#dataDir.encode(entry), apply, undo);
    },
    settle: (operation) => (this.#group ? this.#group.settle(operation) : settleNow(operation)),
  };

  /**
   * Compacts when the journal is long relative to the state, by entries (past `minEntries` and 4
   * entries per live document) or by bytes (past `minBytes` and 4 times the snapshot's bytes); a
   * failure (e.g. a full disk) is reported as a warning and retried later.
   */
  #compactIfDue(): void {
    const dataDir = this.#dataDir;
    if (!dataDir) return;
    if (this.#dueByBytes(dataDir) || this.#dueByEntries(dataDir)) this.#compact();
  }

  #dueByBytes(dataDir: DataDir): boolean {
    const bytes = dataDir.journalBytes;
    return bytes >= this.#compactionBytesFloor && bytes > COMPACTION_RATIO * dataDir.snapshotBytes;
  }

  #dueByEntries(dataDir: DataDir): boolean {
    if (dataDir.journalEntryCount < this.#compactionFloor) return false;
    let stateSize = 0;
    for (const collection of this.#collections.values()) stateSize += collection.size;
    return dataDir.journalEntryCount > COMPACTION_RATIO * stateSize;
  }

  /** Rewrites the snapshot from memory and empties the journal; a failure becomes a warning and pushes the next attempt back. */
  #compact(): void {
    const dataDir = this.#dataDir;
    if (!dataDir) return;
    try {
      dataDir.compact(this.#stateEntries());
      this.#compactionFloor = this.#thresholds.minEntries;
      this.#compactionBytesFloor = this.#thresholds.minBytes;
    } catch (error) {
      this.#compactionFloor = dataDir.journalEntryCount + this.#thresholds.minEntries;
      this.#compactionBytesFloor = dataDir.journalBytes + this.#thresholds.minBytes;
      this.#warn(`embedded store: compaction of ${dataDir.path} failed; the journal keeps growing (${(error as Error).message})`);
    }
  }

  *#stateEntries(): Generator<JournalEntry> {
    for (const collection of this.#collections.values()) yield* collection.stateEntries();
  }
}

/** `operation`'s result (or error) as a promise: the settling of a store without a journal. */
async function settleNow<T>(operation: () => T): Promise<T> {
  return operation();
}
