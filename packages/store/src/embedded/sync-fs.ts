/**
 * Small synchronous file-system helpers for the embedded store's durable writes.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';

/** Writes all of `data` to `fd` at its current position (looping over short writes). Throws the fs error. */
export function writeFully(fd: number, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  for (let offset = 0; offset < bytes.byteLength; ) {
    offset += writeSync(fd, bytes, offset, bytes.byteLength - offset);
  }
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
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
