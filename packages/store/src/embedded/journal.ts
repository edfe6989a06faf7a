/**
 * The append-only journal of an embedded store: one encoded entry per line. Each append (the
 * entries of one event-loop turn, see group-commit.ts) is a single synchronous write to a file
 * opened with O_APPEND, so when `appendLines` returns the entries are in the operating system and
 * survive a crash (kill -9) of the process; surviving power loss is left to MongoDB deployments.
 *
 * A failed append (disk full, I/O error) must not leave a partial line for the next append to
 * land on: the file is cut back to its last complete entry at once, and when even that fails it
 * stays "dirty" and every later append retries the cut first, refusing to write until it
 * succeeds. Either way the failed append throws a {@link StoreUnavailableError}, and the next one
 * after space is freed goes through: no restart needed.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { StoreUnavailableError } from '../errors.ts';
import { describeFsError, isOutOfSpace } from './fs-error.ts';
import { decodeLine, encodeEntry, type JournalEntry } from './journal-entry.ts';
import { readLines, type Line } from './line-reader.ts';
import { writeFully } from './sync-fs.ts';
import { processWarning, type WarningSink } from './warnings.ts';

/** The operations a journal performs on its open file (default: node:fs); tests inject failures here. */
export interface JournalFileSystem {
  /** As `fs.writeSync(fd, buffer, offset, length)`: appends up to `length` bytes, returns how many it wrote; throws the fs error. */
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  /** As `fs.ftruncateSync`: sets the file's size to `length` bytes; throws the fs error. */
  ftruncateSync(fd: number, length: number): void;
  /** As `fs.fstatSync`: the file's size in bytes; throws the fs error. */
  fstatSync(fd: number): { size: number };
}

/** {@link JournalFileSystem} on node:fs. */
export const nodeJournalFileSystem: JournalFileSystem = {
  writeSync: (fd, buffer, offset, length) => writeSync(fd, buffer, offset, length),
  ftruncateSync: (fd, length) => ftruncateSync(fd, length),
  fstatSync: (fd) => fstatSync(fd),
};

/** Options of {@link Journal.open}. */
export interface JournalOptions {
  /** File operations on the open journal; default {@link nodeJournalFileSystem}. */
  fileSystem?: JournalFileSystem;
  /** Receives the warning about a dropped torn last line; default `process.emitWarning`. */
  warn?: WarningSink;
}

/** An open journal file (see the module comment); not safe to share between processes. */
export class Journal {
  readonly path: string;
  readonly #fs: JournalFileSystem;
  #fd: number | undefined;
  #entryCount: number;
  /** Bytes of complete entries: the size the file has when it is clean. */
  #length: number;
  /** The error of the failed append whose bytes may still follow `#length` (the file is dirty), if any. */
  #dirtyBy: unknown;

  private constructor(path: string, fileSystem: JournalFileSystem, fd: number, entryCount: number, length: number) {
    this.path = path;
    this.#fs = fileSystem;
    this.#fd = fd;
    this.#entryCount = entryCount;
    this.#length = length;
  }

  /**
   * Replays the journal at `path` (created when missing) through `replay`, then opens it for
   * appending. The last line is dropped, cut off the file and reported as a warning naming the
   * file and byte offset when it is incomplete (no newline): that is an append a crash or a full
   * disk interrupted, never acknowledged. Throws a `CorruptFileError` (file, line, byte offset,
   * repair command) for any unreadable complete line, and fs errors.
   */
  static open(path: string, replay: (entry: JournalEntry) => void, options: JournalOptions = {}): Journal {
    const fileSystem = options.fileSystem ?? nodeJournalFileSystem;
    let entryCount = 0;
    let previous: Line | undefined;
    for (const line of readLines(path)) {
      if (previous) {
        replay(decodeLine(path, previous));
        entryCount += 1;
      }
      previous = line;
    }
    // A complete (newline-terminated) last line was acknowledged, even when unreadable (an older
    // version could append an entry onto the torn bytes of a failed write): decodeLine refuses it
    // with the repair command, which salvages such an entry. Only an incomplete line is dropped.
    if (previous?.terminated) {
      replay(decodeLine(path, previous));
      entryCount += 1;
    }
    const fd = openSync(path, 'a');
    try {
      if (previous && !previous.terminated) {
        fileSystem.ftruncateSync(fd, previous.start);
        (options.warn ?? processWarning)(
          `embedded store: dropped the incomplete last entry of ${path} ` +
            `(line ${previous.number}, byte offset ${previous.start}, ${previous.bytes} bytes): an append interrupted by a crash ` +
            `or a full disk, never acknowledged`,
        );
      }
      return new Journal(path, fileSystem, fd, entryCount, fileSystem.fstatSync(fd).size);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** Entries in the journal since it was last {@link reset}. */
  get entryCount(): number {
    return this.#entryCount;
  }

  /** Bytes of the journal's complete entries since it was last {@link reset} (the file's size when clean). */
  get byteLength(): number {
    return this.#length;
  }

  /**
   * Appends `lines`, `count` encoded entries each ending in a newline (see
   * {@link encodeJournalLine}), durably (see the module comment), in one write: all of them or,
   * when it fails, none (the partial bytes are cut off). Throws a {@link StoreUnavailableError}
   * when the write fails, or when the bytes of an earlier failed write still cannot be cut off
   * (the file then holds only complete entries, or is fenced); an Error when closed.
   */
  appendLines(lines: string, count: number): void {
    const fd = this.#openFd();
    const bytes = Buffer.from(lines, 'utf8');
    if (this.#dirtyBy !== undefined) {
      const cutError = this.#cutBack(fd);
      if (cutError !== undefined) throw journalUnavailable(this.path, this.#dirtyBy, cutError);
    }
    try {
      writeFully(fd, bytes, (...args) => this.#fs.writeSync(...args));
    } catch (error) {
      this.#dirtyBy = error;
      throw journalUnavailable(this.path, error, this.#cutBack(fd));
    }
    this.#length += bytes.byteLength;
    this.#entryCount += count;
  }

  /** Empties the journal (after a snapshot took over its entries). Throws when closed, and fs errors. */
  reset(): void {
    this.#fs.ftruncateSync(this.#openFd(), 0);
    this.#length = 0;
    this.#dirtyBy = undefined;
    this.#entryCount = 0;
  }

  /** Closes the file; idempotent. */
  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  /** Cuts the file back to its last complete entry; returns the error when that fails (the file stays dirty). */
  #cutBack(fd: number): unknown {
    try {
      this.#fs.ftruncateSync(fd, this.#length);
      this.#dirtyBy = undefined;
      return undefined;
    } catch (error) {
      return error;
    }
  }

  #openFd(): number {
    if (this.#fd === undefined) throw new Error(`journal ${this.path} is closed`);
    return this.#fd;
  }
}

/** The journal line of `entry`, newline included. Throws as `encodeEntry` (an unencodable entry). */
export function encodeJournalLine(entry: JournalEntry): string {
  return `${encodeEntry(entry)}\n`;
}

/** The error of an append that failed with `writeError` (and `cutError`, when the partial entry could not be cut off). */
function journalUnavailable(path: string, writeError: unknown, cutError: unknown): StoreUnavailableError {
  const notCut = cutError === undefined ? '' : `, and cutting off the partly written entry failed too (${describeFsError(cutError)})`;
  const until = isOutOfSpace(writeError) ? 'space is free' : 'the file can be written again';
  return new StoreUnavailableError(
    `the embedded store could not write to ${path}: ${describeFsError(writeError)}${notCut}; ` +
      `writes are refused until ${until} (this write was not saved)`,
    { cause: writeError },
  );
}

