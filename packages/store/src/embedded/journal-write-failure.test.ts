/**
 * Failed journal writes (full disk, I/O errors), injected through the journal's file-system seam:
 * a failed write throws StoreUnavailableError, changes nothing in memory, leaves no partial
 * entry in the file, and the store writes again once the fault is gone.
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

/** A disk with `space` bytes left (unlimited when undefined), whose writes fail with `writeCode` once it is full, and whose truncations fail with `truncateCode` when set. */
class FaultyDisk implements JournalFileSystem {
  space: number | undefined;
  writeCode = 'ENOSPC';
  truncateCode: string | undefined;

  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number {
    if (this.space === 0) throw Object.assign(new Error(`${this.writeCode}: simulated failure, write`), { code: this.writeCode });
    const written = nodeJournalFileSystem.writeSync(fd, buffer, offset, Math.min(length, this.space ?? length));
    if (this.space !== undefined) this.space -= written;
    return written;
  }

  ftruncateSync(fd: number, length: number): void {
    if (this.truncateCode) throw Object.assign(new Error(`${this.truncateCode}: simulated failure, ftruncate`), { code: this.truncateCode });
    nodeJournalFileSystem.ftruncateSync(fd, length);
  }

  fstatSync(fd: number): { size: number } {
    return nodeJournalFileSystem.fstatSync(fd);
  }
}

let dataDir: string;
let disk: FaultyDisk;
const stores: DocumentStore[] = [];
let warnings: string[];
const journal = () => join(dataDir, 'journal.jsonl');
const journalBytes = () => readFileSync(journal());

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-faulty-'));
  disk = new FaultyDisk();
  warnings = [];
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function open(journalFileSystem?: JournalFileSystem): Promise<DocumentStore> {
  const store = await openEmbeddedStore({ dataDir, journalFileSystem, onWarning: (message) => warnings.push(message) });
  stores.push(store);
  return store;
}

async function reopenedIds(): Promise<unknown[]> {
  for (const store of stores.splice(0)) await store.close();
  const store = await open();
  return (await store.collection<TestDoc>('items').find({}, { sort: { _id: 1 } })).map((doc) => doc._id);
}

describe('journal write failures', () => {
  it('on a full disk: refuses the write with StoreUnavailableError, changes nothing, cuts the partial entry off, and recovers once space is free', async () => {
    const items = (await open(disk)).collection<TestDoc>('items');
    await items.insertOne({ _id: 1, n: 0 });
    await items.insertOne({ _id: 2, n: 0 });
    const before = journalBytes();

    disk.space = 30; // room for part of the next entry only
    const refused = await items.insertOne({ _id: 3, n: 0 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toBe(
      `the embedded store could not write to ${journal()}: no space left on device (ENOSPC); writes are refused until space is free (this write was not saved)`,
    );
    await expect(items.updateOne({ _id: 1 }, { $inc: { n: 1 } })).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(items.deleteOne({ _id: 2 })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await items.find({}, { sort: { _id: 1 } })).toEqual([{ _id: 1, n: 0 }, { _id: 2, n: 0 }]);
    expect(journalBytes()).toEqual(before);

    disk.space = undefined; // space is back
    await items.insertOne({ _id: 3, n: 0 });
    await items.updateOne({ _id: 1 }, { $inc: { n: 1 } });
    expect(await reopenedIds()).toEqual([1, 2, 3]);
    expect(await stores[0]!.collection<TestDoc>('items').findOne({ _id: 1 })).toEqual({ _id: 1, n: 1 });
  });

  it('when even the cut fails: fences writes, retries the cut before the next write, and recovers without a restart', async () => {
    const items = (await open(disk)).collection<TestDoc>('items');
    await items.insertOne({ _id: 1 });
    const clean = journalBytes();

    disk.space = 10;
    disk.writeCode = 'EIO';
    disk.truncateCode = 'EIO';
    const refused = await items.insertOne({ _id: 2 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toBe(
      `the embedded store could not write to ${journal()}: input/output error (EIO), and cutting off the partly written entry failed too ` +
        `(input/output error (EIO)); writes are refused until the file can be written again (this write was not saved)`,
    );
    const dirty = journalBytes();
    expect(dirty.byteLength).toBe(clean.byteLength + 10);

    disk.space = undefined; // writing would work, but the partial entry is still there: the store stays fenced
    await expect(items.insertOne({ _id: 3 })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(journalBytes()).toEqual(dirty);
    expect(await items.countDocuments({})).toBe(1);

    disk.truncateCode = undefined;
    await items.insertOne({ _id: 4 });
    expect(journalBytes().subarray(0, clean.byteLength)).toEqual(clean);
    expect(await reopenedIds()).toEqual([1, 4]);
  });

  it('replays exactly the acknowledged entries when the process dies before the partial entry was cut off', async () => {
    const items = (await open(disk)).collection<TestDoc>('items');
    await items.insertOne({ _id: 1 });
    disk.space = 25;
    disk.truncateCode = 'EIO';
    await expect(items.insertOne({ _id: 2 })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await reopenedIds()).toEqual([1]);
    expect(warnings).toEqual([expect.stringContaining(`dropped the incomplete last entry of ${journal()} (line 2, byte offset `)]);
  });
});
