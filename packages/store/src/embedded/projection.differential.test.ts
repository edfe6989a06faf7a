/**
 * Differential test of projection.ts (simple projections applied without mingo) against a mingo
 * cursor's projection (the reference): over generated stored documents and projections (top-level
 * inclusions and exclusions by 1/0/true/false, `_id` kept or dropped, `$elemMatch` on arrays of
 * sub-documents and scalars, plus what the fast path declines: dotted paths, other operators,
 * mixed modes, empty projections), the fast path either declines or returns exactly mingo's
 * document (fields and their values), and never changes the stored document. Field order is not
 * mingo's: mingo 7.2.7 puts `_id` after the included fields, where MongoDB (and the fast path)
 * keep the document's order, which the property checks instead. A projection naming a field
 * `Object.prototype` also has (`constructor`, `toString`) is not given to mingo, whose projection
 * then returns the inherited function with the field's value merged into it (polluting
 * `Object` / `Object.prototype.toString` for the whole process): there the property is
 * MongoDB's rule, checked directly (a named field is kept exactly when the document has it).
 * And mingo refuses an exclusion that names `_id: 1` ("Cannot do exclusion and inclusion"),
 * which MongoDB accepts (`_id` is the exception to the rule): the same exclusion without
 * `_id` (which keeps it) is the reference then. Last, mingo's `$elemMatch` tries scalar elements
 * (Dates, ObjectIds and other BSON values included) too (`{ $elemMatch: {} }` matches `0`, `{ a: null }` matches `'x'`), where MongoDB's (an
 * ElemMatchObject expression) skips elements that are not objects: mingo is given the arrays
 * an `$elemMatch` names without their scalar elements (inner arrays kept: the fast path declines
 * a document where an `$elemMatch` meets one before a match).
 */
import fc from 'fast-check';
import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import type { Document } from '../document-collection.ts';
import { SEED, key, roundTrip, sameValue, show, storedDocument } from './fixtures/differential.ts';
import { applyProjection, compileProjection } from './projection.ts';
import { compileFilter, projectDocument } from './query.ts';

/** Values `$elemMatch` filters and array elements share (so that some elements match). */
const small = fc.constantFrom<unknown>(0, -0, 1, NaN, 'a', '', true, null);

/** Arrays of sub-documents (and a scalar or an inner array or two), what `$elemMatch` projects. */
const elements = fc.array(
  fc.oneof({ weight: 4, arbitrary: fc.dictionary(key, small, { maxKeys: 2, noNullPrototype: true }) }, { weight: 1, arbitrary: small }, { weight: 1, arbitrary: fc.array(small, { maxLength: 1 }) }),
  { maxLength: 4 },
);

/** A stored document with some arrays of sub-documents besides its generated fields. */
const documents = fc.tuple(storedDocument, fc.dictionary(key, elements, { maxKeys: 2, noNullPrototype: true })).map(([doc, arrays]) => roundTrip({ ...doc, ...arrays }));

const flag = fc.constantFrom<unknown>(1, 0, true, false);

const projectionValue = fc.oneof(
  { weight: 6, arbitrary: flag },
  { weight: 2, arbitrary: fc.dictionary(key, small, { maxKeys: 2, noNullPrototype: true }).map((filter) => ({ $elemMatch: filter })) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>({ $slice: 1 }, { $elemMatch: { $or: [{ a: 1 }] } }, { $elemMatch: { a: { $gt: 0 } } }, 2, 'a', { $literal: 1 }) },
);

/** Projections, mostly of one mode (mixing is an error), sometimes with a dotted path or an operator key. */
const projection = fc
  .tuple(
    fc.dictionary(fc.oneof({ weight: 8, arbitrary: key }, { weight: 1, arbitrary: fc.constantFrom('_id', 'a.b', '$x') }), projectionValue, { maxKeys: 3, noNullPrototype: true }),
    fc.boolean(),
  )
  .map(([fields, oneMode]) => {
    if (!oneMode) return fields;
    const mode = Object.entries(fields).find(([name, value]) => name !== '_id' && (value === 0 || value === false)) ? 0 : 1;
    return Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, name === '_id' || typeof value === 'object' ? value : mode]));
  });

/**
 * The reference: a mingo cursor's projection of a copy of `doc` (mingo may change what it
 * projects), as BSON carries it: mingo leaves an `$elemMatch` that matched nothing as a field
 * holding `undefined`, which BSON (and so MongoDB's answer) does not have.
 */
function reference(doc: Document, spec: Document): Document | { error: unknown } {
  try {
    return roundTrip(new Query({}, { scriptEnabled: false }).find<Document>([roundTrip(doc)], spec).all()[0]!);
  } catch (error) {
    return { error };
  }
}

/** `doc` without the scalar elements of the arrays `spec` projects by `$elemMatch`. */
function withoutScalarElements(doc: Document, spec: Document): Document {
  const copy: Document = { ...doc };
  for (const [name, value] of Object.entries(spec)) {
    if (typeof value === 'object' && value !== null && Array.isArray(copy[name])) copy[name] = (copy[name] as unknown[]).filter((element) => Array.isArray(element) || (typeof element === 'object' && element !== null && Object.getPrototypeOf(element) === Object.prototype));
  }
  return copy;
}

/** `doc`'s fields in the order of `order` (names it lacks last). */
function byKey(doc: Document, order: string[]): Document {
  const names = [...order.filter((name) => Object.hasOwn(doc, name)), ...Object.keys(doc).filter((name) => !order.includes(name))];
  return Object.fromEntries(names.map((name) => [name, doc[name]]));
}

describe('projection.ts against mingo (differential)', () => {
  it('projects a document as mingo does, or declines the projection', () => {
    let applied = 0;
    fc.assert(
      fc.property(documents, projection, (doc, spec) => {
        let simple: ReturnType<typeof compileProjection>;
        try {
          simple = compileProjection(spec, compileFilter);
        } catch {
          return; // a malformed $elemMatch filter: refused, as mingo refuses it
        }
        if (simple === null) return;
        applied++;
        const before = roundTrip(doc);
        const actual = applyProjection(doc, simple);
        expect(sameValue(doc, before), 'stored document changed').toBe(true);
        if (actual === null) {
          // Declined: allowed only where an $elemMatch met an inner array.
          expect(Object.keys(spec).some((name) => (doc[name] as unknown[] | undefined)?.some?.((element) => Array.isArray(element))), `declined ${show(spec)} on ${show(doc)}`).toBe(true);
          return;
        }
        const order = Object.keys(doc).filter((name) => Object.hasOwn(actual, name));
        expect(Object.keys(actual), 'fields in the document\'s order').toEqual(order);
        if (Object.keys(spec).some((name) => name in Object.prototype)) {
          for (const name of Object.keys(doc)) {
            const kept = name === '_id' ? simple.id : simple.inclusion === simple.fields.has(name) && (simple.fields.get(name) ?? true) === true;
            if (kept) expect(sameValue(actual[name], doc[name]), `field ${name} kept as it is`).toBe(true);
            else if (simple.fields.get(name) === undefined || !simple.inclusion) expect(Object.hasOwn(actual, name), `field ${name} dropped`).toBe(false);
          }
          return;
        }
        const { _id: id, ...named } = spec;
        const expected = reference(withoutScalarElements(doc, spec), !simple.inclusion && (id === 1 || id === true) ? named : spec);
        if ('error' in expected && Object.keys(expected).length === 1) throw new Error(`${show(spec)} on ${show(doc)}: projected ${show(actual)}, mingo threw ${String(expected.error)}`);
        if (!sameValue(actual, byKey(expected as Document, order))) throw new Error(`${show(spec)} on ${show(doc)}: projected ${show(actual)}, mingo ${show(expected)}`);
      }),
      { seed: SEED, numRuns: 3_000 },
    );
    // The generators must reach the fast path, not only its refusals.
    expect(applied).toBeGreaterThan(600);
  });

  it('leaves to mingo a document where an $elemMatch meets an inner array', () => {
    const doc = { _id: 1, a: [[], { b: 1 }] };
    expect(applyProjection(doc, compileProjection({ a: { $elemMatch: {} } }, compileFilter)!)).toBeNull();
    expect(projectDocument(doc, { a: { $elemMatch: {} } })).toEqual({ _id: 1, a: [[]] });
  });
});
