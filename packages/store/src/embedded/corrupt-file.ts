/**
 * The error for an unreadable entry that cannot be explained by an interrupted append (anywhere in
 * a snapshot, or before the last line of a journal), and the repair command it points to.
 */
import { dirname, resolve } from 'node:path';
import type { Line } from './line-reader.ts';

/** The shell command that repairs the data directory `dataDir` (made absolute, quoted when needed). */
export function repairCommand(dataDir: string): string {
  const absolute = resolve(dataDir);
  const quoted = /^[\w@%+=:,./-]+$/.test(absolute) ? absolute : `'${absolute.replaceAll("'", `'\\''`)}'`;
  return `npm run store:repair -- ${quoted}`;
}

/** An unreadable entry in a data file; the store refuses to open until the file is repaired. */
export class CorruptFileError extends Error {
  override readonly name = 'CorruptFileError';
  /** The file holding the entry. */
  readonly path: string;
  /** 1-based line number of the entry. */
  readonly lineNumber: number;
  /** Byte offset of the line's first byte in the file. */
  readonly offset: number;

  /**
   * `line` of the file at `path` could not be decoded, for `reason`. The message names file, line
   * and byte offset, and the repair command (`npm run store:repair -- <data directory>`).
   */
  constructor(path: string, line: Line, reason: string, options: { cause?: unknown } = {}) {
    super(
      `${path}:${line.number}: unreadable entry at byte offset ${line.start} (${reason}); the file is corrupt. ` +
        `Run \`${repairCommand(dirname(path))}\` to keep every readable entry and drop the unreadable ones ` +
        `(the original files are kept as backups), then start again.`,
      { cause: options.cause },
    );
    this.path = path;
    this.lineNumber = line.number;
    this.offset = line.start;
  }
}
