/**
 * The embedded store on a real, small, full disk: a tmpfs in a private mount namespace (needs
 * root and `unshare`; skipped otherwise). Writes are refused with StoreUnavailableError while the
 * disk is full, nothing unacknowledged reaches memory or the journal, a compaction that cannot fit
 * leaves nothing behind, and writing resumes by itself once space is freed.
 */
import { existsSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../document-collection.ts';
import { StoreUnavailableError } from '../errors.ts';
import type { TestDoc } from '../testing/test-document.ts';
import { openEmbeddedStore } from './embedded-store.ts';
import { fillDisk, mountPrivateTmpfs, privateTmpfsUnavailable, type PrivateTmpfs } from './fixtures/private-tmpfs.ts';
import { decodeEntry } from './journal-entry.ts';
import { readLines } from './line-reader.ts';

const skipReason = privateTmpfsUnavailable();
if (skipReason) console.warn(`disk-full tests skipped: ${skipReason}`);

let tmpfs: PrivateTmpfs | undefined;
beforeEach(async () => {
  if (!skipReason) tmpfs = await mountPrivateTmpfs(256);
});
afterEach(async () => {
  await tmpfs?.close();
  tmpfs = undefined;
});

/** A data directory on this test's tmpfs, and a filler file holding `fillerBytes` of its space. */
function prepare(fillerBytes: number): { dataDir: string; filler: string } {
  const filler = join(tmpfs!.path, 'filler');
  writeFileSync(filler, Buffer.alloc(fillerBytes));
  return { dataDir: join(tmpfs!.path, 'data'), filler };
}

async function open(dataDir: string, warnings: string[] = [], compactionMinEntries?: number): Promise<DocumentStore> {
  return openEmbeddedStore({ dataDir, compactionMinEntries, onWarning: (message) => warnings.push(message) });
}

/** Every line of the journal is a complete, readable entry; returns how many. */
function cleanJournalEntries(dataDir: string): number {
  let count = 0;
  for (const line of readLines(join(dataDir, 'journal.jsonl'))) {
    expect(line.terminated).toBe(true);
    decodeEntry(line.text);
    count += 1;
  }
  return count;
}

describe.skipIf(skipReason)('embedded store on a full disk (private tmpfs)', () => {
  it('refuses writes with StoreUnavailableError while full, keeps memory and journal clean, and resumes once space is freed', async () => {
    const { dataDir, filler } = prepare(64 * 1024);
    const store = await open(dataDir);
    const items = store.collection<TestDoc>('items');
    await items.createIndex({ seq: 1 }, { unique: true });
    const acknowledged: number[] = [];
    let refused: unknown;
    for (let seq = 0; refused === undefined; seq += 1) {
      if (seq > 1_000) throw new Error('the 256 KiB disk never filled up');
      try {
        await items.insertOne({ _id: seq, seq, payload: 'x'.repeat(1_500) });
        acknowledged.push(seq);
      } catch (error) {
        refused = error;
      }
    }
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toContain(`could not write to ${join(dataDir, 'journal.jsonl')}: no space left on device (ENOSPC); writes are refused until space is free`);
    const failed = acknowledged.length;
    expect(failed).toBeGreaterThan(10);
    expect(await items.findOne({ _id: failed })).toBeNull();
    expect(await items.countDocuments({})).toBe(failed);
    expect(cleanJournalEntries(dataDir)).toBe(1 + failed); // the index, then one put per acknowledged insert

    // Still full: still refused, still clean, no restart involved.
    await expect(items.insertOne({ _id: failed, seq: failed, payload: 'x'.repeat(1_500) })).rejects.toBeInstanceOf(StoreUnavailableError);
    // An update journals only the fields it changes: one larger than the insert that did not fit.
    await expect(items.updateOne({ _id: 0 }, { $set: { touched: 'y'.repeat(4_000) } })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await items.findOne({ _id: 0 }, { projection: { touched: 1 } })).toEqual({ _id: 0 });
    expect(cleanJournalEntries(dataDir)).toBe(1 + failed);

    rmSync(filler);
    for (let seq = failed; seq < failed + 5; seq += 1) {
      await items.insertOne({ _id: seq, seq, payload: 'x'.repeat(1_500) });
      acknowledged.push(seq);
    }
    await store.close();

    const reopened = await open(dataDir);
    expect((await reopened.collection<TestDoc>('items').find({}, { sort: { _id: 1 }, projection: { _id: 1 } })).map((doc) => doc._id)).toEqual(acknowledged);
    await reopened.close();
  });

  it('loses nothing and leaves no temporary snapshot when a compaction does not fit, and compacts once space is freed', async () => {
    const { dataDir, filler } = prepare(0);
    const warnings: string[] = [];
    const store = await open(dataDir, warnings, 10);
    const docs = store.collection<TestDoc>('docs');
    await docs.insertOne({ _id: 'big', payload: 'y'.repeat(90_000) }); // its snapshot line needs ~120 KiB
    truncateSync(filler, fillDisk(filler) - 16 * 1024); // ~16 KiB left: room for small writes, not for a snapshot

    for (let n = 1; n <= 30; n += 1) await docs.updateOne({ _id: 'counter' }, { $set: { n } }, { upsert: true });
    expect(warnings.join('\n')).toMatch(/compaction of .* failed; the journal keeps growing \(ENOSPC/);
    expect(existsSync(join(dataDir, 'snapshot.jsonl'))).toBe(false);
    expect(readdirSync(dataDir).filter((name) => name.startsWith('snapshot'))).toEqual([]);
    expect(cleanJournalEntries(dataDir)).toBe(31);

    rmSync(filler);
    for (let n = 31; n <= 60; n += 1) await docs.updateOne({ _id: 'counter' }, { $set: { n } });
    expect(existsSync(join(dataDir, 'snapshot.jsonl'))).toBe(true);
    await store.close();

    const reopened = await open(dataDir);
    expect(await reopened.collection<TestDoc>('docs').findOne({ _id: 'counter' })).toEqual({ _id: 'counter', n: 60 });
    expect((await reopened.collection<TestDoc>('docs').findOne({ _id: 'big' }))!.payload).toHaveLength(90_000);
    await reopened.close();
  });
});
