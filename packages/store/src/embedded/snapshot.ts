/**
 * The snapshot file of an embedded store: the whole state (index definitions, then documents) as
 * journal entries, replaced atomically: written to a temporary file, fsynced, renamed over the
 * old snapshot, directory fsynced. A crash at any point leaves either the old or the new snapshot.
 */
import { closeSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { decodeLine, encodeEntry, type JournalEntry } from './journal-entry.ts';
import { readLines } from './line-reader.ts';
import { fsyncDirectory, writeLinesDurably } from './sync-fs.ts';


/** Replays the snapshot at `path` (nothing when missing) through `replay`. Throws an Error naming the file and line for any unreadable line. */
export function readSnapshot(path: string, replay: (entry: JournalEntry) => void): void {
  for (const line of readLines(path)) replay(decodeLine(path, line));
}

/**
 * Atomically replaces the snapshot at `path` with `entries` (see the module comment). On failure
 * (e.g. ENOSPC) the old snapshot is intact, the temporary file removed (or, should even that
 * fail, left for {@link removeSnapshotLeftovers} at the next open), and the error rethrown.
 */
export function writeSnapshot(path: string, entries: Iterable<JournalEntry>): void {
  const temporary = `${path}.tmp`;
  try {
    const fd = openSync(temporary, 'w');
    try {
      writeLinesDurably(fd, encodedLines(entries));
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    try {
      removeSnapshotLeftovers(path);
    } catch {
      // Removed at the next open; the write's error is what matters.
    }
    throw error;
  }
  fsyncDirectory(dirname(path));
}

/** Removes a temporary snapshot left by a crash during {@link writeSnapshot}. */
export function removeSnapshotLeftovers(path: string): void {
  rmSync(`${path}.tmp`, { force: true, recursive: true });
}

function* encodedLines(entries: Iterable<JournalEntry>): Generator<string> {
  for (const entry of entries) yield encodeEntry(entry);
}
