/**
 * `npm run store:repair`: keeps every readable entry, drops only unreadable bytes, keeps the
 * originals, refuses while the store is open.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestDoc } from '../testing/test-document.ts';
import { CorruptFileError } from './corrupt-file.ts';
import { openEmbeddedStore } from './embedded-store.ts';
import { encodeEntry } from './journal-entry.ts';
import { formatRepairReport, repairDataDir } from './repair.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
let dataDir: string;
const journal = () => join(dataDir, 'journal.jsonl');
const snapshot = () => join(dataDir, 'snapshot.jsonl');
const put = (id: number) => encodeEntry({ op: 'put', collection: 'items', document: { _id: id } });
const now = () => new Date('2026-01-02T03:04:05.678Z');

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-repair-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

async function storedIds(): Promise<unknown[]> {
  const store = await openEmbeddedStore({ dataDir, onWarning: () => undefined });
  try {
    return (await store.collection<TestDoc>('items').find({}, { sort: { _id: 1 } })).map((doc) => doc._id);
  } finally {
    await store.close();
  }
}

describe('repairDataDir', () => {
  it('keeps every readable entry, also one appended onto a torn write, and keeps the original', async () => {
    const torn = put(3).slice(0, 20); // a write a full disk cut short, with entry 4 appended onto it by an older version
    const original = `${put(1)}\n${put(2)}\n${torn}${put(4)}\nnot json\n${put(5)}\n${put(6).slice(0, 9)}`;
    writeFileSync(journal(), original);
    await expect(storedIds()).rejects.toBeInstanceOf(CorruptFileError);

    const report = await repairDataDir(dataDir, { now });
    const line3 = Buffer.byteLength(`${put(1)}\n${put(2)}\n`);
    const line4 = line3 + Buffer.byteLength(`${torn}${put(4)}\n`);
    const line6 = line4 + Buffer.byteLength(`not json\n${put(5)}\n`);
    const backup = `${journal()}.corrupt-2026-01-02T03-04-05-678Z`;
    expect(report).toEqual({
      dataDir,
      openError: undefined,
      files: [
        {
          path: journal(),
          kept: 4,
          backup,
          dropped: [
            { line: 3, offset: line3, bytes: 20, reason: expect.any(String), salvaged: true },
            { line: 4, offset: line4, bytes: 8, reason: expect.any(String), salvaged: false },
            { line: 6, offset: line6, bytes: 9, reason: expect.stringContaining('incomplete last line'), salvaged: false },
          ],
        },
      ],
    });
    expect(readFileSync(backup, 'utf8')).toBe(original);
    expect(readFileSync(journal(), 'utf8')).toBe(`${put(1)}\n${put(2)}\n${put(4)}\n${put(5)}\n`);
    expect(await storedIds()).toEqual([1, 2, 4, 5]);
    const printed = formatRepairReport(report);
    expect(printed).toContain('journal.jsonl: kept 4 entries, dropped unreadable bytes on 3 line(s):');
    expect(printed).toContain(`line 3, byte offset ${line3}: dropped 20 bytes before an intact entry, which was kept`);
    expect(printed).toContain(`line 4, byte offset ${line4}: dropped the line (8 bytes)`);
    expect(printed).toContain(`original kept as ${backup}`);
    expect(printed).toContain('the store opens: OK');
  });

  it('drops unreadable snapshot lines and leaves an intact journal untouched', async () => {
    writeFileSync(snapshot(), `${put(1)}\n{"op":"put","coll":"items","bson":"!!"}\n${put(2)}\n`);
    writeFileSync(journal(), `${put(3)}\n`);
    const report = await repairDataDir(dataDir, { now });
    expect(report.files.map((file) => [file.kept, file.dropped.length, file.backup !== undefined])).toEqual([
      [2, 1, true],
      [1, 0, false],
    ]);
    expect(readdirSync(dataDir).sort()).toEqual(['journal.jsonl', 'snapshot.jsonl', 'snapshot.jsonl.corrupt-2026-01-02T03-04-05-678Z']);
    expect(await storedIds()).toEqual([1, 2, 3]);
  });

  it('changes nothing in an intact directory', async () => {
    writeFileSync(journal(), `${put(1)}\n`);
    const report = await repairDataDir(dataDir);
    expect(formatRepairReport(report)).toBe(
      `Repair of data directory ${dataDir}:\n  journal.jsonl: intact, 1 entries, left untouched\n  nothing to repair: every entry is readable\n  the store opens: OK\n`,
    );
    expect(readdirSync(dataDir)).toEqual(['journal.jsonl']);
  });

  it('refuses while a store has the directory open', async () => {
    const store = await openEmbeddedStore({ dataDir });
    try {
      await expect(repairDataDir(dataDir, { lock: { waitMs: 60_000 } })).rejects.toThrow(
        `refusing to repair while the store is open: data directory ${dataDir} is locked by another running Switchyard instance`,
      );
    } finally {
      await store.close();
    }
  });

  it('runs as `npm run store:repair -- <DATA_DIR>`, exiting 0 when the store opens afterwards and 1 on failure', () => {
    writeFileSync(journal(), `garbage\n${put(1)}\n`);
    const run = (...args: string[]) => spawnSync('npm', ['run', '--silent', 'store:repair', '--', ...args], { cwd: ROOT, encoding: 'utf8' });
    const repaired = run(dataDir);
    expect(repaired.status, repaired.stderr).toBe(0);
    expect(repaired.stdout).toContain(`Repair of data directory ${dataDir}:\n  journal.jsonl: kept 1 entries, dropped unreadable bytes on 1 line(s):\n    line 1, byte offset 0: dropped the line (7 bytes): `);
    expect(existsSync(journal())).toBe(true);

    const missing = run(join(dataDir, 'absent'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`store:repair failed: ${join(dataDir, 'absent')} is not a data directory`);
    expect(run().status).toBe(2);
  });
});
