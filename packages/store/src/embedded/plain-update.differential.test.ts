/**
 * Differential test of plain-update.ts against mingo's update operators (the reference, which
 * update.ts applies to whatever the plain path declines): over generated stored documents and
 * updates of `$set`/`$inc`/`$min`/`$max`/`$currentDate` (numeric edge cases, BSON types, Dates,
 * nulls, arrays and sub-documents in the way, missing fields, dotted, escaped, positional and
 * `_id` paths), the plain path either declines or produces the reference's document and change
 * flag, without changing the original document or any sub-document it shares.
 *
 * Two departures of mingo 7.2.7 from MongoDB are not held against the plain path, which follows
 * MongoDB there (see {@link mingoDeparture}): `$inc` by NaN (mingo throws "Cannot increment with
 * non-numeric argument", MongoDB adds NaN) and a path through a missing field that
 * `Object.prototype` also names, at any depth (`constructor.a` on `{}`: mingo walks into the prototype and
 * changes nothing, MongoDB creates `{ constructor: { a } }`).
 */
import fc from 'fast-check';
import { $inc, $max, $min, $set } from 'mingo/operators/update';
import { describe, expect, it } from 'vitest';
import type { Document } from '../document-collection.ts';
import { KEYS, SEED, bsonScalar, number, plainScalar, roundTrip, sameValue, show, storedDocument, valueOf } from './fixtures/differential.ts';
import { applyPlainly, plainAssignments } from './plain-update.ts';
import { parseUpdate } from './update.ts';

const REFERENCE: Record<string, (fields: Document) => (doc: Document) => string[]> = { $set, $inc, $min, $max, $currentDate: $set };

/** Paths of one to three segments, mostly over {@link KEYS}, sometimes an index, a positional segment or `_id`. */
const path = fc
  .array(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: fc.constantFrom('0', '1', '$', '_id', '') }), { minLength: 1, maxLength: 3 })
  .map((segments) => segments.join('.'));

/** Operator arguments: numbers and Dates mostly (what `$inc`/`$min`/`$max` combine), anything else sometimes. */
const argument = fc.oneof({ weight: 4, arbitrary: number }, { weight: 2, arbitrary: plainScalar }, { weight: 1, arbitrary: bsonScalar }, { weight: 1, arbitrary: valueOf(plainScalar) });

/** An update of the plain operators over `paths` and `values` (`$currentDate` as callers write it). */
function updateOf(paths: fc.Arbitrary<string>, values: fc.Arbitrary<unknown>): fc.Arbitrary<Document> {
  return fc
    .dictionary(fc.constantFrom('$set', '$inc', '$min', '$max', '$currentDate'), fc.dictionary(paths, values, { minKeys: 1, maxKeys: 2, noNullPrototype: true }), { minKeys: 1, maxKeys: 3, noNullPrototype: true })
    .map((ops) => {
      if (ops.$currentDate) ops.$currentDate = Object.fromEntries(Object.keys(ops.$currentDate).map((p) => [p, true]));
      return ops;
    });
}

const update = updateOf(path, argument);

/** The dotted paths of `doc`'s fields, sub-documents' fields included. */
function pathsOf(doc: Document, prefix = ''): string[] {
  return Object.entries(doc).flatMap(([name, value]) => {
    const here = prefix + name;
    const plain = typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
    return plain ? [here, ...pathsOf(value as Document, `${here}.`)] : [here];
  });
}

/** The value at `path` in `doc` (undefined when missing). */
function valueAt(doc: Document, path: string): unknown {
  return path.split('.').reduce<unknown>((value, name) => (typeof value === 'object' && value !== null ? (value as Document)[name] : undefined), doc);
}

/** Twins of a value for `$min`/`$max`/`$inc`: itself, a signed zero for a zero, a neighbour. */
function twins(value: unknown): unknown[] {
  if (typeof value === 'number') return [value, -value, value + 1, value - 1, Object.is(value, 0) ? -0 : 0];
  if (value instanceof Date) return [new Date(value.getTime()), new Date(value.getTime() + 1), new Date(value.getTime() - 1)];
  return [value];
}

/** A stored document and an update aimed mostly at its own fields, with arguments near their values. */
const documentAndUpdate = storedDocument.chain((doc) => {
  const own = pathsOf(doc).filter((p) => !p.startsWith('_id'));
  if (own.length === 0) return fc.tuple(fc.constant(doc), update);
  const ownValues = own.flatMap((p) => twins(valueAt(doc, p)));
  return fc.tuple(
    fc.constant(doc),
    updateOf(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...own) }, { weight: 1, arbitrary: path }), fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ownValues) }, { weight: 2, arbitrary: argument })),
  );
});

/** Why mingo's result is not MongoDB's for `modifier` on `doc` (see the module comment), or undefined. */
function mingoDeparture(doc: Document, modifier: Document): string | undefined {
  const inc = (modifier.$inc ?? {}) as Document;
  if (Object.values(inc).some((value) => Number.isNaN(value))) return '$inc by NaN';
  for (const fields of Object.values(modifier)) {
    for (const path of Object.keys(fields as Document)) {
      // From the first missing field on, each segment names a field of a new (or no) object.
      let current: unknown = doc;
      let missing = false;
      for (const segment of path.split('.')) {
        missing ||= typeof current !== 'object' || current === null || !Object.hasOwn(current, segment);
        if (missing && segment in Object.prototype) return `path ${path} through an inherited name`;
        if (!missing) current = (current as Document)[segment];
      }
    }
  }
  return undefined;
}

/** The reference: mingo's operators, one after the other, on a deep copy of `doc`; its result and whether any changed a path. */
function reference(doc: Document, modifier: Document): { document: Document; changed: boolean } {
  const document = roundTrip(doc);
  let changed = false;
  for (const [operator, fields] of Object.entries(modifier)) if (REFERENCE[operator]!(fields as Document)(document).length > 0) changed = true;
  return { document, changed };
}

describe('plain-update.ts against mingo (differential)', () => {
  it('applies a plain update as mingo does, or declines it', () => {
    let applied = 0;
    fc.assert(
      fc.property(documentAndUpdate, ([doc, raw]) => {
        const parsed = parseUpdate(raw);
        const assignments = plainAssignments(parsed.modifier);
        if (assignments === undefined) return;
        const before = roundTrip(doc);
        const fast: Document = { ...doc };
        const changed = applyPlainly(fast, assignments);
        // The original, and every sub-document it shares with the result, unchanged.
        expect(sameValue(doc, before), 'original changed').toBe(true);
        if (changed === undefined) {
          expect(sameValue(fast, before), 'declined but changed the document').toBe(true);
          return;
        }
        applied++;
        if (mingoDeparture(doc, parsed.modifier) !== undefined) return;
        let expected: { document: Document; changed: boolean };
        try {
          expected = reference(doc, parsed.modifier);
        } catch (error) {
          throw new Error(`the plain path applied an update mingo refuses (${String(error)}): ${show(parsed.modifier)} on ${show(doc)}`);
        }
        if (!sameValue(fast, expected.document)) {
          throw new Error(`${show(parsed.modifier)} on ${show(doc)}: plain ${show(fast)}, mingo ${show(expected.document)}`);
        }
        expect(changed, 'change flag').toBe(expected.changed);
      }),
      { seed: SEED, numRuns: 3_000 },
    );
    // The generators must reach the fast path, not only its refusals.
    expect(applied).toBeGreaterThan(300);
  });

  it('applies a plain update to a document without the fields (an upsert) as mingo does', () => {
    fc.assert(
      fc.property(update, (raw) => {
        const parsed = parseUpdate(raw);
        const assignments = plainAssignments(parsed.modifier);
        if (assignments === undefined) return;
        const fast: Document = {};
        if (applyPlainly(fast, assignments) === undefined || mingoDeparture({}, parsed.modifier) !== undefined) return;
        const expected = reference({}, parsed.modifier);
        if (!sameValue(fast, expected.document)) throw new Error(`${show(parsed.modifier)}: plain ${show(fast)}, mingo ${show(expected.document)}`);
      }),
      { seed: SEED, numRuns: 1_000 },
    );
  });
});
