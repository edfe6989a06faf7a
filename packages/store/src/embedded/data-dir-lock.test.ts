import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockDataDir } from './data-dir-lock.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('lockDataDir', () => {
  it('holds the directory until released', () => {
    const lock = lockDataDir(dir);
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe(`${process.pid}\n`);
    expect(() => lockDataDir(dir)).toThrow(`in use by process ${process.pid} (this process)`);
    lock.release();
    expect(existsSync(join(dir, 'LOCK'))).toBe(false);
    lockDataDir(dir).release();
  });

  it('takes over the lock of a process that no longer runs, or an unreadable one', () => {
    const exited = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(join(dir, 'LOCK'), `${exited}\n`);
    lockDataDir(dir).release();
    writeFileSync(join(dir, 'LOCK'), 'garbage');
    lockDataDir(dir).release();
  });

  it('does not remove a lock another process took over', () => {
    const lock = lockDataDir(dir);
    writeFileSync(join(dir, 'LOCK'), '1\n');
    lock.release();
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toBe('1\n');
  });
});
