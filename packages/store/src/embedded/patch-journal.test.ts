/**
 * Updates by copy on write, journalled as patches (issue 10 item 1): an update writes a `patch`
 * line holding only the top-level fields it changed, reopening replays it to the same document,
 * the fields it did not touch are shared with the version before (not copied), and the 16 MiB
 * limit still holds for documents that grow by updates.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BSON } from 'mongodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDocumentTooLarge, type DocumentStore } from '../document-collection.ts';
import type { TestDoc } from '../testing/test-document.ts';
import { openEmbeddedStore } from './embedded-store.ts';
import { decodeEntry } from './journal-entry.ts';

let dataDir: string;
const stores: DocumentStore[] = [];
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-patch-'));
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function open(): Promise<DocumentStore> {
  const store = await openEmbeddedStore({ dataDir, compactionMinEntries: Number.MAX_SAFE_INTEGER });
  stores.push(store);
  return store;
}

function journal(): ReturnType<typeof decodeEntry>[] {
  return readFileSync(join(dataDir, 'journal.jsonl'), 'utf8').trim().split('\n').map(decodeEntry);
}

describe('updates journalled as patches', () => {
  it('write only the changed top-level fields, and replay to the same document', async () => {
    const store = await open();
    const runs = store.collection<TestDoc>('runs');
    const big = { nodes: Array.from({ length: 200 }, (_, i) => ({ id: `n${i}`, config: { text: 'x'.repeat(100) } })) };
    await runs.insertOne({ _id: 'r1', definition: big, status: 'pending', counters: { a: 1, b: 2 }, old: 'gone soon' });
    await runs.updateOne({ _id: 'r1' }, { $set: { status: 'running', 'counters.a': 5 }, $inc: { attempts: 1 }, $unset: { old: '' } });
    const last = journal().at(-1)!;
    expect(last).toMatchObject({ op: 'patch', collection: 'runs', id: 'r1', set: { status: 'running', counters: { a: 5, b: 2 }, attempts: 1 }, unset: ['old'] });
    expect(Object.keys((last as { set: object }).set).sort()).toEqual(['attempts', 'counters', 'status']);
    // The patch is small next to the document it changes.
    expect(readFileSync(join(dataDir, 'journal.jsonl'), 'utf8').trim().split('\n').at(-1)!.length).toBeLessThan(300);
    const before = await runs.findOne({ _id: 'r1' });
    await stores.splice(0, 1)[0]!.close();
    const reopened = await open();
    expect(await reopened.collection<TestDoc>('runs').findOne({ _id: 'r1' })).toEqual(before);
    expect(before).toMatchObject({ status: 'running', counters: { a: 5, b: 2 }, attempts: 1, definition: big });
    expect(before).not.toHaveProperty('old');
  });

  it('leave out of the patch the fields an update sets to the value they hold, and size the document right', async () => {
    const store = await open();
    const runs = store.collection<TestDoc>('runs');
    await runs.insertOne({ _id: 'r2', status: 'running', paused_at: null, waits: [], note: 'x'.repeat(1000) });
    await runs.updateOne({ _id: 'r2' }, { $set: { status: 'completed', paused_at: null, waits: [], note: 'x'.repeat(1000), added: 1 } });
    const last = journal().at(-1) as { set: object };
    expect(Object.keys(last.set).sort()).toEqual(['added', 'status']);
    // The size kept by difference still matches the document, to the byte: a string field `blob` of
    // n characters adds n + 11 bytes (type, name, length, terminator).
    const room = 16 * 1024 * 1024 - BSON.calculateObjectSize((await runs.findOne({ _id: 'r2' }))!) - 11;
    await expect(runs.updateOne({ _id: 'r2' }, { $set: { blob: 'y'.repeat(room + 1) } })).rejects.toSatisfy(isDocumentTooLarge);
    await runs.updateOne({ _id: 'r2' }, { $set: { blob: 'y'.repeat(room) } });
    const before = await runs.findOne({ _id: 'r2' });
    await stores.splice(0, 1)[0]!.close();
    expect(await (await open()).collection<TestDoc>('runs').findOne({ _id: 'r2' })).toEqual(before);
  });

  it('$rename journals both fields', async () => {
    const store = await open();
    const docs = store.collection<TestDoc>('docs');
    await docs.insertOne({ _id: 1, a: 'v' });
    await docs.updateOne({ _id: 1 }, { $rename: { a: 'b' } });
    expect(journal().at(-1)).toMatchObject({ op: 'patch', set: { b: 'v' }, unset: ['a'] });
    expect(await docs.findOne({ _id: 1 })).toEqual({ _id: 1, b: 'v' });
  });

  it('keeps the 16 MiB limit for a document that grows by updates, changing nothing when refused', async () => {
    const store = await open();
    const docs = store.collection<{ _id: string; parts: string[] }>('docs');
    await docs.insertOne({ _id: 'grow', parts: [] });
    const part = 'p'.repeat(4 * 1024 * 1024);
    for (let i = 0; i < 3; i++) await docs.updateOne({ _id: 'grow' }, { $push: { parts: part } });
    const refused = await docs.updateOne({ _id: 'grow' }, { $push: { parts: part } }).catch((error: unknown) => error);
    expect(isDocumentTooLarge(refused)).toBe(true);
    expect(((await docs.findOne({ _id: 'grow' }))!.parts as string[]).length).toBe(3);
    // Shrinking is measured too: after a pull there is room again.
    await docs.updateOne({ _id: 'grow' }, { $set: { parts: [] } });
    await docs.updateOne({ _id: 'grow' }, { $push: { parts: part } });
    expect(((await docs.findOne({ _id: 'grow' }))!.parts as string[]).length).toBe(1);
  });
});
