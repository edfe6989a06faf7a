/**
 * Behaviour specific to the embedded backend, beyond the shared contract (contract.test.ts):
 * lookups that must not scan, deterministic order, and MongoDB-shaped errors.
 */
// The base class of every mingo query (the preloaded `Query` of 'mingo' extends it).
import { Query } from 'mingo/query';
import { ObjectId } from 'mongodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DocumentCollection, DocumentStore } from '../document-collection.ts';
import type { TestDoc } from '../testing/test-document.ts';
import { openEmbeddedStore } from './embedded-store.ts';
import { DuplicateKeyError, IndexConflictError } from './errors.ts';
import { equalityProbe } from './query.ts';

let store: DocumentStore;

beforeEach(async () => {
  store = await openEmbeddedStore({ dataDir: null });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await store.close();
});

/** Counts the documents a lookup examines while `action` runs (mingo's tests and the direct equality matcher's). */
async function documentsExamined(action: () => Promise<unknown>): Promise<number> {
  const test = vi.spyOn(Query.prototype, 'test');
  // The direct equality matcher does not go through mingo: it reports what it examines here.
  const examined: unknown[] = [];
  equalityProbe.examined = (doc) => examined.push(doc);
  try {
    await action();
    examined.push(...test.mock.calls.map(([doc]) => doc));
  } finally {
    delete equalityProbe.examined;
    test.mockRestore();
  }
  // Distinct documents: operators such as $and test each document again through inner queries.
  return new Set(examined).size;
}

describe('embedded collection', () => {
  describe('lookups', () => {
    let nodes: DocumentCollection<TestDoc>;
    const runs = Array.from({ length: 20 }, () => new ObjectId());

    beforeEach(async () => {
      nodes = store.collection<TestDoc>('node_runs');
      await nodes.createIndex({ run_id: 1, node_key: 1 }, { unique: true });
      for (const [r, run] of runs.entries()) {
        for (let n = 0; n < 10; n += 1) await nodes.insertOne({ _id: new ObjectId(), run_id: run, node_key: `n${n}`, state: r % 2 });
      }
    });

    it('finds by _id without scanning', async () => {
      const [some] = await nodes.find({}, { limit: 1, skip: 57 });
      expect(await documentsExamined(() => nodes.findOne({ _id: some!._id }))).toBe(1);
      expect(await documentsExamined(() => nodes.findOneAndUpdate({ _id: some!._id, state: 0 }, { $set: { state: 2 } }))).toBe(1);
      expect(await documentsExamined(() => nodes.find({ _id: { $in: [some!._id, new ObjectId()] } }))).toBe(1);
    });

    it('narrows an equality on an indexed field to its documents', async () => {
      expect(await documentsExamined(() => nodes.find({ run_id: runs[3] }))).toBe(10);
      expect(await documentsExamined(() => nodes.countDocuments({ run_id: { $in: [runs[1], runs[2]] }, state: 1 }))).toBe(20);
      expect(await documentsExamined(() => nodes.find({ $and: [{ run_id: { $eq: runs[4] } }, { node_key: 'n1' }] }))).toBe(1); // the unique index (run_id, node_key)
      expect(await documentsExamined(() => nodes.find({ state: 1 }))).toBe(200);
      // Every field of the unique index pinned: one lookup, whatever else the filter says.
      expect(await documentsExamined(() => nodes.findOne({ run_id: runs[4], node_key: 'n1', state: 0 }))).toBe(1);
      expect(await documentsExamined(() => nodes.find({ node_key: { $in: ['n1', 'n2'] }, $and: [{ run_id: runs[5] }] }))).toBe(2);
      expect(await nodes.countDocuments({ run_id: runs[4], node_key: 'missing' })).toBe(0);
    });

    it('keeps the equality index right when the indexed field changes or documents go', async () => {
      const moved = new ObjectId();
      expect(await nodes.updateMany({ run_id: runs[0] }, { $set: { run_id: moved } })).toMatchObject({ modifiedCount: 10 });
      expect(await nodes.deleteMany({ run_id: runs[1], node_key: { $in: ['n0', 'n1'] } })).toEqual({ deletedCount: 2 });
      expect(await nodes.countDocuments({ run_id: runs[0] })).toBe(0);
      expect(await documentsExamined(() => nodes.find({ run_id: moved }))).toBe(10);
      expect(await documentsExamined(() => nodes.find({ run_id: runs[1] }))).toBe(8);
      expect(await nodes.countDocuments({ run_id: moved, state: 0 })).toBe(10);
    });
  });

  it('breaks sort ties on _id, and sorts mixed types deterministically', async () => {
    const items = store.collection<TestDoc>('items');
    for (const [id, value] of [[5, 1], [2, 'x'], [4, 1], [1, null], [3, new Date(0)], [6, 1]] as const) await items.insertOne({ _id: id, value });
    expect((await items.find({}, { sort: { value: 1 } })).map((doc) => doc._id)).toEqual((await items.find({}, { sort: { value: 1 } })).map((doc) => doc._id));
    const ones = await items.find({ value: 1 }, { sort: { value: -1 } });
    expect(ones.map((doc) => doc._id)).toEqual([4, 5, 6]);
  });

  it('raises MongoDB-shaped duplicate key errors', async () => {
    const defs = store.collection<TestDoc>('defs');
    await defs.createIndex({ name: 1, version: 1 }, { unique: true });
    await defs.insertOne({ _id: 1, name: 'w', version: 1 });
    const error = await defs.insertOne({ _id: 2, name: 'w', version: 1 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DuplicateKeyError);
    expect(error).toMatchObject({ code: 11000, index: 'name_1_version_1', keyPattern: { name: 1, version: 1 }, keyValue: { name: 'w', version: 1 } });
    expect((error as Error).message).toBe("E11000 duplicate key error collection: defs index: name_1_version_1 dup key: { name: 'w', version: 1 }");
    const onId = await defs.insertOne({ _id: 1, name: 'other', version: 9 }).catch((caught: unknown) => caught);
    expect(onId).toMatchObject({ code: 11000, index: '_id_', keyValue: { _id: 1 } });
  });

  it('enforces unique indexes on every element of an array (multikey)', async () => {
    const users = store.collection<TestDoc>('users');
    await users.createIndex({ emails: 1 }, { unique: true });
    await users.insertOne({ _id: 1, emails: ['a@x', 'b@x'] });
    await expect(users.insertOne({ _id: 2, emails: ['c@x', 'b@x'] })).rejects.toMatchObject({ code: 11000, keyValue: { emails: 'b@x' } });
    await users.insertOne({ _id: 3, emails: ['c@x'] });
  });

  it('rejects index definitions clashing with existing ones (codes 85, 86)', async () => {
    const items = store.collection<TestDoc>('items');
    await items.createIndex({ a: 1 }, { name: 'by_a' });
    await expect(items.createIndex({ b: 1 }, { name: 'by_a' })).rejects.toSatisfy((error) => error instanceof IndexConflictError && error.code === 86);
    await expect(items.createIndex({ a: 1 }, { name: 'by_a', unique: true })).rejects.toMatchObject({ code: 85 });
    await expect(items.createIndex({ a: 1 }, { name: 'other' })).rejects.toMatchObject({ code: 85 });
    await expect(items.createIndex({ a: 1 }, { name: 'by_a_active', partialFilterExpression: { active: true } })).resolves.toBe('by_a_active');
    await expect(items.createIndex({ a: 2 } as never)).rejects.toThrow(TypeError);
  });

  it('leaves a document untouched when its update fails midway', async () => {
    const items = store.collection<TestDoc>('items');
    await items.insertOne({ _id: 1, list: [1], other: 'x' });
    await expect(items.updateOne({ _id: 1 }, { $set: { other: 'y', 'missing.$[].a': 1 } })).rejects.toThrow("The path 'missing' must exist");
    expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, list: [1], other: 'x' });
  });
});
