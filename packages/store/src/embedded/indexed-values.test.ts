import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { canonicalKey } from './canonical-key.ts';
import { indexedValues } from './indexed-values.ts';

const values = (doc: object, path: string) => [...indexedValues(doc, path).values()];

describe('canonicalKey', () => {
  it('tells types apart and folds equal values together', () => {
    const id = new ObjectId();
    expect(canonicalKey('1')).not.toBe(canonicalKey(1));
    expect(canonicalKey(0)).toBe(canonicalKey(-0));
    expect(canonicalKey(null)).not.toBe(canonicalKey(undefined));
    expect(canonicalKey(id)).toBe(canonicalKey(new ObjectId(id.toHexString())));
    expect(canonicalKey(new Date(5))).toBe(canonicalKey(new Date(5)));
    expect(canonicalKey({ a: 1, b: 2 })).not.toBe(canonicalKey({ b: 2, a: 1 }));
  });
});

describe('indexedValues', () => {
  it('indexes scalars, missing fields as null, and array elements (multikey)', () => {
    expect(values({ a: 1 }, 'a')).toEqual([1]);
    expect(values({}, 'a')).toEqual([null]);
    expect(values({ a: [1, 2, 1] }, 'a')).toEqual([1, 2]);
    expect(values({ a: [] }, 'a')).toEqual([undefined]);
  });

  it('descends through documents and arrays of documents', () => {
    expect(values({ a: { b: 'x' } }, 'a.b')).toEqual(['x']);
    expect(values({ a: [{ b: 1 }, { b: [2, 3] }, {}] }, 'a.b')).toEqual([1, 2, 3, null]);
    expect(values({ a: [{ b: 1 }, { b: 2 }] }, 'a.1.b')).toEqual([2, null]);
    expect(values({ a: 'scalar' }, 'a.b')).toEqual([null]);
  });

  it('follows own properties only', () => {
    expect(values({}, 'constructor')).toEqual([null]);
  });
});
