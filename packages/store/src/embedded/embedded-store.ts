/**
 * The embedded backend (DESIGN.md "Persistence"): collections in memory, queried and updated with
 * mingo, persisted under a data directory through a journal that every write reaches before it
 * is acknowledged, compacted into a snapshot now and then.
 */
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
import { canonicalKey } from './canonical-key.ts';
import { DataDir } from './data-dir.ts';
import { EmbeddedCollection } from './embedded-collection.ts';
import type { IndexDefinition } from './index-definition.ts';
import type { JournalEntry } from './journal-entry.ts';

/** Options of {@link openEmbeddedStore}. */
export interface EmbeddedStoreOptions {
  /** Directory of the journal and snapshot (created if missing); null keeps everything in memory (tests). */
  dataDir: string | null;
  /**
   * Journal entries below which no compaction happens (default 10 000). Past it, the journal is
   * compacted once it holds more than 4 entries per live document.
   */
  compactionMinEntries?: number;
}

const DEFAULT_COMPACTION_MIN_ENTRIES = 10_000;
const COMPACTION_RATIO = 4;

/**
 * Opens the embedded store. With a `dataDir`, locks it and loads its snapshot and journal.
 * Rejects when another live process has the directory open, when its files are corrupt (the
 * Error names the file and line), and on fs errors.
 */
export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<DocumentStore> {
  const minEntries = options.compactionMinEntries ?? DEFAULT_COMPACTION_MIN_ENTRIES;
  if (options.dataDir === null) return new EmbeddedStore(null, new Map(), minEntries);
  const loaded = new Map<string, LoadedCollection>();
  const dataDir = DataDir.open(options.dataDir, (entry) => replay(loaded, entry));
  try {
    return new EmbeddedStore(dataDir, loaded, minEntries);
  } catch (error) {
    dataDir.close();
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
    case 'delete':
      collection.documents.delete(canonicalKey(entry.id));
      break;
    case 'index':
      collection.indexes.set(entry.index.name, entry.index);
      break;
  }
}

class EmbeddedStore implements DocumentStore {
  readonly backend = 'embedded';
  readonly #dataDir: DataDir | null;
  readonly #collections = new Map<string, EmbeddedCollection>();
  readonly #compactionMinEntries: number;
  /** Journal size before which no compaction is attempted again (raised after a failure). */
  #compactionFloor: number;
  #closed = false;

  constructor(dataDir: DataDir | null, loaded: ReadonlyMap<string, LoadedCollection>, compactionMinEntries: number) {
    this.#dataDir = dataDir;
    this.#compactionMinEntries = compactionMinEntries;
    this.#compactionFloor = compactionMinEntries;
    for (const [name, { documents, indexes }] of loaded) {
      this.#collections.set(name, new EmbeddedCollection(name, this.#commit, documents, indexes.values()));
    }
  }

  collection<T extends Document = Document>(name: string): DocumentCollection<T> {
    if (typeof name !== 'string' || name === '' || name.includes('$') || name.includes('\0')) {
      throw new TypeError(`invalid collection name ${JSON.stringify(name)}`);
    }
    let collection = this.#collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection(name, this.#commit);
      this.#collections.set(name, collection);
    }
    return collection as unknown as DocumentCollection<T>;
  }

  /** Closes the journal and releases the data directory. Later writes reject; reads still answer from memory. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#dataDir?.close();
  }

  readonly #commit = (entry: JournalEntry, apply: () => void): void => {
    if (this.#closed) throw new Error('the embedded store is closed');
    this.#dataDir?.append(entry);
    apply();
    this.#compactIfDue();
  };

  /** Compacts when the journal is long relative to the state; a failure is reported as a process warning and retried later. */
  #compactIfDue(): void {
    const dataDir = this.#dataDir;
    if (!dataDir || dataDir.journalEntryCount < this.#compactionFloor) return;
    let stateSize = 0;
    for (const collection of this.#collections.values()) stateSize += collection.size;
    if (dataDir.journalEntryCount <= COMPACTION_RATIO * stateSize) return;
    try {
      dataDir.compact(this.#stateEntries());
      this.#compactionFloor = this.#compactionMinEntries;
    } catch (error) {
      this.#compactionFloor = dataDir.journalEntryCount + this.#compactionMinEntries;
      process.emitWarning(`embedded store: compaction of ${dataDir.path} failed; the journal keeps growing (${(error as Error).message})`);
    }
  }

  *#stateEntries(): Generator<JournalEntry> {
    for (const collection of this.#collections.values()) yield* collection.stateEntries();
  }
}
