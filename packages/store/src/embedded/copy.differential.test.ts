/**
 * Differential test of copy.ts's copies without encoding (`normalizeDocument`, `normalizedCopy`,
 * `cloneStored`, `isNormalized`) against a BSON round trip with js-bson (the reference, what the
 * driver does on the wire): over generated documents with numeric edge cases, BSON wrapper types
 * (Int32, Double, Long, Decimal128), `undefined`, lone surrogates, invalid Dates, nulls, arrays,
 * sub-documents, escaped names and immutable parts, each copy equals the round trip exactly and
 * shares no object with its source but immutable parts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cloneStored, isNormalized, normalizeDocument, normalizedCopy } from './copy.ts';
import { SEED, rawDocument, roundTrip, sameValue, sharedMutable, show, storedDocument } from './fixtures/differential.ts';

describe('copy.ts against a BSON round trip (differential)', () => {
  it('normalizeDocument and normalizedCopy give what a BSON round trip gives, sharing only immutable parts', () => {
    fc.assert(
      fc.property(rawDocument, (doc) => {
        const expected = roundTrip(doc);
        const { document } = normalizeDocument(doc);
        if (!sameValue(document, expected)) throw new Error(`normalizeDocument(${show(doc)}) = ${show(document)}, BSON ${show(expected)}`);
        expect(sharedMutable(document, doc), 'objects shared with the source').toEqual([]);
        const copy = normalizedCopy(doc);
        if (!sameValue(copy, expected)) throw new Error(`normalizedCopy(${show(doc)}) = ${show(copy)}, BSON ${show(expected)}`);
        expect(sharedMutable(copy, doc), 'objects shared with the source').toEqual([]);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it('cloneStored copies a stored document as a BSON round trip does, sharing only immutable parts', () => {
    fc.assert(
      fc.property(storedDocument, (doc) => {
        const copy = cloneStored(doc);
        const expected = roundTrip(doc);
        if (!sameValue(copy, expected)) throw new Error(`cloneStored(${show(doc)}) = ${show(copy)}, BSON ${show(expected)}`);
        expect(sharedMutable(copy, doc), 'objects shared with the stored document').toEqual([]);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it('isNormalized holds only of what a BSON round trip leaves as it is', () => {
    let normalized = 0;
    fc.assert(
      fc.property(rawDocument, (doc) => {
        if (!isNormalized(doc)) return;
        normalized++;
        if (!sameValue(doc, roundTrip(doc))) throw new Error(`isNormalized(${show(doc)}) but BSON gives ${show(roundTrip(doc))}`);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
    expect(normalized).toBeGreaterThan(200);
  });
});
