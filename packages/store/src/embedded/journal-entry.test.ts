import { BSON, ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, encodePatch, type JournalEntry } from './journal-entry.ts';

describe('journal entries', () => {
  it('round-trip documents exactly, whatever their keys and types', () => {
    const document = {
      _id: new ObjectId(),
      at: new Date(1_700_000_000_123),
      negativeZero: -0,
      long: BSON.Long.fromString('9007199254740993'),
      decimal: BSON.Decimal128.fromString('1.10'),
      bytes: new BSON.Binary(Buffer.from([0, 1, 2])),
      pattern: /a.b/i,
      user: { $date: 'not a date', $ref: 'r', $id: 'i', 'dotted.key': '\n' },
    };
    const line = encodeEntry({ op: 'put', collection: 'runs', document });
    expect(line).not.toContain('\n');
    const decoded = decodeEntry(line) as Extract<JournalEntry, { op: 'put' }>;
    expect(decoded.collection).toBe('runs');
    expect(Object.is(decoded.document.negativeZero, -0)).toBe(true);
    expect(decoded.document).toEqual(BSON.deserialize(BSON.serialize(document)));
  });

  it('round-trip deletes and index definitions', () => {
    const id = new ObjectId();
    expect(decodeEntry(encodeEntry({ op: 'delete', collection: 'c', id }))).toEqual({ op: 'delete', collection: 'c', id });
    const index = { name: 'live', keys: { a: 1 as const, b: -1 as const }, unique: true, partialFilterExpression: { at: { $gt: new Date(0) } } };
    expect(decodeEntry(encodeEntry({ op: 'index', collection: 'c', index }))).toEqual({ op: 'index', collection: 'c', index });
  });

  it('encode a patch as BSON of { _id, set, unset }, and measure its fields by difference', () => {
    const id = new ObjectId();
    const set = { status: 'completed', output: { nested: [1, { deep: 'x' }] }, at: new Date(5) };
    const { bytes, setFieldBytes } = encodePatch(id, set, ['error']);
    expect(Buffer.from(bytes)).toEqual(Buffer.from(BSON.serialize({ _id: id, set, unset: ['error'] })));
    const before = { _id: id, error: 'x', status: 'running' };
    expect(BSON.calculateObjectSize({ ...before, ...set })).toBe(BSON.calculateObjectSize({ _id: id, error: 'x' }) + setFieldBytes);
    const entry: JournalEntry = { op: 'patch', collection: 'c', id, set, unset: ['error'], bytes };
    expect(decodeEntry(encodeEntry(entry))).toEqual({ op: 'patch', collection: 'c', id, set, unset: ['error'] });
  });

  it('reject malformed lines', () => {
    expect(() => decodeEntry('{"op":"put","coll":"c"')).toThrow();
    expect(() => decodeEntry('{"op":"put","coll":"c"}')).toThrow('BSON payload');
    expect(() => decodeEntry(JSON.stringify({ op: 'drop', coll: 'c', bson: Buffer.from(BSON.serialize({})).toString('base64') }))).toThrow('unknown entry op');
    expect(() => decodeEntry(JSON.stringify({ op: 'put', coll: 'c', bson: Buffer.from(BSON.serialize({ a: 1 })).toString('base64') }))).toThrow('without _id');
  });
});
