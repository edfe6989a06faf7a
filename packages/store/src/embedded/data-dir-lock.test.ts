import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DataDirLockedError, LEGACY_LOCK_NAME, LOCK_NAME, OWNER_FILE, lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { currentOwner, type LockOwner } from './lock-owner.ts';

let dir: string;
const held: DataDirLock[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-lock-'));
});
afterEach(async () => {
  for (const lock of held.splice(0)) await lock.release();
  rmSync(dir, { recursive: true, force: true });
});

/** Locks `dir`; a wait long enough that a test relying on an immediate answer would time out instead. */
async function lock(options: Parameters<typeof lockDataDir>[1] = {}): Promise<DataDirLock> {
  const taken = await lockDataDir(dir, { waitMs: 60_000, warn: () => undefined, ...options });
  held.push(taken);
  return taken;
}

/** Leaves a lock as a process that did not release it would: the directory, its owner record, an mtime `ageMs` old. */
function leaveLock(owner: LockOwner, ageMs = 0): void {
  const path = join(dir, LOCK_NAME);
  mkdirSync(path);
  writeFileSync(join(path, OWNER_FILE), JSON.stringify(owner));
  const mtime = new Date(Date.now() - ageMs);
  utimesSync(path, mtime, mtime);
}

/** An owner record of another container: other pid namespace, pid 1. */
const otherContainer = (): LockOwner => ({ ...currentOwner(), pid: 1, pidNamespace: 'pid:[1]', hostname: 'gone-container' });

describe('lockDataDir', () => {
  it('holds the directory, refuses a second locker at once with a clear message, and releases', async () => {
    const first = await lock();
    expect(JSON.parse(readFileSync(join(dir, LOCK_NAME, OWNER_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    const refused = await lockDataDir(dir, { waitMs: 60_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as Error).message).toContain(`data directory ${dir} is locked by another running Switchyard instance (this process, pid ${process.pid}`);
    expect((refused as Error).message).toMatch(/lock refreshed \d+s ago/);
    await first.release();
    await first.release();
    expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
    await lock();
  });

  it('refuses at once while another live process holds the directory', async () => {
    const script = fileURLToPath(new URL('./fixtures/lock-holder.ts', import.meta.url));
    const holder = spawn(process.execPath, ['--import', 'tsx', script, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
        holder.on('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
      });
      await expect(lock()).rejects.toThrow(`locked by another running Switchyard instance (pid ${holder.pid} on host`);
    } finally {
      holder.stdin.end();
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
  });

  it('takes over at once the lock of a process that no longer runs, even when its pid is in use again', async () => {
    const warn = vi.fn();
    const exited = spawnSync(process.execPath, ['-e', '']).pid!;
    leaveLock({ ...currentOwner(), pid: exited });
    await (await lockDataDir(dir, { waitMs: 60_000, warn })).release();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining(`took over the lock ${join(dir, LOCK_NAME)} of pid ${exited}`));

    // Same pid as a live process (as pid 1 is in every fresh container), but not the process that locked.
    leaveLock({ ...currentOwner(), startTicks: currentOwner().startTicks! - 1 });
    await (await lockDataDir(dir, { waitMs: 60_000, warn: () => undefined })).release();
  });

  it('takes over a stale lock of a container that is gone, and removes a legacy LOCK file', async () => {
    writeFileSync(join(dir, LEGACY_LOCK_NAME), '1\n');
    leaveLock(otherContainer(), 60 * 60_000);
    const warn = vi.fn();
    await lock({ warn });
    expect(existsSync(join(dir, LEGACY_LOCK_NAME))).toBe(false);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining(`removed ${join(dir, LEGACY_LOCK_NAME)} (pid 1), the lock file of an older Switchyard version`));
    expect(JSON.parse(readFileSync(join(dir, LOCK_NAME, OWNER_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('waits for a fresh lock whose holder cannot be checked to go stale, then takes it over', async () => {
    leaveLock(otherContainer());
    await expect(lockDataDir(dir, { staleMs: 2_000, waitMs: 0 })).rejects.toThrow(
      `data directory ${dir} is locked by another running Switchyard instance (pid 1 on host gone-container`,
    );
    await lock({ staleMs: 2_000, retryIntervalMs: 50 });
    expect(JSON.parse(readFileSync(join(dir, LOCK_NAME, OWNER_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('reports a lost lock through onCompromised and a warning instead of crashing', async () => {
    const onCompromised = vi.fn();
    const warn = vi.fn();
    await lock({ staleMs: 2_000, updateMs: 1_000, onCompromised, warn });
    rmSync(join(dir, LOCK_NAME), { recursive: true });
    await vi.waitFor(() => expect(onCompromised).toHaveBeenCalledOnce(), { timeout: 10_000, interval: 50 });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining(`the lock ${join(dir, LOCK_NAME)} was lost`));
  });
});
