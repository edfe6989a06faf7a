/**
 * The files of an embedded store's data directory and their lifecycle:
 * - `switchyard.lock/`: the lock of the process that has the directory open, refreshed every few
 *   seconds, with `owner.json` naming that process (see data-dir-lock.ts); a legacy `LOCK` file
 *   (a pid, from older versions) is removed when found;
 * - `snapshot.jsonl`: the state as of the last compaction (see snapshot.ts), and briefly
 *   `snapshot.jsonl.tmp` while a compaction writes the next one;
 * - `journal.jsonl`: every write since, one line each (see journal.ts);
 * - `*.corrupt-<timestamp>`: originals kept by `npm run store:repair` (see repair.ts).
 * Opening replays snapshot then journal. Compaction writes a new snapshot, then empties the
 * journal; a crash in between only means the journal is replayed over a snapshot that already
 * contains it, which is harmless because every entry carries a full state (put, delete, index).
 *
 * Writes are fenced (refused with a StoreUnavailableError) once the lock is lost: another
 * instance may have taken the directory over, so this one must not write to it again.
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StoreUnavailableError } from '../errors.ts';
import { lockDataDir, type DataDirLock, type DataDirLockTimings } from './data-dir-lock.ts';
import { encodeJournalLine, Journal, type JournalFileSystem } from './journal.ts';
import type { JournalEntry } from './journal-entry.ts';
import { readSnapshot, removeSnapshotLeftovers, writeSnapshot } from './snapshot.ts';
import { processWarning, type WarningSink } from './warnings.ts';

/** Name of the journal file in a data directory. */
export const JOURNAL_FILE = 'journal.jsonl';
/** Name of the snapshot file in a data directory. */
export const SNAPSHOT_FILE = 'snapshot.jsonl';

/** Options of {@link DataDir.open}. */
export interface DataDirOptions {
  /** Lock timings (milliseconds); defaults in data-dir-lock.ts. */
  lock?: DataDirLockTimings;
  /** File operations of the journal; default node:fs (tests inject failures). */
  fileSystem?: JournalFileSystem;
  /** Receives warnings (torn journal tail dropped, lock taken over or lost); default `process.emitWarning`. */
  warn?: WarningSink;
}

/** An open, locked data directory (see the module comment). */
export class DataDir {
  readonly path: string;
  readonly #lock: DataDirLock;
  readonly #journal: Journal;
  /** Bytes of the snapshot file, as found at open or written by the last compaction. */
  #snapshotBytes: number;
  /** Set once the lock is lost: every later write throws it. */
  #fence: StoreUnavailableError | undefined;

  private constructor(path: string, lock: DataDirLock, journal: Journal, snapshotBytes: number) {
    this.path = path;
    this.#lock = lock;
    this.#journal = journal;
    this.#snapshotBytes = snapshotBytes;
  }

  /**
   * Creates `path` if needed, locks it, and replays its snapshot and journal through `replay`
   * (which may throw to abort; the lock is then released). Rejects with a `DataDirLockedError`
   * when another live instance has the directory open, a `CorruptFileError` (file, line, byte
   * offset, repair command) for corrupt content, and fs errors.
   */
  static async open(path: string, replay: (entry: JournalEntry) => void, options: DataDirOptions = {}): Promise<DataDir> {
    mkdirSync(path, { recursive: true });
    const warn = options.warn ?? processWarning;
    let dataDir: DataDir | undefined;
    // Called from a timer, hence never before `dataDir` is set: loading below is synchronous.
    const lock = await lockDataDir(path, { ...options.lock, warn, onCompromised: (error) => dataDir && dataDir.#fenceOff(error) });
    try {
      const snapshot = join(path, SNAPSHOT_FILE);
      removeSnapshotLeftovers(snapshot);
      readSnapshot(snapshot, replay);
      const journal = Journal.open(join(path, JOURNAL_FILE), replay, { fileSystem: options.fileSystem, warn });
      dataDir = new DataDir(path, lock, journal, fileBytes(snapshot));
      return dataDir;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** Entries in the journal since the last compaction. */
  get journalEntryCount(): number {
    return this.#journal.entryCount;
  }

  /** Bytes of the journal since the last compaction. */
  get journalBytes(): number {
    return this.#journal.byteLength;
  }

  /** Bytes of the snapshot: the state as of the last compaction (or as found at open). */
  get snapshotBytes(): number {
    return this.#snapshotBytes;
  }

  /**
   * The journal line of `entry` (see journal.ts), for {@link appendLines}. Throws the
   * StoreUnavailableError of a lost lock, so a fenced store refuses a write before applying it,
   * and the encoding error of an unencodable entry.
   */
  encode(entry: JournalEntry): string {
    if (this.#fence) throw this.#fence;
    return encodeJournalLine(entry);
  }

  /**
   * Appends `count` lines from {@link encode}, joined in `lines`, in one write: all durable when
   * this returns, none written when it throws (a StoreUnavailableError, as `Journal.appendLines`).
   */
  appendLines(lines: string, count: number): void {
    if (this.#fence) throw this.#fence;
    this.#journal.appendLines(lines, count);
  }

  /**
   * Replaces the snapshot with `state` (the full current state) and empties the journal. On
   * error (e.g. a full disk) the directory still holds every acknowledged write, no temporary
   * snapshot is left behind, and the error is rethrown.
   */
  compact(state: Iterable<JournalEntry>): void {
    if (this.#fence) throw this.#fence;
    const snapshot = join(this.path, SNAPSHOT_FILE);
    writeSnapshot(snapshot, state);
    this.#snapshotBytes = fileBytes(snapshot);
    this.#journal.reset();
  }

  /** Closes the journal and releases the lock; idempotent. Rejects with the lock's fs errors. */
  async close(): Promise<void> {
    this.#journal.close();
    await this.#lock.release();
  }

  #fenceOff(error: Error): void {
    this.#fence ??= new StoreUnavailableError(
      `the embedded store lost its lock on ${this.path} (${error.message}): another instance may be using the directory, ` +
        `so this one refuses writes until it is restarted`,
      { cause: error },
    );
  }
}

/** Size of the file at `path` in bytes; 0 when it does not exist. */
function fileBytes(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}
