/**
 * The DocumentStore contract (DESIGN.md "Persistence"): the same cases against every backend of
 * testing/contract-backends.ts. Against MongoDB:
 *   MONGODB_URI=mongodb://localhost:27017 npx vitest run packages/store/src/contract.test.ts
 */
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from './document-collection.ts';
import { contractBackends, type OpenedBackend } from './testing/contract-backends.ts';
import type { TestDoc } from './testing/test-document.ts';

const CONCURRENT_CALLERS = 50;

/** `text` with every regex metacharacter escaped, for a literal `$regex` match. */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Runs the code of a rejected promise (to assert error codes). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe.each(contractBackends())('DocumentStore contract: $name', (backend) => {
  let opened: OpenedBackend;
  let store: DocumentStore;
  let collections = 0;

  beforeAll(async () => {
    opened = await backend.open();
    store = opened.store;
  });

  afterAll(async () => {
    await opened?.dispose();
  });

  /** A collection no other test uses. */
  function fresh<T extends Document = TestDoc>(): DocumentCollection<T> {
    collections += 1;
    return store.collection<T>(`contract_${collections}`);
  }

  describe('insert and read', () => {
    it('inserts and finds by _id; unknown ids give null', async () => {
      const items = fresh();
      const id = new ObjectId();
      await items.insertOne({ _id: id, name: 'a' });
      expect(await items.findOne({ _id: id })).toEqual({ _id: id, name: 'a' });
      expect(await items.findOne({ _id: new ObjectId() })).toBeNull();
      expect(await items.find({ _id: { $in: [id, new ObjectId(), id] } })).toEqual([{ _id: id, name: 'a' }]);
    });

    it('rejects a document without _id', async () => {
      await expect(fresh().insertOne({ name: 'no id' })).rejects.toThrow(/_id/);
    });

    it('copies documents in and out', async () => {
      const items = fresh();
      const doc = { _id: 1, tags: ['x'], nested: { n: 1 } };
      await items.insertOne(doc);
      doc.tags.push('mutated after insert');
      doc.nested.n = 99;
      const first = await items.findOne({ _id: 1 });
      first!.tags.push('mutated after read');
      const [listed] = await items.find({});
      listed!.nested.n = 42;
      expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, tags: ['x'], nested: { n: 1 } });
    });

    it('keeps ObjectId and Date types, and queries them', async () => {
      const items = fresh();
      const ref = new ObjectId();
      const at = new Date('2026-01-02T03:04:05.678Z');
      await items.insertOne({ _id: new ObjectId(), ref, at });
      const found = await items.findOne({ ref });
      expect(found!._id).toBeInstanceOf(ObjectId);
      expect(found!.ref).toBeInstanceOf(ObjectId);
      expect(found!.ref.equals(ref)).toBe(true);
      expect(found!.at).toBeInstanceOf(Date);
      expect(found!.at.getTime()).toBe(at.getTime());
      expect(await items.countDocuments({ at: { $lt: new Date('2026-06-01T00:00:00Z') } })).toBe(1);
      expect(await items.countDocuments({ at: { $gt: at } })).toBe(0);
    });

    it('round-trips user JSON with arbitrary nested keys', async () => {
      const items = fresh();
      const payload = JSON.parse(
        '{"a.b":1,"with space":[1,{"ünïcødé":"✓"}],"$ref":"#/defs/x","$id":"y","$date":"not a date",' +
          '"__proto__":{"polluted":true},"constructor":{"prototype":1},"deep":{"$oid":"nope","x":{"y":{"z":[[null]]}}}}',
      ) as Document;
      await items.insertOne({ _id: 'p', payload });
      const found = await items.findOne({ _id: 'p' });
      expect(JSON.stringify(found!.payload)).toBe(JSON.stringify(payload));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('filters', () => {
    let items: DocumentCollection<TestDoc>;

    beforeAll(async () => {
      items = fresh();
      await items.insertOne({ _id: 1, status: 'running', name: 'a.b (1)', meta: { owner: 'ann' }, decided: null });
      await items.insertOne({ _id: 2, status: 'done', name: 'axb (1)', meta: { owner: 'bob' }, decided: true });
      await items.insertOne({ _id: 3, status: 'failed', name: 'a.b (2)', meta: { owner: 'ann', team: 'x' }, decided: false });
    });

    const ids = async (filter: Document) => (await items.find(filter, { sort: { _id: 1 } })).map((doc) => doc._id);

    it('$in and $or', async () => {
      expect(await ids({ status: { $in: ['running', 'failed'] } })).toEqual([1, 3]);
      expect(await ids({ $or: [{ status: 'done' }, { 'meta.team': 'x' }] })).toEqual([2, 3]);
    });

    it('$regex on an escaped user string matches literally', async () => {
      expect(await ids({ name: { $regex: `^${escapeRegex('a.b (')}` } })).toEqual([1, 3]);
      expect(await ids({ name: { $regex: escapeRegex('B (1)'), $options: 'i' } })).toEqual([1, 2]);
    });

    it('$exists and nested fields', async () => {
      expect(await ids({ 'meta.team': { $exists: true } })).toEqual([3]);
      expect(await ids({ 'meta.team': { $exists: false } })).toEqual([1, 2]);
      expect(await ids({ 'meta.owner': 'ann' })).toEqual([1, 3]);
    });

    it('null equality matches explicit nulls', async () => {
      expect(await ids({ decided: null })).toEqual([1]);
      expect(await ids({ decided: { $ne: null } })).toEqual([2, 3]);
    });

    it('equality on an array field matches any element (multikey index or not), also beside $or', async () => {
      for (const indexed of [false, true]) {
        const tagged = fresh();
        if (indexed) await tagged.createIndex({ tags: 1 }, { name: 'tags' });
        await tagged.insertOne({ _id: 1, name: 'one', tags: ['a', 'b'] });
        await tagged.insertOne({ _id: 2, name: 'two', tags: ['b'] });
        await tagged.insertOne({ _id: 3, name: 'three', tags: [] });
        await tagged.insertOne({ _id: 4, name: 'four' });
        const found = async (filter: Document) => (await tagged.find(filter, { sort: { _id: 1 } })).map((doc) => doc._id);
        expect(await found({ tags: 'b' }), `indexed: ${indexed}`).toEqual([1, 2]);
        expect(await found({ tags: 'a' })).toEqual([1]);
        expect(await found({ tags: 'B' })).toEqual([]);
        expect(await found({ tags: 'b', $or: [{ name: { $regex: 'ON', $options: 'i' } }, { name: 'x' }] })).toEqual([1]);
        expect(await tagged.countDocuments({ tags: 'b' })).toBe(2);
        await tagged.updateOne({ _id: 2 }, { $set: { tags: ['c'] } });
        expect(await found({ tags: 'b' })).toEqual([1]);
        expect(await found({ tags: 'c' })).toEqual([2]);
      }
    });

    it('countDocuments', async () => {
      expect(await items.countDocuments({})).toBe(3);
      expect(await items.countDocuments({ 'meta.owner': 'ann' })).toBe(2);
      expect(await items.countDocuments({ status: 'unknown' })).toBe(0);
    });
  });

  describe('sort, skip, limit, projection', () => {
    let items: DocumentCollection<TestDoc>;

    beforeAll(async () => {
      items = fresh();
      const ranks = [2, 1, 2, 3, 1, 2];
      for (const [i, rank] of ranks.entries()) await items.insertOne({ _id: i, rank, label: `l${i}`, extra: { i } });
    });

    it('sorts on several keys, breaking ties on _id', async () => {
      const sorted = await items.find({}, { sort: { rank: -1, _id: 1 } });
      expect(sorted.map((doc) => doc._id)).toEqual([3, 0, 2, 5, 1, 4]);
      const ascending = await items.find({}, { sort: { rank: 1, _id: -1 } });
      expect(ascending.map((doc) => doc._id)).toEqual([4, 1, 5, 2, 0, 3]);
    });

    it('skips and limits after sorting', async () => {
      const page = await items.find({}, { sort: { rank: -1, _id: 1 }, skip: 2, limit: 3 });
      expect(page.map((doc) => doc._id)).toEqual([2, 5, 1]);
      expect(await items.find({}, { sort: { _id: 1 }, skip: 10 })).toEqual([]);
    });

    it('findOne honours sort', async () => {
      expect((await items.findOne({ rank: 2 }, { sort: { _id: -1 } }))!._id).toBe(5);
    });

    it('projects by inclusion and by exclusion', async () => {
      expect(await items.findOne({ _id: 0 }, { projection: { label: 1 } })).toEqual({ _id: 0, label: 'l0' });
      expect(await items.findOne({ _id: 0 }, { projection: { label: 1, _id: 0 } })).toEqual({ label: 'l0' });
      expect(await items.findOne({ _id: 0 }, { projection: { extra: 0, label: 0 } })).toEqual({ _id: 0, rank: 2 });
      expect(await items.find({ _id: { $in: [0, 1] } }, { projection: { 'extra.i': 1 }, sort: { _id: 1 } })).toEqual([
        { _id: 0, extra: { i: 0 } },
        { _id: 1, extra: { i: 1 } },
      ]);
    });

    it('leaves the stored document whole when a projection excludes fields inside array elements', async () => {
      const gates = fresh();
      await gates.insertOne({ _id: 1, gates: [{ key: 'a', output: 'big a' }, { key: 'b', output: 'big b' }] });
      expect(await gates.findOne({ _id: 1 }, { projection: { 'gates.output': 0 } })).toEqual({ _id: 1, gates: [{ key: 'a' }, { key: 'b' }] });
      expect(await gates.find({}, { projection: { 'gates.output': 0 } })).toEqual([{ _id: 1, gates: [{ key: 'a' }, { key: 'b' }] }]);
      expect(await gates.findOne({ _id: 1 })).toEqual({ _id: 1, gates: [{ key: 'a', output: 'big a' }, { key: 'b', output: 'big b' }] });
    });
  });

  describe('findOneAndUpdate', () => {
    it('is a compare-and-set: one of many concurrent callers wins', async () => {
      const runs = fresh();
      const id = new ObjectId();
      await runs.insertOne({ _id: id, status: 'a' });
      const results = await Promise.all(
        Array.from({ length: CONCURRENT_CALLERS }, () => runs.findOneAndUpdate({ _id: id, status: 'a' }, { $set: { status: 'b' } })),
      );
      expect(results.filter((result) => result !== null)).toEqual([{ _id: id, status: 'b' }]);
    });

    it('is a compare-and-set on one array element with $[ident] and arrayFilters', async () => {
      const runs = fresh();
      const id = new ObjectId();
      await runs.insertOne({
        _id: id,
        decisions: 0,
        pending: [
          { step_id: 'w', decided: true },
          { step_id: 'x', decided: null },
          { step_id: 'y', decided: null },
        ],
      });
      const results = await Promise.all(
        Array.from({ length: CONCURRENT_CALLERS }, (_, caller) =>
          runs.findOneAndUpdate(
            { _id: id, pending: { $elemMatch: { step_id: 'x', decided: null } } },
            { $set: { 'pending.$[r].decided': true, 'pending.$[r].by': caller }, $inc: { decisions: 1 } },
            { arrayFilters: [{ 'r.step_id': 'x', 'r.decided': null }] },
          ),
        ),
      );
      const winners = results.filter((result) => result !== null);
      expect(winners).toHaveLength(1);
      const stored = await runs.findOne({ _id: id });
      expect(stored).toEqual(winners[0]);
      expect(stored!.decisions).toBe(1);
      expect(stored!.pending).toEqual([
        { step_id: 'w', decided: true },
        { step_id: 'x', decided: true, by: stored!.pending[1].by },
        { step_id: 'y', decided: null },
      ]);
    });

    it('returns the document after by default, before on request, null when nothing matches', async () => {
      const items = fresh();
      await items.insertOne({ _id: 1, n: 1, other: 'o' });
      expect(await items.findOneAndUpdate({ _id: 1 }, { $inc: { n: 1 } })).toEqual({ _id: 1, n: 2, other: 'o' });
      expect(await items.findOneAndUpdate({ _id: 1 }, { $inc: { n: 5 } }, { returnDocument: 'before' })).toEqual({ _id: 1, n: 2, other: 'o' });
      expect(await items.findOneAndUpdate({ _id: 1 }, { $inc: { n: -1 } }, { projection: { n: 1 } })).toEqual({ _id: 1, n: 6 });
      expect(await items.findOneAndUpdate({ _id: 2 }, { $inc: { n: 1 } })).toBeNull();
    });

    it('updates the first document in sort order', async () => {
      const queue = fresh();
      for (const [id, priority] of [[1, 5], [2, 9], [3, 7]] as const) await queue.insertOne({ _id: id, priority, taken: false });
      const taken = await queue.findOneAndUpdate({ taken: false }, { $set: { taken: true } }, { sort: { priority: -1 } });
      expect(taken).toEqual({ _id: 2, priority: 9, taken: true });
    });

    it('$inc returns the new value', async () => {
      const counters = fresh();
      await counters.insertOne({ _id: 'seq', value: 41 });
      const next = await counters.findOneAndUpdate({ _id: 'seq' }, { $inc: { value: 1 } });
      expect(next!.value).toBe(42);
    });

    it('upserts with $setOnInsert, which a later match ignores', async () => {
      const items = fresh();
      const created = await items.findOneAndUpdate(
        { key: 'k', kind: { $eq: 'cfg' } },
        { $setOnInsert: { created: 'first' }, $set: { touched: 1 } },
        { upsert: true },
      );
      expect(created).toMatchObject({ key: 'k', kind: 'cfg', created: 'first', touched: 1 });
      expect(created!._id).toBeInstanceOf(ObjectId);
      const matched = await items.findOneAndUpdate(
        { key: 'k', kind: { $eq: 'cfg' } },
        { $setOnInsert: { created: 'second' }, $set: { touched: 2 } },
        { upsert: true },
      );
      expect(matched).toEqual({ ...created, touched: 2 });
      expect(await items.countDocuments({})).toBe(1);
      const before = await items.findOneAndUpdate({ key: 'other' }, { $setOnInsert: { n: 1 } }, { upsert: true, returnDocument: 'before' });
      expect(before).toBeNull();
      expect(await items.countDocuments({ key: 'other', n: 1 })).toBe(1);
    });
  });

  describe('positional updates', () => {
    it('sets several fields of the elements an arrayFilter selects', async () => {
      const runs = fresh();
      await runs.insertOne({ _id: 1, steps: [{ id: 'a', n: 1 }, { id: 'b', n: 2 }, { id: 'c', n: 3 }] });
      await runs.updateOne(
        { _id: 1 },
        { $set: { 'steps.$[s].state': 'done', 'steps.$[s].n': 0 } },
        { arrayFilters: [{ 's.n': { $gte: 2 } }] },
      );
      expect((await runs.findOne({ _id: 1 }))!.steps).toEqual([
        { id: 'a', n: 1 },
        { id: 'b', n: 0, state: 'done' },
        { id: 'c', n: 0, state: 'done' },
      ]);
    });

    it('supports $, $[] and nested identifiers', async () => {
      const runs = fresh();
      await runs.insertOne({ _id: 1, steps: [{ id: 'a', tries: [{ ok: false }, { ok: true }] }, { id: 'b', tries: [{ ok: false }] }] });
      await runs.updateOne({ _id: 1, 'steps.id': 'b' }, { $set: { 'steps.$.picked': true }, $inc: { 'steps.$.count': 1 } });
      await runs.updateOne({ _id: 1 }, { $set: { 'steps.$[].seen': 1 } });
      await runs.updateOne(
        { _id: 1 },
        { $set: { 'steps.$[s].tries.$[t].retried': true } },
        { arrayFilters: [{ 's.id': 'a' }, { 't.ok': false }] },
      );
      expect((await runs.findOne({ _id: 1 }))!.steps).toEqual([
        { id: 'a', tries: [{ ok: false, retried: true }, { ok: true }], seen: 1 },
        { id: 'b', tries: [{ ok: false }], picked: true, count: 1, seen: 1 },
      ]);
    });

    it('rejects malformed updates', async () => {
      const runs = fresh();
      await runs.insertOne({ _id: 1, steps: [{ id: 'a' }] });
      await expect(runs.updateOne({ _id: 1 }, { name: 'replacement' } as never)).rejects.toThrow();
      await expect(runs.updateOne({ _id: 1 }, { $set: { 'steps.$[s].x': 1 } })).rejects.toThrow();
      await expect(runs.updateOne({ _id: 1 }, { $set: { x: 1 } }, { arrayFilters: [{ 's.id': 'a' }] })).rejects.toThrow();
      expect(await runs.findOne({ _id: 1 })).toEqual({ _id: 1, steps: [{ id: 'a' }] });
    });
  });

  describe('update and delete', () => {
    it('updateOne reports matched, modified and upserted', async () => {
      const items = fresh();
      await items.insertOne({ _id: 1, v: 'same' });
      expect(await items.updateOne({ _id: 1 }, { $set: { v: 'same' } })).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedId: null });
      expect(await items.updateOne({ _id: 1 }, { $set: { v: 'new' } })).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
      expect(await items.updateOne({ _id: 9 }, { $set: { v: 'x' } })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: null });
      expect(await items.updateOne({ _id: 9 }, { $set: { v: 'x' } }, { upsert: true })).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 9 });
      expect(await items.findOne({ _id: 9 })).toEqual({ _id: 9, v: 'x' });
      expect(await items.updateOne({ _id: 9 }, { $setOnInsert: { v: 'y' } }, { upsert: true })).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedId: null });
    });

    it('updateMany and deleteMany report counts', async () => {
      const items = fresh();
      for (let i = 0; i < 5; i += 1) await items.insertOne({ _id: i, group: i % 2 === 0 ? 'even' : 'odd', flag: i === 0 });
      expect(await items.updateMany({ group: 'even' }, { $set: { flag: true } })).toEqual({ matchedCount: 3, modifiedCount: 2, upsertedId: null });
      expect(await items.countDocuments({ flag: true })).toBe(3);
      expect(await items.deleteOne({ group: 'odd' })).toEqual({ deletedCount: 1 });
      expect(await items.deleteMany({ group: 'even' })).toEqual({ deletedCount: 3 });
      expect(await items.deleteMany({ group: 'even' })).toEqual({ deletedCount: 0 });
      expect(await items.countDocuments({})).toBe(1);
    });

    it('applies the common update operators', async () => {
      const items = fresh<{ _id: number; tags: string[]; list: number[]; low: number; high: number; gone?: string; n: number }>();
      await items.insertOne({ _id: 1, tags: ['a'], list: [1, 2, 3, 2], low: 5, high: 5, gone: 'x', n: 1 });
      await items.updateOne(
        { _id: 1 },
        { $push: { tags: 'b' }, $pull: { list: 2 }, $min: { low: 3 }, $max: { high: 9 }, $unset: { gone: '' }, $inc: { n: 2 } },
      );
      await items.updateOne({ _id: 1 }, { $addToSet: { tags: { $each: ['a', 'c'] } } });
      expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, tags: ['a', 'b', 'c'], list: [1, 3], low: 3, high: 9, n: 3 });
    });

    it('$push with $each and $slice keeps the last N (the schedules\' recent_runs)', async () => {
      const items = fresh<{ _id: number; recent: number[] }>();
      await items.insertOne({ _id: 1, recent: [] });
      for (let i = 0; i < 5; i += 1) await items.updateOne({ _id: 1 }, { $push: { recent: { $each: [i], $slice: -3 } } });
      expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, recent: [2, 3, 4] });
    });

    it('keeps equality lookups right across updates and deletes', async () => {
      const nodes = fresh();
      await nodes.createIndex({ run_id: 1, key: 1 });
      const [r1, r2] = [new ObjectId(), new ObjectId()];
      for (let i = 0; i < 6; i += 1) await nodes.insertOne({ _id: i, run_id: i < 3 ? r1 : r2, key: `k${i}` });
      await nodes.updateOne({ _id: 0 }, { $set: { run_id: r2 } });
      await nodes.deleteOne({ _id: 4 });
      const idsOf = async (run: ObjectId) => (await nodes.find({ run_id: run }, { sort: { _id: 1 } })).map((doc) => doc._id);
      expect(await idsOf(r1)).toEqual([1, 2]);
      expect(await idsOf(r2)).toEqual([0, 3, 5]);
      expect(await nodes.countDocuments({ run_id: { $in: [r1, r2] }, key: { $ne: 'k5' } })).toBe(4);
    });
  });

  describe('unique indexes', () => {
    it('rejects a duplicate on insert and on update with code 11000', async () => {
      const defs = fresh();
      expect(await defs.createIndex({ name: 1 }, { unique: true })).toBe('name_1');
      expect(await defs.createIndex({ name: 1 }, { unique: true })).toBe('name_1');
      await defs.insertOne({ _id: 1, name: 'a' });
      await defs.insertOne({ _id: 2, name: 'b' });
      const onInsert = await rejection(defs.insertOne({ _id: 3, name: 'a' }));
      expect(isDuplicateKeyError(onInsert)).toBe(true);
      expect((onInsert as Error).message).toMatch(/name_1/);
      expect(isDuplicateKeyError(await rejection(defs.insertOne({ _id: 1, name: 'c' })))).toBe(true);
      expect(isDuplicateKeyError(await rejection(defs.updateOne({ _id: 2 }, { $set: { name: 'a' } })))).toBe(true);
      expect(isDuplicateKeyError(await rejection(defs.findOneAndUpdate({ _id: 2 }, { $set: { name: 'a' } })))).toBe(true);
      expect(await defs.find({}, { sort: { _id: 1 } })).toEqual([{ _id: 1, name: 'a' }, { _id: 2, name: 'b' }]);
      await defs.updateOne({ _id: 1 }, { $set: { name: 'z' } });
      await defs.insertOne({ _id: 3, name: 'a' });
      await defs.deleteOne({ _id: 3 });
      await defs.insertOne({ _id: 4, name: 'a' });
    });

    it('enforces compound unique indexes', async () => {
      const versions = fresh();
      await versions.createIndex({ workflow: 1, version: -1 }, { unique: true, name: 'workflow_version' });
      await versions.insertOne({ _id: 1, workflow: 'w', version: 1 });
      await versions.insertOne({ _id: 2, workflow: 'w', version: 2 });
      await versions.insertOne({ _id: 3, workflow: 'v', version: 1 });
      const error = await rejection(versions.insertOne({ _id: 4, workflow: 'w', version: 2 }));
      expect(isDuplicateKeyError(error)).toBe(true);
      expect((error as Error).message).toMatch(/workflow_version/);
    });

    it('enforces uniqueness only within a partialFilterExpression', async () => {
      const runs = fresh();
      await runs.createIndex({ lease: 1 }, { unique: true, partialFilterExpression: { active: true } });
      await runs.insertOne({ _id: 1, lease: 'L', active: false });
      await runs.insertOne({ _id: 2, lease: 'L', active: true });
      await runs.insertOne({ _id: 3, lease: 'L', active: false });
      expect(isDuplicateKeyError(await rejection(runs.insertOne({ _id: 4, lease: 'L', active: true })))).toBe(true);
      expect(isDuplicateKeyError(await rejection(runs.updateOne({ _id: 3 }, { $set: { active: true } })))).toBe(true);
      await runs.updateOne({ _id: 2 }, { $set: { active: false } });
      await runs.updateOne({ _id: 3 }, { $set: { active: true } });
    });

    it('refuses to create a unique index over duplicates', async () => {
      const items = fresh();
      await items.insertOne({ _id: 1, email: 'x@y' });
      await items.insertOne({ _id: 2, email: 'x@y' });
      expect(isDuplicateKeyError(await rejection(items.createIndex({ email: 1 }, { unique: true })))).toBe(true);
      await items.insertOne({ _id: 3, email: 'x@y' });
    });
  });

  describe('dropping indexes and TTL (retired indexes at start, repositories/indexes.ts)', () => {
    it('drops an index, whose uniqueness no longer holds; false for an index that is not there', async () => {
      const items = fresh();
      await items.createIndex({ email: 1 }, { unique: true, name: 'email' });
      await items.insertOne({ _id: 1, email: 'x@y' });
      expect(await items.dropIndex('email')).toBe(true);
      await items.insertOne({ _id: 2, email: 'x@y' });
      expect(await items.find({ email: 'x@y' })).toHaveLength(2);
      expect(await items.dropIndex('email')).toBe(false);
      expect(await fresh().dropIndex('nothing')).toBe(false);
    });

    it('a TTL option is part of an index: the same name without it clashes, and replacing it takes a drop', async () => {
      const keys = fresh();
      await keys.insertOne({ _id: 1, expires_at: new Date('2999-01-01T00:00:00Z') });
      await keys.createIndex({ expires_at: 1 }, { name: 'expires' });
      expect(await rejection(keys.createIndex({ expires_at: 1 }, { name: 'expires', expireAfterSeconds: 0 }))).toMatchObject({ code: 85 });
      expect(await keys.dropIndex('expires')).toBe(true);
      expect(await keys.createIndex({ expires_at: 1 }, { name: 'expires_ttl', expireAfterSeconds: 0 })).toBe('expires_ttl');
      expect(await keys.createIndex({ expires_at: 1 }, { name: 'expires_ttl', expireAfterSeconds: 0 })).toBe('expires_ttl');
      expect(await keys.countDocuments({ expires_at: { $gt: new Date() } })).toBe(1);
    });
  });
});
