/**
 * Exclusive ownership of a data directory by one process: a `LOCK` file holding the owner's pid,
 * created atomically (hard link of a fully written temporary file, so it is never seen empty).
 * A lock whose process no longer exists (crash, kill -9) is taken over.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasErrorCode } from './sync-fs.ts';

/** A held lock. */
export interface DataDirLock {
  /** Removes the lock file if this process still owns it; idempotent. */
  release(): void;
}

/**
 * Locks the existing directory `dir` for this process. Throws an Error naming the owner's pid
 * when a live process (this one included) holds it, and fs errors.
 */
export function lockDataDir(dir: string): DataDirLock {
  const path = join(dir, 'LOCK');
  const temporary = `${path}.${process.pid}`;
  writeFileSync(temporary, `${process.pid}\n`);
  try {
    for (;;) {
      try {
        linkSync(temporary, path);
        return { release: () => releaseLock(path) };
      } catch (error) {
        if (!hasErrorCode(error, 'EEXIST')) throw error;
      }
      const owner = readOwner(path);
      if (owner !== undefined && isRunning(owner)) {
        throw new Error(
          `data directory ${dir} is in use by process ${owner}${owner === process.pid ? ' (this process)' : ''}: ` +
            `only one store may open it. If that process is not a Switchyard store, delete ${path}.`,
        );
      }
      rmSync(path, { force: true });
    }
  } finally {
    rmSync(temporary, { force: true });
  }
}

function releaseLock(path: string): void {
  if (readOwner(path) === process.pid) rmSync(path, { force: true });
}

function readOwner(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return hasErrorCode(error, 'EPERM');
  }
}
