/**
 * The cache of compiled filters: keys that tell apart every filter mingo would compile
 * differently, a bound on the entries, and no result changed by a cached compilation.
 */
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { filterKey } from './filter-key.ts';
import { compileFilter } from './query.ts';

describe('filter keys', () => {
  it('tell apart types, values, operators and field order', () => {
    const id = new ObjectId();
    const keys = [
      { a: 1 },
      { a: '1' },
      { a: -0 },
      { a: true },
      { a: null },
      { a: undefined },
      { a: new Date(1) },
      { a: id },
      { a: id.toHexString() },
      { a: /x/i },
      { a: /x/ },
      { a: [1, 2] },
      { a: [[1], 2] },
      { a: { $in: [1, 2] } },
      { a: { $eq: 1 } },
      { a: 1, b: 2 },
      { b: 2, a: 1 },
      { 'a.b': 1 },
      { a: { b: 1 } },
    ].map(filterKey);
    expect(keys.every((key) => key !== undefined)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    expect(filterKey({ a: new ObjectId(id.toHexString()) })).toBe(filterKey({ a: id }));
  });

  it('refuse values they cannot describe exactly or whose matcher keeps state', () => {
    expect(filterKey({ a: /x/g })).toBeUndefined();
    expect(filterKey({ a: /x/y })).toBeUndefined();
    expect(filterKey({ $where: () => true })).toBeUndefined();
    expect(filterKey({ a: Buffer.from('x') })).toBeUndefined();
    expect(filterKey({ $and: [{ $expr: { $lt: ['$a', '$$NOW'] } }] })).toBeUndefined();
  });
});

describe('compiled filter cache', () => {
  it('keeps results right when the caller mutates a filter it passed before', () => {
    const values = [1];
    const filter = { a: { $in: values } };
    expect(compileFilter(filter)({ a: 2 })).toBe(false);
    values.push(2);
    expect(compileFilter(filter)({ a: 2 })).toBe(true);
    expect(compileFilter({ a: { $in: [1] } })({ a: 2 })).toBe(false);
  });
});
