/**
 * Differential test of query.ts's direct equality matching (top-level equalities compared without
 * mingo) against mingo's `Query` (the reference): over generated stored documents and filters of
 * top-level equalities (numeric edge cases, BSON types, Dates, ObjectIds, nulls, arrays,
 * sub-documents, missing fields, escaped names and names `Object.prototype` also has), mixed with
 * dotted paths and operators, `compileFilter` matches exactly the documents mingo matches. (The
 * fast path declines by handing a document to mingo: the property is plain equality, except that
 * where mingo throws matching a document the fast path may rule it out first.)
 */
import fc from 'fast-check';
import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import type { Document } from '../document-collection.ts';
import { SEED, bsonScalar, key, plainScalar, show, storedDocument, valueOf } from './fixtures/differential.ts';
import { compileFilter } from './query.ts';

/** A condition on a field: mostly a plain value (the fast path's), sometimes an operator or a document. */
const condition = (values: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 6, arbitrary: values },
    { weight: 1, arbitrary: fc.array(values, { maxLength: 2 }) },
    { weight: 1, arbitrary: valueOf(plainScalar) },
    { weight: 1, arbitrary: fc.array(values, { maxLength: 3 }).map((list) => ({ $in: list })) },
    { weight: 1, arbitrary: values.map((value) => ({ $ne: value })) },
    { weight: 1, arbitrary: fc.boolean().map((exists) => ({ $exists: exists })) },
  );

/** A stored document and a filter whose values are often the document's own (so that some match). */
const documentAndFilter = storedDocument.chain((doc) => {
  const own = Object.values(doc);
  // The document's values, their loose twins (`'1'` for `1`, `-0` for `0`, `1` for `true`...) and others.
  const twins = own.flatMap((value) => (typeof value === 'object' && value !== null ? [value] : [value, String(value), Number(value), Boolean(value), typeof value === 'number' ? -value : value]));
  const values = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...twins) }, { weight: 3, arbitrary: plainScalar }, { weight: 1, arbitrary: bsonScalar });
  const field = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...Object.keys(doc)) }, { weight: 3, arbitrary: key }, { weight: 1, arbitrary: fc.constantFrom('a.b', 'a.0', '_id') });
  return fc.tuple(fc.constant(doc), fc.dictionary(field, condition(values), { minKeys: 0, maxKeys: 3, noNullPrototype: true }));
});

/**
 * The reference: mingo's `Query` with scripts disabled, as the store compiles it. An error is
 * `compile` when the filter is refused, `test` when matching this document threw: mingo 7.2.7
 * throws a TypeError comparing e.g. `false` with a sub-document that has a field named
 * `constructor` (MongoDB just does not match).
 */
function reference(filter: Document, doc: Document): boolean | { error: 'compile' | 'test'; cause: unknown } {
  let query: Query;
  try {
    query = new Query(filter, { scriptEnabled: false });
  } catch (cause) {
    return { error: 'compile', cause };
  }
  try {
    return query.test(doc);
  } catch (cause) {
    return { error: 'test', cause };
  }
}

describe('query.ts direct equality against mingo (differential)', () => {
  it('matches a document exactly when mingo does', () => {
    let matched = 0;
    fc.assert(
      fc.property(documentAndFilter, ([doc, filter]) => {
        const expected = reference(filter, doc);
        let actual: boolean | Error;
        try {
          actual = compileFilter(filter)(doc);
        } catch (error) {
          actual = error as Error;
        }
        if (typeof expected !== 'boolean') {
          // A filter mingo refuses is refused; a document mingo fails on may also be ruled out
          // first by an equality (the conjunction is false whatever the rest says).
          const allowed = expected.error === 'compile' ? actual instanceof Error : actual instanceof Error || actual === false;
          if (!allowed) throw new Error(`${show(filter)} on ${show(doc)}: direct ${String(actual)}, mingo failed at ${expected.error}: ${String(expected.cause)}`);
          return;
        }
        if (actual instanceof Error) throw new Error(`${show(filter)} on ${show(doc)}: direct threw ${String(actual)}, mingo ${expected}`);
        if (actual !== expected) throw new Error(`${show(filter)} on ${show(doc)}: direct ${actual}, mingo ${expected}`);
        if (actual) matched++;
      }),
      { seed: SEED, numRuns: 4_000 },
    );
    // The generators must produce matches as well as misses.
    expect(matched).toBeGreaterThan(400);
  });
});
