/**
 * Durability of the embedded backend under a data directory: reopening, crashes (a real kill -9
 * of a writer process), torn journal tails, corruption, compaction, and the directory lock.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ObjectId } from 'mongodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isDuplicateKeyError, type DocumentStore } from '../document-collection.ts';
import { StoreUnavailableError } from '../errors.ts';
import type { TestDoc } from '../testing/test-document.ts';
import { openEmbeddedStore } from './embedded-store.ts';
import { CorruptFileError } from './corrupt-file.ts';
import { LOCK_NAME } from './data-dir-lock.ts';
import { encodeEntry } from './journal-entry.ts';
import { repairDataDir } from './repair.ts';

let dataDir: string;
const openStores: DocumentStore[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-embedded-'));
});

afterEach(async () => {
  for (const store of openStores.splice(0)) await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function open(compactionMinEntries?: number): Promise<DocumentStore> {
  const store = await openEmbeddedStore({ dataDir, compactionMinEntries });
  openStores.push(store);
  return store;
}

async function close(store: DocumentStore): Promise<void> {
  openStores.splice(openStores.indexOf(store), 1);
  await store.close();
}

const journal = () => join(dataDir, 'journal.jsonl');

/** The error `promise` rejects with (fails when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('embedded store persistence', () => {
  it('sees every write after close and reopen, with types and unique indexes intact', async () => {
    const first = await open();
    const runs = first.collection<TestDoc>('runs');
    await runs.createIndex({ name: 1 }, { unique: true });
    const id = new ObjectId();
    const at = new Date('2026-03-04T05:06:07Z');
    await runs.insertOne({ _id: id, name: 'a', at, payload: { $date: 'user data', 'a.b': [1, { c: null }] } });
    await runs.insertOne({ _id: 'b', name: 'b' });
    await runs.insertOne({ _id: 'c', name: 'c' });
    await runs.updateOne({ _id: 'b' }, { $set: { state: 'done' } });
    await runs.deleteOne({ _id: 'c' });
    await close(first);

    const second = await open();
    const reopened = second.collection<TestDoc>('runs');
    expect(await reopened.find({}, { sort: { name: 1 } })).toEqual([
      { _id: id, name: 'a', at, payload: { $date: 'user data', 'a.b': [1, { c: null }] } },
      { _id: 'b', name: 'b', state: 'done' },
    ]);
    const clash = await reopened.insertOne({ _id: 'd', name: 'a' }).catch((error: unknown) => error);
    expect(isDuplicateKeyError(clash)).toBe(true);
  });

  it('loses no acknowledged write when the writing process is killed with SIGKILL', async () => {
    const acknowledged = await runCrashWriter(dataDir, 300);
    const store = await open();
    const items = store.collection<TestDoc>('items');
    const lastAcknowledged = acknowledged.at(-1)!;
    const stored = new Set((await items.find({}, { projection: { seq: 1 } })).map((doc) => doc.seq as number));
    for (const seq of acknowledged) expect(stored.has(seq)).toBe(true);
    expect([...stored].every((seq) => seq <= lastAcknowledged + 1)).toBe(true);
    const bumps = (await store.collection<TestDoc>('counters').findOne({ _id: 'bumps' }))!.n as number;
    expect(bumps).toBeGreaterThanOrEqual(5 * (lastAcknowledged + 1));
    expect(bumps).toBeLessThanOrEqual(5 * stored.size);
    expect(existsSync(join(dataDir, 'snapshot.jsonl'))).toBe(true);
  });

  it('ignores a torn last journal line with a warning naming file and offset, and keeps appending cleanly after it', async () => {
    const first = await open();
    await first.collection<TestDoc>('items').insertOne({ _id: 1 });
    await first.collection<TestDoc>('items').insertOne({ _id: 2 });
    await close(first);
    const tornAt = readFileSync(journal()).byteLength;
    appendFileSync(journal(), '{"op":"put","coll":"items","bson":"AAAA');

    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const second = await open();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining(`dropped the incomplete last entry of ${journal()} (line 3, byte offset ${tornAt}, 39 bytes)`));
    warn.mockRestore();
    expect(readFileSync(journal()).byteLength).toBe(tornAt);
    expect(await second.collection<TestDoc>('items').countDocuments({})).toBe(2);
    await second.collection<TestDoc>('items').insertOne({ _id: 3 });
    await close(second);

    const third = await open();
    expect((await third.collection<TestDoc>('items').find({}, { sort: { _id: 1 } })).map((doc) => doc._id)).toEqual([1, 2, 3]);
  });

  it('never drops a complete last line it cannot read (an acknowledged entry appended onto torn bytes): it refuses, and repair keeps the entry', async () => {
    const first = await open();
    await first.collection<TestDoc>('items').insertOne({ _id: 1 });
    await first.collection<TestDoc>('items').insertOne({ _id: 2 });
    await close(first);
    const lines = readFileSync(journal(), 'utf8').split('\n');
    lines[1] = `{"op":"put","co${lines[1]}`; // what an older version left after a failed append
    writeFileSync(journal(), lines.join('\n'));
    const refused = await open().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CorruptFileError);
    expect((refused as Error).message).toContain(`${journal()}:2: unreadable entry`);
    const report = await repairDataDir(dataDir);
    expect(report.openError).toBeUndefined();
    const repaired = await open();
    expect((await repaired.collection<TestDoc>('items').find({}, { sort: { _id: 1 } })).map((doc) => doc._id)).toEqual([1, 2]);
  });

  it('refuses to open a journal corrupt before its last line, naming the file, line, byte offset and repair command', async () => {
    const first = await open();
    await first.collection<TestDoc>('items').insertOne({ _id: 1 });
    await first.collection<TestDoc>('items').insertOne({ _id: 2 });
    await first.collection<TestDoc>('items').insertOne({ _id: 3 });
    await close(first);
    const lines = readFileSync(journal(), 'utf8').split('\n');
    const offset = Buffer.byteLength(`${lines[0]}\n`);
    lines[1] = 'garbage';
    writeFileSync(journal(), lines.join('\n'));
    const refused = await open().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CorruptFileError);
    expect((refused as Error).message).toContain(`${journal()}:2: unreadable entry at byte offset ${offset} (`);
    expect((refused as Error).message).toContain(`Run \`npm run store:repair -- ${dataDir}\``);
    expect(existsSync(join(dataDir, LOCK_NAME))).toBe(false);
  });

  it('a dropped index stays dropped across reopen and compaction; a TTL option is kept', async () => {
    const first = await open();
    const items = first.collection<TestDoc>('items');
    await items.createIndex({ email: 1 }, { unique: true, name: 'email' });
    await items.createIndex({ expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 60 });
    await items.insertOne({ _id: 1, email: 'x@y' });
    expect(await items.dropIndex('email')).toBe(true);
    await close(first);

    const second = await open();
    await second.collection<TestDoc>('items').insertOne({ _id: 2, email: 'x@y' });
    expect(await second.collection('items').createIndex({ expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 60 })).toBe('ttl');
    await second.compact();
    await close(second);

    const third = await open();
    expect(await third.collection('items').countDocuments({ email: 'x@y' })).toBe(2);
    expect(await third.collection('items').dropIndex('email')).toBe(false);
    expect(await rejection(third.collection('items').createIndex({ expires_at: 1 }, { name: 'ttl' }))).toMatchObject({ code: 85 });
  });

  it('compacts the journal into a snapshot, keeping data and indexes across reopen', async () => {
    const first = await open(20);
    const counters = first.collection<TestDoc>('counters');
    await counters.createIndex({ label: 1 }, { unique: true });
    for (let i = 0; i < 5; i += 1) await counters.insertOne({ _id: i, label: `c${i}`, n: 0 });
    for (let round = 0; round < 40; round += 1) await counters.updateOne({ _id: round % 5 }, { $inc: { n: 1 } });
    expect(existsSync(join(dataDir, 'snapshot.jsonl'))).toBe(true);
    expect(readFileSync(journal(), 'utf8').split('\n').length).toBeLessThan(25);
    await close(first);
    writeFileSync(join(dataDir, 'snapshot.jsonl.tmp'), 'left by a crash during compaction');

    const second = await open(20);
    const reopened = second.collection<TestDoc>('counters');
    expect((await reopened.find({}, { sort: { _id: 1 } })).map((doc) => doc.n)).toEqual([8, 8, 8, 8, 8]);
    const clash = await reopened.insertOne({ _id: 9, label: 'c1' }).catch((error: unknown) => error);
    expect(isDuplicateKeyError(clash)).toBe(true);
    expect(existsSync(join(dataDir, 'snapshot.jsonl.tmp'))).toBe(false);
  });

  it('recovers from a crash between writing the snapshot and emptying the journal', async () => {
    const store = await open(10);
    const items = store.collection<TestDoc>('items');
    for (let i = 0; i < 3; i += 1) await items.insertOne({ _id: i, n: 0 });
    // Find the write that triggered a compaction, and rebuild the journal as it was just before the reset.
    let journalBefore = readFileSync(journal(), 'utf8');
    let journalAtCrash: string | undefined;
    while (journalAtCrash === undefined) {
      await items.updateOne({ _id: 0 }, { $inc: { n: 1 } });
      const journalNow = readFileSync(journal(), 'utf8');
      if (journalNow.length < journalBefore.length) {
        const written = (await items.findOne({ _id: 0 }))!;
        journalAtCrash = `${journalBefore}${encodeEntry({ op: 'put', collection: 'items', document: written })}\n`;
      }
      journalBefore = journalNow;
    }
    const expected = await items.find({}, { sort: { _id: 1 } });
    await close(store);
    writeFileSync(journal(), journalAtCrash);

    const reopened = await open(10);
    expect(await reopened.collection<TestDoc>('items').find({}, { sort: { _id: 1 } })).toEqual(expected);
  });

  it('keeps every write, warns, and retries later when a compaction fails', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const store = await open(5);
    mkdirSync(join(dataDir, 'snapshot.jsonl.tmp'));
    writeFileSync(join(dataDir, 'snapshot.jsonl.tmp', 'blocker'), '');
    const items = store.collection<TestDoc>('items');
    await items.insertOne({ _id: 1, n: 0 });
    for (let round = 0; round < 10; round += 1) await items.updateOne({ _id: 1 }, { $inc: { n: 1 } });
    expect(warn).toHaveBeenCalledOnce();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('compaction'));
    expect(existsSync(join(dataDir, 'snapshot.jsonl'))).toBe(true);
    await close(store);
    warn.mockRestore();

    const reopened = await open(5);
    expect(await reopened.collection<TestDoc>('items').findOne({ _id: 1 })).toEqual({ _id: 1, n: 10 });
  });

  it('lets only one store open a data directory at a time, and releases it at close', async () => {
    const first = await open();
    await expect(openEmbeddedStore({ dataDir })).rejects.toThrow(`data directory ${dataDir} is locked by another running Switchyard instance`);
    await close(first);
    expect(existsSync(join(dataDir, LOCK_NAME))).toBe(false);
    await open();
  });

  it('opens despite the LOCK file of an older version naming a live pid (pid 1 after a container restart)', async () => {
    const first = await open();
    await first.collection<TestDoc>('items').insertOne({ _id: 1 });
    await close(first);
    writeFileSync(join(dataDir, 'LOCK'), '1\n');
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const second = await open();
    warn.mockRestore();
    expect(await second.collection<TestDoc>('items').countDocuments({})).toBe(1);
    expect(existsSync(join(dataDir, 'LOCK'))).toBe(false);
  });

  it('refuses writes, without crashing, once its lock is lost', async () => {
    const warnings: string[] = [];
    const store = await openEmbeddedStore({ dataDir, lock: { staleMs: 2_000, updateMs: 1_000 }, onWarning: (message) => warnings.push(message) });
    openStores.push(store);
    const items = store.collection<TestDoc>('items');
    await items.insertOne({ _id: 1 });
    rmSync(join(dataDir, LOCK_NAME), { recursive: true });
    await vi.waitFor(() => expect(warnings.join('\n')).toContain('was lost'), { timeout: 10_000, interval: 50 });
    const refused = await items.insertOne({ _id: 2 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toContain(`the embedded store lost its lock on ${dataDir}`);
    expect(await items.find({})).toEqual([{ _id: 1 }]);
  });

  it('rejects writes after close', async () => {
    const store = await open();
    await close(store);
    await expect(store.collection<TestDoc>('items').insertOne({ _id: 1 })).rejects.toThrow('closed');
  });
});

/**
 * Runs fixtures/crash-writer.ts on `dir`, SIGKILLs it once it acknowledged `steps` steps, and
 * returns every acknowledged step number read from its stdout.
 */
function runCrashWriter(dir: string, steps: number): Promise<number[]> {
  const script = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acknowledged: number[] = [];
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const lines = stdout.split('\n');
    stdout = lines.pop()!;
    for (const line of lines) acknowledged.push(Number(line));
    if (acknowledged.length >= steps) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' && acknowledged.length >= steps) resolve(acknowledged);
      else reject(new Error(`crash writer exited early (code ${code}, signal ${signal}): ${stderr}`));
    });
  });
}
