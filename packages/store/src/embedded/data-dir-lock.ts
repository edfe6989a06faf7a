/**
 * Exclusive ownership of a data directory by one process, with proper-lockfile: the lock is the
 * directory `<dataDir>/switchyard.lock` (created atomically by mkdir) holding `owner.json`, the
 * holder's {@link LockOwner} record. The holder refreshes the lock's mtime every `updateMs`; a
 * lock not refreshed for `staleMs` is abandoned (its holder crashed, or ran in a container that
 * is gone) and the next locker takes it over.
 *
 * Locking therefore: takes over at once a lock whose holder is known to be gone (same machine
 * and pid namespace, that process no longer runs: the usual restart after a crash); refuses at
 * once a lock whose holder is known to run; and otherwise (holder in another container or on
 * another host, so its liveness cannot be checked) retries until the lock is stale, so that a
 * container restarted right after a crash waits at most `staleMs` instead of failing.
 *
 * A `LOCK` file holding a pid, the lock of older versions, is removed with a warning once the new
 * lock is held: a pid cannot tell a live holder from a dead one in a fresh container.
 */
import { mkdir, readFileSync, renameSync, rm, rmSync, stat, statSync, utimes, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { lock as lockFile } from 'proper-lockfile';
import { describeFsError, errorCode } from './fs-error.ts';
import { currentOwner, describeOwner, ownerStatus, parseOwner, type LockOwner } from './lock-owner.ts';
import { processWarning, type WarningSink } from './warnings.ts';

/** Name of the lock directory inside a data directory. */
export const LOCK_NAME = 'switchyard.lock';
/** Name of the owner record inside the lock directory. */
export const OWNER_FILE = 'owner.json';
/** Name of the lock file of older versions (a pid). */
export const LEGACY_LOCK_NAME = 'LOCK';

/** Timings of the lock, all in milliseconds. */
export interface DataDirLockTimings {
  /** Age of its last refresh past which a lock counts as abandoned; default 10 000, at least 2 000 (proper-lockfile's minimum). */
  staleMs?: number;
  /** Interval of the holder's refreshes; default `staleMs / 5`, between 1 000 and `staleMs / 2` (proper-lockfile's bounds). */
  updateMs?: number;
  /** How long locking retries a lock whose holder cannot be checked; default `staleMs + 2 000` (outlasts a just-abandoned lock). */
  waitMs?: number;
  /** Pause between attempts while waiting; default 250. */
  retryIntervalMs?: number;
}

/** Options of {@link lockDataDir}. */
export interface DataDirLockOptions extends DataDirLockTimings {
  /** Receives warnings (legacy lock removed, abandoned lock taken over, lock lost); default `process.emitWarning`. */
  warn?: WarningSink;
  /**
   * Called once, from a timer, when the lock was lost (its refresh failed past `staleMs`, or
   * another process removed or took it): the holder must stop writing. Must not throw. The
   * warning is emitted in any case.
   */
  onCompromised?: (error: Error) => void;
}

/** A held lock. */
export interface DataDirLock {
  /** The lock directory. */
  readonly path: string;
  /** Removes the lock unless it was lost meanwhile; idempotent. Rejects with fs errors. */
  release(): Promise<void>;
}

/** The data directory is locked by another live instance. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  /** The lock directory. */
  readonly lockPath: string;
  /** The holder's record, when the lock has one. */
  readonly owner: LockOwner | undefined;

  /** `dir` is locked at `lockPath` by `owner`, last refreshed `refreshedMsAgo` ms ago; `staleMs` as in the timings. */
  constructor(dir: string, lockPath: string, owner: LockOwner | undefined, refreshedMsAgo: number, staleMs: number) {
    const holder = owner ? describeOwner(owner) : 'holder unknown';
    super(
      `data directory ${dir} is locked by another running Switchyard instance ` +
        `(${holder}; lock refreshed ${Math.max(0, Math.round(refreshedMsAgo / 1000))}s ago). ` +
        `Only one instance may use a data directory: stop the other one, or give this one its own DATA_DIR. ` +
        `If no instance is running (e.g. it ran in a container that is gone), the lock counts as abandoned ` +
        `${Math.round(staleMs / 1000)}s after its last refresh and the next start takes it over (lock: ${lockPath}).`,
    );
    this.lockPath = lockPath;
    this.owner = owner;
  }
}

/**
 * Locks the existing directory `dir` for this process (see the module comment). Rejects with a
 * {@link DataDirLockedError} when another live instance (or another store of this process)
 * holds it, and with an Error naming the directory and the fs error (e.g. `no space left on
 * device (ENOSPC)`) when the lock cannot be created.
 */
export async function lockDataDir(dir: string, options: DataDirLockOptions = {}): Promise<DataDirLock> {
  const timings = resolveTimings(options);
  const warn = options.warn ?? processWarning;
  const lockPath = join(dir, LOCK_NAME);
  const onCompromised = (error: Error): void => {
    warn(`embedded store: the lock ${lockPath} was lost (${error.message}); this instance refuses writes to ${dir} from now on, restart it`);
    options.onCompromised?.(error);
  };
  const deadline = Date.now() + timings.waitMs;
  let waiting = false;
  for (;;) {
    try {
      const release = await lockFile(dir, {
        lockfilePath: lockPath,
        stale: timings.staleMs,
        update: timings.updateMs,
        realpath: false,
        retries: 0,
        fs: LOCK_FS,
        onCompromised,
      });
      removeLegacyLock(dir, warn);
      return heldLock(lockPath, release);
    } catch (error) {
      if (errorCode(error) !== 'ELOCKED') {
        throw new Error(`could not lock data directory ${dir}: ${describeFsError(error)}`, { cause: error });
      }
    }
    const holder = inspectLock(lockPath);
    if (holder === undefined) continue; // released meanwhile: try again
    const status = holder.owner ? ownerStatus(holder.owner) : 'unknown';
    if (status === 'gone' && holder.owner) {
      takeOverAbandoned(lockPath, holder.owner, warn);
      continue;
    }
    if (status === 'alive' || Date.now() >= deadline) {
      throw new DataDirLockedError(dir, lockPath, holder.owner, Date.now() - holder.mtimeMs, timings.staleMs);
    }
    if (!waiting) {
      waiting = true;
      warn(
        `embedded store: ${dir} is locked by ${holder.owner ? describeOwner(holder.owner) : 'an unknown holder'}, which cannot be checked from here; ` +
          `waiting up to ${Math.ceil((deadline - Date.now()) / 1000)}s for the lock to be released or to go stale (no refresh for ${timings.staleMs / 1000}s)`,
      );
    }
    await sleep(timings.retryIntervalMs);
  }
}

function resolveTimings(timings: DataDirLockTimings): Required<DataDirLockTimings> {
  const staleMs = Math.max(timings.staleMs ?? 10_000, 2_000);
  const updateMs = Math.min(Math.max(timings.updateMs ?? staleMs / 5, 1_000), staleMs / 2);
  return { staleMs, updateMs, waitMs: timings.waitMs ?? staleMs + 2_000, retryIntervalMs: timings.retryIntervalMs ?? 250 };
}

function heldLock(path: string, release: () => Promise<void>): DataDirLock {
  let released: Promise<void> | undefined;
  return {
    path,
    release: () =>
      (released ??= release().catch((error: unknown) => {
        if (errorCode(error) !== 'ERELEASED') throw error; // ERELEASED: lost already (compromised)
      })),
  };
}

/**
 * The file system proper-lockfile works through: node:fs, except that creating the lock also
 * writes the owner record into it (before proper-lockfile sets the mtime it then watches), and
 * removing it removes the record too.
 */
const LOCK_FS = {
  mkdir(path: string, callback: (error: NodeJS.ErrnoException | null) => void): void {
    mkdir(path, (error) => {
      if (error) return callback(error);
      try {
        writeFileSync(join(path, OWNER_FILE), `${JSON.stringify(currentOwner())}\n`);
      } catch {
        // Best effort (e.g. a full disk): without a record, others only go by the lock's staleness.
        rmSync(join(path, OWNER_FILE), { force: true });
      }
      callback(null);
    });
  },
  stat,
  utimes,
  rmdir: (path: string, callback: (error: NodeJS.ErrnoException | null) => void) => rm(path, { recursive: true }, callback),
  rmdirSync: (path: string) => rmSync(path, { recursive: true }),
};

/** The lock's holder record (when readable) and mtime; undefined when there is no lock. */
function inspectLock(lockPath: string): { owner: LockOwner | undefined; mtimeMs: number } | undefined {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(lockPath).mtimeMs;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  return { owner: readOwner(lockPath), mtimeMs };
}

function readOwner(lockPath: string): LockOwner | undefined {
  try {
    return parseOwner(readFileSync(join(lockPath, OWNER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Removes the lock at `lockPath` of `owner`, known gone. Moved aside first (atomic), and put back
 * when what was moved turns out to be another holder's (who took it over meanwhile).
 */
function takeOverAbandoned(lockPath: string, owner: LockOwner, warn: WarningSink): void {
  const aside = `${lockPath}.abandoned-${randomBytes(6).toString('hex')}`;
  try {
    renameSync(lockPath, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  const moved = readOwner(aside);
  if (moved?.pid !== owner.pid || moved.startTicks !== owner.startTicks || moved.since !== owner.since) {
    try {
      renameSync(aside, lockPath);
    } catch {
      // A third process locked meanwhile; the one whose lock was moved will find it lost.
      rmSync(aside, { recursive: true, force: true });
    }
    return;
  }
  rmSync(aside, { recursive: true, force: true });
  warn(`embedded store: took over the lock ${lockPath} of ${describeOwner(owner)}, which no longer runs`);
}

/** Removes a legacy `LOCK` file (see the module comment); never fails. */
function removeLegacyLock(dir: string, warn: WarningSink): void {
  const path = join(dir, LEGACY_LOCK_NAME);
  let content: string;
  try {
    content = readFileSync(path, 'utf8').trim();
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') warn(`embedded store: ignoring ${path}, a lock file of an older version (${describeFsError(error)})`);
    return;
  }
  try {
    rmSync(path, { force: true });
    warn(
      `embedded store: removed ${path} (pid ${content || 'unknown'}), the lock file of an older Switchyard version; ` +
        `the data directory is now locked by ${join(dir, LOCK_NAME)}`,
    );
  } catch (error) {
    warn(`embedded store: ignoring ${path}, a lock file of an older version that could not be removed (${describeFsError(error)})`);
  }
}
