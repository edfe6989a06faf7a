/**
 * Synchronous, streaming line reading of journal and snapshot files (no size limit: lines are
 * decoded one by one from 1 MiB chunks).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { hasErrorCode } from './sync-fs.ts';

/** One line of a file. */
export interface Line {
  /** The line's text, without its newline (UTF-8). */
  readonly text: string;
  /** 1-based line number. */
  readonly number: number;
  /** Byte offset of the line's first byte. */
  readonly start: number;
  /** Length of the line in bytes, without its newline. */
  readonly bytes: number;
  /** False for a last line with no newline (e.g. an append cut short by a crash). */
  readonly terminated: boolean;
}

const CHUNK_BYTES = 1 << 20;

/** The lines of the file at `path`, in order; none when the file does not exist. Throws other fs errors. */
export function* readLines(path: string): Generator<Line> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return;
    throw error;
  }
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    const pending: Buffer[] = [];
    let chunkStart = 0;
    let lineStart = 0;
    let number = 0;
    for (let size = readSync(fd, chunk, 0, CHUNK_BYTES, null); size > 0; size = readSync(fd, chunk, 0, CHUNK_BYTES, null)) {
      const view = chunk.subarray(0, size);
      let from = 0;
      for (let newline = view.indexOf(10, from); newline !== -1; newline = view.indexOf(10, from)) {
        const tail = view.subarray(from, newline);
        const raw = pending.length > 0 ? Buffer.concat([...pending, tail]) : tail;
        pending.length = 0;
        yield { text: raw.toString('utf8'), number: ++number, start: lineStart, bytes: raw.byteLength, terminated: true };
        from = newline + 1;
        lineStart = chunkStart + from;
      }
      if (from < size) pending.push(Buffer.from(view.subarray(from)));
      chunkStart += size;
    }
    if (pending.length > 0) {
      const raw = Buffer.concat(pending);
      yield { text: raw.toString('utf8'), number: ++number, start: lineStart, bytes: raw.byteLength, terminated: false };
    }
  } finally {
    closeSync(fd);
  }
}
