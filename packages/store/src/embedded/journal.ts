/**
 * The append-only journal of an embedded store: one encoded entry per line. Each append is a
 * single synchronous write to a file opened with O_APPEND, so when `append` returns the entry is
 * in the operating system and survives a crash (kill -9) of the process; surviving power loss is
 * left to MongoDB deployments.
 */
import { closeSync, ftruncateSync, openSync, truncateSync } from 'node:fs';
import { decodeEntry, decodeLine, encodeEntry, type JournalEntry } from './journal-entry.ts';
import { readLines, type Line } from './line-reader.ts';
import { writeFully } from './sync-fs.ts';

/** An open journal file (see the module comment); not safe to share between processes. */
export class Journal {
  readonly path: string;
  #fd: number | undefined;
  #entryCount: number;

  private constructor(path: string, fd: number, entryCount: number) {
    this.path = path;
    this.#fd = fd;
    this.#entryCount = entryCount;
  }

  /**
   * Replays the journal at `path` (created when missing) through `replay`, then opens it for
   * appending. The last line is dropped, and cut off the file, when it is incomplete (no newline)
   * or unreadable: that is an append a crash interrupted, never acknowledged. Throws an Error
   * naming the file and line for an unreadable line before the last, and fs errors.
   */
  static open(path: string, replay: (entry: JournalEntry) => void): Journal {
    let entryCount = 0;
    let previous: Line | undefined;
    for (const line of readLines(path)) {
      if (previous) {
        replay(decodeLine(path, previous));
        entryCount += 1;
      }
      previous = line;
    }
    const last = previous && previous.terminated ? tryDecode(previous.text) : undefined;
    if (last) {
      replay(last);
      entryCount += 1;
    } else if (previous) {
      truncateSync(path, previous.start);
    }
    return new Journal(path, openSync(path, 'a'), entryCount);
  }

  /** Entries in the journal since it was last {@link reset}. */
  get entryCount(): number {
    return this.#entryCount;
  }

  /** Appends `entry` durably (see the module comment). Throws when closed, and fs/encoding errors. */
  append(entry: JournalEntry): void {
    writeFully(this.#openFd(), `${encodeEntry(entry)}\n`);
    this.#entryCount += 1;
  }

  /** Empties the journal (after a snapshot took over its entries). Throws when closed, and fs errors. */
  reset(): void {
    ftruncateSync(this.#openFd(), 0);
    this.#entryCount = 0;
  }

  /** Closes the file; idempotent. */
  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  #openFd(): number {
    if (this.#fd === undefined) throw new Error(`journal ${this.path} is closed`);
    return this.#fd;
  }
}

function tryDecode(text: string): JournalEntry | undefined {
  try {
    return decodeEntry(text);
  } catch {
    return undefined;
  }
}
