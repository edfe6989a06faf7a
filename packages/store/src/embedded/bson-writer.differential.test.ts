/**
 * Differential test of bson-writer.ts against js-bson's `BSON.serialize` (the reference; the
 * bytes must be identical): over generated documents with numeric edge cases (-0, NaN, infinities,
 * int32 and 2^53 bounds), BSON wrapper types (Int32, Double, Long, Decimal128), `undefined` in
 * objects and arrays, lone surrogates, invalid Dates, NUL bytes in names, values with `toBSON`,
 * Maps, functions, nulls, sub-documents, escaped names and immutable parts large enough for their
 * bytes to be kept and reused (each document is written twice), the writer gives js-bson's bytes,
 * or throws the same error.
 */
import { immutable } from '@switchyard/domain';
import fc from 'fast-check';
import { BSON } from 'mongodb';
import { describe, expect, it } from 'vitest';
import type { Document } from '../document-collection.ts';
import { serializeDocument } from './bson-writer.ts';
import { SEED, bsonScalar, key, oddScalar, plainScalar, rawDocument, show, valueOf } from './fixtures/differential.ts';

/** Values js-bson treats its own way: `toBSON`, a Map, a function, a symbol, a class instance. */
const foreign = fc.constantFrom<unknown>({ toBSON: () => ({ replaced: 1 }) }, new Map([['a', 1]]), () => 1, Symbol('s'), new (class Point { x = 1 })(), /re/g);

/** An immutable sub-document of more than 256 bytes (whose encoding the writer keeps). */
const bigImmutable = fc.tuple(fc.string({ minLength: 260, maxLength: 300 }), valueOf(plainScalar)).map(([text, value]) => immutable({ text, value }));

/** Field names, some holding a NUL byte (which js-bson refuses, or keeps, by name). */
const name = fc.oneof({ weight: 6, arbitrary: key }, { weight: 1, arbitrary: fc.constantFrom('a\0', '\0', 'é', '') });

const documents: fc.Arbitrary<Document> = fc.oneof(
  { weight: 3, arbitrary: rawDocument },
  {
    weight: 2,
    arbitrary: fc.dictionary(name, valueOf(fc.oneof({ weight: 4, arbitrary: plainScalar }, { weight: 1, arbitrary: bsonScalar }, { weight: 1, arbitrary: oddScalar }, { weight: 1, arbitrary: foreign }, { weight: 1, arbitrary: bigImmutable })), { maxKeys: 5, noNullPrototype: true }),
  },
);

/** The bytes of `write(doc)`, or the name and message of what it threw. */
function outcome(write: (doc: Document) => Uint8Array, doc: Document): Buffer | string {
  try {
    return Buffer.from(write(doc));
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

describe('bson-writer.ts against js-bson (differential)', () => {
  it('writes the bytes BSON.serialize writes, twice (kept encodings reused), or throws as it does', () => {
    let written = 0;
    fc.assert(
      fc.property(documents, (doc) => {
        const expected = outcome(BSON.serialize, doc);
        for (const attempt of ['first', 'second']) {
          const actual = outcome(serializeDocument, doc);
          if (typeof expected === 'string' || typeof actual === 'string') {
            expect(actual, `${attempt} write of ${show(doc)}`).toEqual(expected);
            continue;
          }
          if (!actual.equals(expected)) throw new Error(`${attempt} write of ${show(doc)}: ${actual.toString('hex')} != js-bson ${expected.toString('hex')}`);
          written++;
        }
      }),
      { seed: SEED, numRuns: 2_000 },
    );
    expect(written).toBeGreaterThan(2_000);
  });
});
