/**
 * The direct matcher of plain equalities (query.ts), alone or beside other conditions, agrees with mingo, MongoDB's semantics,
 * on every kind of stored value: scalars, ObjectIds, Dates, arrays (membership), absent fields.
 */
import { Query } from 'mingo';
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import type { Document, Filter } from '../document-collection.ts';
import type { TestDoc } from '../testing/test-document.ts';
import { compileFilter } from './query.ts';

const id = new ObjectId();
const when = new Date(Date.UTC(2026, 0, 1));
const DOCS = [
  { _id: id, a: 'x', n: 1, b: true, at: when },
  { _id: new ObjectId(), a: ['x', 'y'], n: [1, 2], b: false, at: [when] },
  { _id: new ObjectId(id.toHexString()), a: 'y', n: 1.0, at: new Date(when.getTime()) },
  { _id: 'text-id', a: null, n: '1' },
  { a: { nested: 'x' }, n: 2 },
];
const FILTERS: Filter<TestDoc>[] = [
  { _id: id }, { _id: 'text-id' }, { a: 'x' }, { n: 1 }, { b: true }, { b: false }, { at: when }, { a: 'x', n: 1 }, { a: 'y', b: true }, {},
  // Equalities with other conditions: the equalities directly, the rest compiled once.
  { _id: id, n: { $in: [1, 3] } }, { a: 'x', b: { $ne: true } }, { n: 1, $or: [{ a: 'y' }, { b: true }] }, { a: 'x', at: { $lt: new Date(when.getTime() + 1) } },
  { n: { $gte: 1 } }, { a: 'x', n: null }, { _id: 'text-id', 'a.nested': { $exists: false } },
];

describe('direct equality matching', () => {
  it('matches exactly what mingo matches', () => {
    for (const filter of FILTERS) {
      const reference = new Query(filter);
      const direct = compileFilter(filter as Filter<Document>);
      for (const doc of DOCS) expect(direct(doc), `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`).toBe(reference.test(doc));
    }
  });
});
