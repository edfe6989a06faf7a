import { BSON, ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, type JournalEntry } from './journal-entry.ts';

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

  it('reject malformed lines', () => {
    expect(() => decodeEntry('{"op":"put","coll":"c"')).toThrow();
    expect(() => decodeEntry('{"op":"put","coll":"c"}')).toThrow('BSON payload');
    expect(() => decodeEntry(JSON.stringify({ op: 'drop', coll: 'c', bson: Buffer.from(BSON.serialize({})).toString('base64') }))).toThrow('unknown entry op');
    expect(() => decodeEntry(JSON.stringify({ op: 'put', coll: 'c', bson: Buffer.from(BSON.serialize({ a: 1 })).toString('base64') }))).toThrow('without _id');
  });
});
