import { immutable } from '@switchyard/domain';
import { BSON, ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import type { Document } from '../document-collection.ts';
import { serializeDocument } from './bson-writer.ts';

const expectSameBytes = (doc: Document): void => {
  expect(Buffer.from(serializeDocument(doc)).equals(Buffer.from(BSON.serialize(doc)))).toBe(true);
};

/** A random value of every kind a stored document may hold. */
function randomValue(random: () => number, depth: number): unknown {
  const strings = ['', 'plain', 'é ü 日本 🎉', 'lone \ud800', 'quote " \\', '$date'];
  const pick = Math.floor(random() * (depth > 4 ? 14 : 18));
  switch (pick) {
    case 0: return null;
    case 1: return undefined;
    case 2: return random() < 0.5;
    case 3: return [0, -0, 1, -1, 2147483647, 2147483648, -2147483648, -2147483649, 1.5, 2 ** 53, 2 ** 53 + 2, Number.NaN, Number.POSITIVE_INFINITY][Math.floor(random() * 13)];
    case 4: case 5: return strings[Math.floor(random() * strings.length)];
    case 6: return new Date(Math.floor(random() * 4e12) - 1e12);
    case 7: return new Date(Number.NaN);
    case 8: return new ObjectId();
    case 9: return BSON.Long.fromNumber(Math.floor(random() * 1e6));
    case 10: return new BSON.Binary(Buffer.from([1, 2, 3]));
    case 11: return /a.b/i;
    case 12: return () => 1;
    case 13: return BSON.Decimal128.fromString('1.10');
    case 14: case 15: return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = 0; i < Math.floor(random() * 4); i++) object[`${strings[Math.floor(random() * strings.length)]}${i}`] = randomValue(random, depth + 1);
      return object;
    }
  }
}

describe('BSON writer', () => {
  it('writes exactly the bytes js-bson writes, for every kind of value', () => {
    let seed = 11;
    const random = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let i = 0; i < 2000; i++) {
      const doc: Document = { _id: new ObjectId(), at: new Date(5), value: randomValue(random, 0) };
      if (i % 3 === 0) doc.frozen = immutable({ list: [randomValue(random, 3), 'x'.repeat(300)], n: i });
      expectSameBytes(doc);
    }
  });

  it('reuses the bytes of immutable parts, also after they were written once', () => {
    let output: unknown = immutable({ start: 'x'.repeat(300) });
    for (let step = 0; step < 300; step++) {
      output = immutable({ arguments: { i: step }, input: output });
      expectSameBytes({ _id: step, output_snapshot: output, wrapped: { again: output } });
    }
  });

  it('leaves to js-bson what it does not write itself, errors included', () => {
    expectSameBytes({ map: new Map([['a', 1]]), nullProto: Object.assign(Object.create(null), { a: 1 }), big: 10n });
    expectSameBytes({ withToBson: { toBSON: () => ({ replaced: true }) } });
    let deep: unknown = 'leaf';
    for (let i = 0; i < 3000; i++) deep = { d: deep };
    expectSameBytes({ deep });
    expect(() => serializeDocument({ 'nul\0key': 1 })).toThrow(/null bytes/);
    expect(() => serializeDocument({ 'nul\0key': undefined })).toThrow(/null bytes/);
    // Plain objects claiming to be BSON types (JSON of old drivers): refused as js-bson refuses them.
    expect(() => serializeDocument({ out: { _bsontype: 'ObjectID', id: 'x' } })).toThrow();
    expect(() => serializeDocument({ _bsontype: 'ObjectID', id: 'x' })).toThrow();
    const withToBson = Object.assign([1, 2], { toBSON: () => ['replaced'] });
    expectSameBytes({ list: withToBson, at: Object.assign(new Date(5), { toBSON: () => 'then a string' }) });
    const cycle: Document = { a: 1 };
    cycle.self = cycle;
    expect(() => serializeDocument(cycle)).toThrow(/circular/i);
  });
});
