/**
 * The files of an embedded store's data directory and their lifecycle:
 * - `LOCK`: pid of the process that has the directory open (see data-dir-lock.ts);
 * - `snapshot.jsonl`: the state as of the last compaction (see snapshot.ts);
 * - `journal.jsonl`: every write since, one line each (see journal.ts).
 * Opening replays snapshot then journal. Compaction writes a new snapshot, then empties the
 * journal; a crash in between only means the journal is replayed over a snapshot that already
 * contains it, which is harmless because every entry carries a full state (put, delete, index).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { Journal } from './journal.ts';
import type { JournalEntry } from './journal-entry.ts';
import { readSnapshot, removeSnapshotLeftovers, writeSnapshot } from './snapshot.ts';

/** An open, locked data directory (see the module comment). */
export class DataDir {
  readonly path: string;
  readonly #lock: DataDirLock;
  readonly #journal: Journal;

  private constructor(path: string, lock: DataDirLock, journal: Journal) {
    this.path = path;
    this.#lock = lock;
    this.#journal = journal;
  }

  /**
   * Creates `path` if needed, locks it, and replays its snapshot and journal through `replay`
   * (which may throw to abort; the lock is then released). Throws the lock's error when another
   * live process has the directory open, an Error naming file and line for corrupt content, and
   * fs errors.
   */
  static open(path: string, replay: (entry: JournalEntry) => void): DataDir {
    mkdirSync(path, { recursive: true });
    const lock = lockDataDir(path);
    try {
      const snapshot = join(path, 'snapshot.jsonl');
      removeSnapshotLeftovers(snapshot);
      readSnapshot(snapshot, replay);
      return new DataDir(path, lock, Journal.open(join(path, 'journal.jsonl'), replay));
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /** Entries in the journal since the last compaction. */
  get journalEntryCount(): number {
    return this.#journal.entryCount;
  }

  /** Appends `entry` to the journal; durable against a process crash when this returns. Throws fs errors. */
  append(entry: JournalEntry): void {
    this.#journal.append(entry);
  }

  /**
   * Replaces the snapshot with `state` (the full current state) and empties the journal. On
   * error the directory still holds every acknowledged write, and the error is rethrown.
   */
  compact(state: Iterable<JournalEntry>): void {
    writeSnapshot(join(this.path, 'snapshot.jsonl'), state);
    this.#journal.reset();
  }

  /** Closes the journal and releases the lock; idempotent. */
  close(): void {
    this.#journal.close();
    this.#lock.release();
  }
}
