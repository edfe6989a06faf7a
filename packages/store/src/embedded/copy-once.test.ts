/**
 * The embedded store copies a document through BSON once per write and hands out plain deep
 * copies: what it stores and returns must still be exactly what a BSON round trip gives, and no
 * caller may reach a stored object.
 */
import { immutable } from '@switchyard/domain';
import { BSON, ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import type { Document } from '../document-collection.ts';
import type { TestDoc } from '../testing/test-document.ts';
import { cloneStored, copyDocument, isNormalized } from './copy.ts';
import { openEmbeddedStore } from './embedded-store.ts';

const roundTrip = (doc: Document): Document => BSON.deserialize(BSON.serialize(doc));

/** Same value, same types and prototypes, field order included. */
function expectIdentical(actual: unknown, expected: unknown): void {
  expect(actual).toStrictEqual(expected);
  expect(BSON.serialize({ v: actual })).toEqual(BSON.serialize({ v: expected }));
}

describe('copying once', () => {
  const sample = (): Document =>
    copyDocument({
      _id: new ObjectId(),
      at: new Date(1_700_000_000_123),
      negativeZero: -0,
      long: BSON.Long.fromString('9007199254740993'),
      decimal: BSON.Decimal128.fromString('1.10'),
      bytes: new BSON.Binary(Buffer.from([0, 1, 2])),
      pattern: /a.b/i,
      user: JSON.parse('{"$date":"x","$ref":"r","$id":"i","dotted.key":"\\n","__proto__":{"polluted":true}}'),
      nested: [[null, { a: [1, 'b', true] }], []],
    });

  it('clones a stored document as a BSON round trip would, sharing nothing', () => {
    const stored = sample();
    const copy = cloneStored(stored);
    expectIdentical(copy, roundTrip(stored));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(copy.at).not.toBe(stored.at);
    expect(copy._id).not.toBe(stored._id);
    expect(copy.nested[0]).not.toBe(stored.nested[0]);
    expect(copy.bytes).not.toBe(stored.bytes);
  });

  it('tells normalized values from those BSON would change', () => {
    expect(isNormalized({ a: [1, 'x', null, { d: new Date(), o: new ObjectId() }] })).toBe(true);
    expect(isNormalized({ a: undefined })).toBe(false);
    expect(isNormalized({ a: [1, undefined] })).toBe(false);
    // eslint-disable-next-line no-sparse-arrays
    expect(isNormalized({ a: [1, , 3] })).toBe(false);
    expect(isNormalized({ a: new Map() })).toBe(false);
    expect(isNormalized({ a: Buffer.from('x') })).toBe(false);
    expect(isNormalized({ a: () => 1 })).toBe(false);
    expect(isNormalized(Object.create(null))).toBe(false);
    expect(isNormalized({ at: new Date(Number.NaN) })).toBe(false);
    expect(isNormalized({ text: 'a\uD800' })).toBe(false);
    expect(isNormalized({ 'k\uDC00': 1 })).toBe(false);
  });

  it('stores after each update exactly what a BSON round trip of the result gives', async () => {
    const store = await openEmbeddedStore({ dataDir: null });
    const items = store.collection<TestDoc>('items');
    const updates: Document[] = [
      { $set: { 'list.5': 'far' } },
      { $unset: { 'list.0': '' } },
      { $set: { fresh: undefined, fn: () => 1, buf: Buffer.from([7]) } },
      { $push: { list: { $each: [{ x: undefined }, 2] } } },
      { $inc: { n: 1.5, 'deep.count': 2 } },
      { $rename: { n: 'm' } },
      { $currentDate: { at: true } },
      { $set: { 'map.k': new Map([['a', 1]]) } },
      { $addToSet: { tags: 'x' }, $min: { low: -0 } },
      { $pop: { list: -1 } },
      { $set: { bad: new Date(Number.NaN), text: 'a\uD800', nested: { 'k\uDC00': [undefined] } } },
    ];
    for (const [i, update] of updates.entries()) {
      await items.insertOne({ _id: i, list: [1, 2], n: 1, tags: [] });
      await items.updateOne({ _id: i }, update);
      const stored = await items.findOne({ _id: i });
      expectIdentical(stored, roundTrip(stored!));
    }
    await store.close();
  });

  it('inserts exactly what a BSON round trip of the document gives', async () => {
    const store = await openEmbeddedStore({ dataDir: null });
    const items = store.collection<TestDoc>('items');
    const docs: Document[] = [
      { _id: 1, plain: { a: [1, 'x', null, true], at: new Date(5), ref: new ObjectId() } },
      { _id: 2, missing: undefined, list: [undefined, () => 1], buf: Buffer.from([1]) },
      { _id: 3, bad: new Date(Number.NaN), text: 'a\uD800', map: new Map([['k', 1]]) },
      { _id: 4, ...sample(), _idx: 4 },
    ];
    for (const doc of docs) {
      await items.insertOne(doc);
      const stored = await items.findOne({ _id: doc._id });
      expectIdentical(stored, roundTrip(doc));
    }
    await store.close();
  });

  it('lets no caller reach a stored object through update values or reads', async () => {
    const store = await openEmbeddedStore({ dataDir: null });
    const items = store.collection<TestDoc>('items');
    await items.insertOne({ _id: 1, list: [] });
    const value = { inner: { n: 1 }, at: new Date(0) };
    await items.updateMany({}, { $set: { value }, $push: { list: value as never } });
    value.inner.n = 2;
    value.at.setTime(5);
    const read = (await items.findOne({ _id: 1 }))!;
    read.value.at.setTime(9);
    read.list[0].inner.n = 3;
    const updated = (await items.findOneAndUpdate({ _id: 1 }, { $set: { other: 1 } }))!;
    updated.value.inner.n = 4;
    expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, list: [{ inner: { n: 1 }, at: new Date(0) }], value: { inner: { n: 1 }, at: new Date(0) }, other: 1 });
    await store.close();
  });

  it('shares immutable values instead of copying them, and still updates around and inside them', async () => {
    const store = await openEmbeddedStore({ dataDir: null });
    const items = store.collection<TestDoc>('items');
    const earlier = immutable({ deep: { list: [1, 2] } });
    const output = immutable({ arguments: { i: 1 }, input: earlier });
    await items.insertOne({ _id: 1, output: null, status: 'running' });
    await items.updateOne({ _id: 1 }, { $set: { status: 'completed', output } });
    const read = (await items.findOne({ _id: 1 }))!;
    expect(read.output).toBe(output);
    await items.insertOne({ _id: 2, wrapped: { output } });
    expect((await items.findOne({ _id: 2 }))!.wrapped.output).toBe(output);
    // Operators that change parts of an immutable value work on a copy of it.
    await items.updateOne({ _id: 1 }, { $push: { 'output.input.deep.list': 3 } as never, $set: { 'output.arguments.i': 2 } });
    expect((await items.findOne({ _id: 1 }))!.output).toEqual({ arguments: { i: 2 }, input: { deep: { list: [1, 2, 3] } } });
    expect(earlier).toEqual({ deep: { list: [1, 2] } });
    expect(output.arguments.i).toBe(1);
    await store.close();
  });
});
