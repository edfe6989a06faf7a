import { describe, expect, it } from 'vitest';
import { resolveUpdatePaths } from './update-paths.ts';
import { compileFilter } from './query.ts';

const doc = { _id: 1, steps: [{ id: 'a', tries: [1, 5] }, { id: 'b', tries: [7] }], plain: 'x' };
const filters = new Map([
  ['s', compileFilter({ 's.id': 'b' })],
  ['t', compileFilter({ t: { $gt: 2 } })],
]);

describe('resolveUpdatePaths', () => {
  it('leaves plain paths alone', () => {
    expect(resolveUpdatePaths(doc, { $set: { plain: 'y', 'steps.0.id': 'z' } }, filters, {})).toEqual({ $set: { plain: 'y', 'steps.0.id': 'z' } });
  });

  it('resolves $[], $[ident] (nested too) and $ against the document', () => {
    expect(resolveUpdatePaths(doc, { $set: { 'steps.$[].seen': 1, 'steps.$[s].x': 2 } }, filters, {})).toEqual({
      $set: { 'steps.0.seen': 1, 'steps.1.seen': 1, 'steps.1.x': 2 },
    });
    expect(resolveUpdatePaths(doc, { $inc: { 'steps.$[].tries.$[t]': 1 } }, filters, {})).toEqual({ $inc: { 'steps.0.tries.1': 1, 'steps.1.tries.0': 1 } });
    expect(resolveUpdatePaths(doc, { $set: { 'steps.$.hit': true } }, filters, { 'steps.id': 'b' })).toEqual({ $set: { 'steps.1.hit': true } });
  });

  it('drops paths that designate nothing', () => {
    expect(resolveUpdatePaths(doc, { $set: { 'steps.$[s].tries.$[t]': 0 } }, new Map([['s', compileFilter({ 's.id': 'none' })], ['t', filters.get('t')!]]), {})).toEqual({});
  });

  it('throws on missing or non-array fields, a $ without match, and conflicting paths', () => {
    expect(() => resolveUpdatePaths(doc, { $set: { 'nope.$[].a': 1 } }, filters, {})).toThrow("The path 'nope' must exist");
    expect(() => resolveUpdatePaths(doc, { $set: { 'plain.$[].a': 1 } }, filters, {})).toThrow('non-array element plain');
    expect(() => resolveUpdatePaths(doc, { $set: { 'steps.$.a': 1 } }, filters, { plain: 'x' })).toThrow('did not find the match');
    expect(() => resolveUpdatePaths(doc, { $set: { 'steps.$[s].id': 1, 'steps.1.id': 2 } }, filters, {})).toThrow('conflict');
    expect(() => resolveUpdatePaths(doc, { $set: { 'steps.$[s]': 1 }, $inc: { 'steps.1.n': 1 } }, filters, {})).toThrow("conflict at 'steps.1'");
    expect(() => resolveUpdatePaths(doc, { $set: { 'a.b.c': 1, 'a.b': 2 } }, filters, {})).toThrow("conflict at 'a.b'");
    expect(() => resolveUpdatePaths(doc, { $set: { 'a.b': 1 }, $rename: { plain: 'a' } }, filters, {})).toThrow("conflict at 'a'");
    expect(resolveUpdatePaths(doc, { $set: { 'a.b': 1, 'a.bc': 2, ab: 3 } }, filters, {})).toEqual({ $set: { 'a.b': 1, 'a.bc': 2, ab: 3 } });
  });
});
