import { describe, expect, it } from 'vitest';
import { sortSpec } from './sort-spec.ts';

describe('sortSpec', () => {
  it('normalizes directions and appends the _id tie-break', () => {
    expect(sortSpec({ a: -1, b: 'asc', c: 'descending' })).toEqual({ a: -1, b: 1, c: -1, _id: 1 });
    expect(sortSpec(new Map([['a', 1]]))).toEqual({ a: 1, _id: 1 });
    expect(sortSpec({ _id: -1, a: 1 })).toEqual({ _id: -1, a: 1 });
  });

  it('rejects forms it does not support', () => {
    expect(() => sortSpec('a')).toThrow(TypeError);
    expect(() => sortSpec(['a', 1])).toThrow(TypeError);
    expect(() => sortSpec({ score: { $meta: 'textScore' } })).toThrow('unsupported sort direction');
  });
});
