/**
 * Group commit: the writes of one event-loop turn reach the journal in one write, settle only once
 * written, and a failed batch rejects every operation of the turn and leaves memory as before it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../document-collection.ts';
import { StoreUnavailableError } from '../errors.ts';
import type { TestDoc } from '../testing/test-document.ts';
import { openEmbeddedStore } from './embedded-store.ts';
import { nodeJournalFileSystem, type JournalFileSystem } from './journal.ts';

/** node:fs, counting writes; every write fails with ENOSPC while `full`. */
class CountingDisk implements JournalFileSystem {
  writes = 0;
  full = false;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number {
    this.writes += 1;
    if (this.full) throw Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
    return nodeJournalFileSystem.writeSync(fd, buffer, offset, length);
  }
  ftruncateSync(fd: number, length: number): void {
    nodeJournalFileSystem.ftruncateSync(fd, length);
  }
  fstatSync(fd: number): { size: number } {
    return nodeJournalFileSystem.fstatSync(fd);
  }
}

let dataDir: string;
let disk: CountingDisk;
let store: DocumentStore | undefined;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-group-commit-'));
  disk = new CountingDisk();
  store = await openEmbeddedStore({ dataDir, journalFileSystem: disk });
});

afterEach(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const journalLines = () => readFileSync(join(dataDir, 'journal.jsonl'), 'utf8').split('\n').filter((line) => line !== '');

describe('group commit', () => {
  it('writes the writes of one turn in one write, and settles them only once written', async () => {
    const items = store!.collection<TestDoc>('items');
    let settled = 0;
    const writes = Array.from({ length: 20 }, (_, i) => items.insertOne({ _id: i }).then(() => (settled += 1)));
    // A compare-and-set in the same turn sees the writes made before it.
    const claimed = items.findOneAndUpdate({ _id: 3, owner: { $exists: false } }, { $set: { owner: 'a' } });
    const lost = items.findOneAndUpdate({ _id: 3, owner: { $exists: false } }, { $set: { owner: 'b' } });
    await Promise.resolve();
    expect(settled).toBe(0);
    expect(journalLines()).toEqual([]);
    await Promise.all(writes);
    expect(await claimed).toEqual({ _id: 3, owner: 'a' });
    expect(await lost).toBeNull();
    expect(disk.writes).toBe(1);
    expect(journalLines()).toHaveLength(21);
  });

  it('rejects every operation of a failed batch, reads included, and undoes its changes newest first', async () => {
    const items = store!.collection<TestDoc>('items');
    await items.createIndex({ seq: 1 }, { unique: true });
    await items.insertOne({ _id: 1, seq: 1, n: 0 });
    await items.insertOne({ _id: 2, seq: 2, n: 0 });
    const before = readFileSync(join(dataDir, 'journal.jsonl'));

    disk.full = true;
    const outcomes = await Promise.allSettled([
      items.insertOne({ _id: 3, seq: 3 }),
      items.updateOne({ _id: 1 }, { $inc: { n: 1 } }),
      items.updateOne({ _id: 1 }, { $inc: { n: 1 } }),
      items.deleteOne({ _id: 2 }),
      items.createIndex({ n: 1 }),
      items.findOne({ _id: 3 }),
      items.insertOne({ _id: 4, seq: 3 }), // clashes with _id 3 of the same batch: the batch's error wins
    ]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    }
    expect(readFileSync(join(dataDir, 'journal.jsonl'))).toEqual(before);

    disk.full = false;
    expect(await items.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 1, seq: 1, n: 0 },
      { _id: 2, seq: 2, n: 0 },
    ]);
    // The unique index holds exactly the surviving keys again: seq 3 is free, seq 2 is taken.
    await items.insertOne({ _id: 5, seq: 3 });
    await expect(items.insertOne({ _id: 6, seq: 2 })).rejects.toMatchObject({ code: 11000 });
    // The index created in the failed batch is gone, so it can be created again.
    expect(await items.createIndex({ n: 1 })).toBe('n_1');
    await store!.close();
    store = await openEmbeddedStore({ dataDir });
    expect((await store.collection<TestDoc>('items').find({}, { sort: { _id: 1 } })).map((doc) => doc._id)).toEqual([1, 2, 5]);
  });

  it('writes the pending batch before closing', async () => {
    const items = store!.collection<TestDoc>('items');
    const write = items.insertOne({ _id: 'last' });
    await store!.close();
    await write;
    store = await openEmbeddedStore({ dataDir });
    expect(await store.collection<TestDoc>('items').findOne({ _id: 'last' })).toEqual({ _id: 'last' });
  });
});
