import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { indexablePins, pinnedFields } from './pinned-fields.ts';

describe('pinnedFields', () => {
  it('reads equalities, $eq, $in, and $and clauses', () => {
    const id = new ObjectId();
    expect([...pinnedFields({ a: 1, b: { $eq: null }, c: { $in: [1, 2] }, $and: [{ d: 'x' }], e: { $gt: 1 }, f: /x/, g: { h: 1 } })]).toEqual([
      ['a', [1]],
      ['b', [null]],
      ['c', [1, 2]],
      ['d', ['x']],
      ['g', [{ h: 1 }]],
    ]);
    expect([...pinnedFields({ $or: [{ a: 1 }], _id: id })]).toEqual([['_id', [id]]]);
  });
});

describe('indexablePins', () => {
  it('keeps fields pinned to indexable scalars only', () => {
    const pins = indexablePins({ a: 1, b: null, c: { $in: ['x', new Date(0)] }, d: { $in: ['x', /y/] }, e: [1], f: Number.NaN });
    expect([...pins.keys()]).toEqual(['a', 'c']);
  });
});
