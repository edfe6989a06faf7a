/**
 * Compaction of the embedded journal triggered by its size in bytes (security item 4): a few
 * documents rewritten with large fields (each patch journals the changed field whole) must not
 * grow the journal without end, however few its entries.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentCollection, DocumentStore } from '../document-collection.ts';
import { openEmbeddedStore } from './embedded-store.ts';

let dataDir: string;
let store: DocumentStore | undefined;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-compaction-bytes-'));
});

afterEach(async () => {
  await store?.close();
  store = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

const KIB = 1024;

/** A document with a growing array, like a run's requirements. */
interface RunDoc {
  _id: string;
  items: Array<{ i: number; text: string }>;
}
const fileBytes = (name: string) => statSync(join(dataDir, name), { throwIfNoEntry: false })?.size ?? 0;

/** One document whose array grows by a 4 KiB element per update, as a run's requirements do. */
async function growArray(collection: DocumentCollection<RunDoc>, updates: number, afterEach?: () => void): Promise<void> {
  for (let i = 0; i < updates; i++) {
    await collection.updateOne({ _id: 'run' }, { $push: { items: { i, text: 'x'.repeat(4 * KIB) } } });
    afterEach?.();
  }
}

describe('embedded journal compaction by bytes', () => {
  it('compacts once the journal passes compactionMinBytes and 4 times the snapshot, however few its entries', async () => {
    const minBytes = 256 * KIB;
    store = await openEmbeddedStore({ dataDir, compactionMinEntries: Number.MAX_SAFE_INTEGER, compactionMinBytes: minBytes });
    const runs = store.collection<RunDoc>('runs');
    await runs.insertOne({ _id: 'run', items: [] });
    let largestJournal = 0;
    // 100 pushes journal the growing array whole: about 100 × 50 × 4 KiB = 20 MiB without compaction.
    await growArray(runs, 100, () => {
      largestJournal = Math.max(largestJournal, fileBytes('journal.jsonl'));
    });
    const snapshot = fileBytes('snapshot.jsonl');
    expect(snapshot).toBeGreaterThan(100 * 4 * KIB); // compacted at least once, late enough to hold most of the array
    // After every write the journal is within max(minBytes, 4 × snapshot) (compaction follows the write that passed it).
    expect(largestJournal).toBeLessThanOrEqual(Math.max(minBytes, 4 * snapshot));
    expect(largestJournal).toBeLessThan(4 * 1024 * KIB);

    await store.close();
    store = await openEmbeddedStore({ dataDir });
    const reopened = await store.collection<RunDoc>('runs').findOne({ _id: 'run' });
    expect(reopened?.items.length).toBe(100);
  });

  it('leaves a journal under compactionMinBytes alone', async () => {
    store = await openEmbeddedStore({ dataDir, compactionMinEntries: Number.MAX_SAFE_INTEGER, compactionMinBytes: 64 * 1024 * KIB });
    const runs = store.collection<RunDoc>('runs');
    await runs.insertOne({ _id: 'run', items: [] });
    await growArray(runs, 40);
    expect(fileBytes('snapshot.jsonl')).toBe(0);
    expect(fileBytes('journal.jsonl')).toBeGreaterThan(40 * 20 * 4 * KIB);
  });
});
