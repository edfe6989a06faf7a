/**
 * Small synchronous file-system helpers for the embedded store's durable writes.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { errorCode } from './fs-error.ts';

/** `write(2)`: writes `length` bytes of `buffer` from `offset` to `fd`; returns how many it wrote (maybe fewer). */
export type WriteFunction = (fd: number, buffer: Uint8Array, offset: number, length: number) => number;

/**
 * Writes all of `data` (a string as UTF-8) to `fd` at its current position, looping over short
 * writes, through `write` (default `fs.writeSync`). Throws the fs error; bytes written before it
 * stay in the file.
 */
export function writeFully(fd: number, data: string | Uint8Array, write: WriteFunction = writeSync): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  for (let offset = 0; offset < bytes.byteLength; ) {
    offset += write(fd, bytes, offset, bytes.byteLength - offset);
  }
}

/** Characters gathered before one write by {@link writeLinesDurably}. */
const WRITE_BATCH_CHARS = 1 << 20;

/**
 * Writes `lines` (each without its newline) to `fd`, one newline after each, in writes of about
 * 1 MiB, then fsyncs the file. Throws fs errors (the file then holds a prefix of the lines).
 */
export function writeLinesDurably(fd: number, lines: Iterable<string>): void {
  let batch = '';
  for (const line of lines) {
    batch += `${line}\n`;
    if (batch.length >= WRITE_BATCH_CHARS) {
      writeFully(fd, batch);
      batch = '';
    }
  }
  writeFully(fd, batch);
  fsyncSync(fd);
}

/** fsyncs the directory `path`, making renames and creations in it durable. Throws the fs error. */
export function fsyncDirectory(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** True when `error` is a Node fs error with errno code `code` (e.g. 'ENOENT'). */
export function hasErrorCode(error: unknown, code: string): boolean {
  return errorCode(error) === code;
}
