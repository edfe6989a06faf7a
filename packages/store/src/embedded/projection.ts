/**
 * The projections the repositories use, applied without mingo: top-level fields only, each
 * included (`1`, `true`) or excluded (`0`, `false`), and on an inclusion `{ $elemMatch: filter }`
 * (the first array element matching `filter`, a filter on the element's fields). mingo's
 * projection runs a pipeline stage per call (tens of microseconds even for a small document);
 * this is a loop over the document's keys. Results follow MongoDB: `_id` unless excluded, the
 * document's own field order, a field absent from the document stays absent, an `$elemMatch`
 * field is absent when no element matches.
 */
import type { Document } from '../document-collection.ts';

/** A compiled filter on an array element (a document): true when it matches. */
export type ElementMatcher = (element: Document) => boolean;

/** A projection {@link compileProjection} understood. */
export interface SimpleProjection {
  /** True: only the named fields (and `_id`) are kept; false: the named fields are dropped. */
  readonly inclusion: boolean;
  /** Whether `_id` is kept. */
  readonly id: boolean;
  /** The named fields other than `_id`: `true`, or the matcher of an `$elemMatch`. */
  readonly fields: ReadonlyMap<string, true | ElementMatcher>;
}

/**
 * `projection` as a {@link SimpleProjection}, or null when it needs mingo (a nested path, an
 * operator other than `$elemMatch`, `$elemMatch` on an exclusion or with an operator at its top,
 * inclusion mixed with exclusion, an empty projection). `compile` compiles an `$elemMatch` filter
 * (it may throw on a malformed filter).
 */
export function compileProjection(projection: Document, compile: (filter: Document) => ElementMatcher): SimpleProjection | null {
  let inclusion: boolean | undefined;
  let id: boolean | undefined;
  const fields = new Map<string, true | ElementMatcher>();
  for (const key of Object.keys(projection)) {
    if (key.startsWith('$') || key.includes('.')) return null;
    const value: unknown = projection[key];
    const flag = value === 1 || value === true ? true : value === 0 || value === false ? false : null;
    if (key === '_id') {
      if (flag === null) return null;
      id = flag;
      continue;
    }
    const elemMatch = flag === null ? elemMatchFilter(value) : null;
    if (flag === null && elemMatch === null) return null;
    const mode = flag ?? true;
    if (inclusion !== undefined && inclusion !== mode) return null;
    inclusion = mode;
    fields.set(key, elemMatch === null ? true : compile(elemMatch));
  }
  // Only `_id` named: `{ _id: 1 }` keeps only it, `{ _id: 0 }` drops only it.
  if (inclusion === undefined) {
    if (id === undefined) return null;
    return { inclusion: id, id, fields };
  }
  return { inclusion, id: id ?? true, fields };
}

/**
 * `doc` shaped by `projection`: a new top-level object sharing its field values with `doc`; or
 * null, declining, when an `$elemMatch` meets an array holding an array before any sub-document
 * matched (MongoDB and mingo try an inner array as an element too, with rules of their own:
 * mingo projects the document then).
 */
export function applyProjection(doc: Document, projection: SimpleProjection): Document | null {
  const out: Document = {};
  for (const key of Object.keys(doc)) {
    if (key === '_id') {
      if (projection.id) out._id = doc._id;
      continue;
    }
    const field = projection.fields.get(key);
    if (!projection.inclusion) {
      if (field === undefined) out[key] = doc[key];
      continue;
    }
    if (field === undefined) continue;
    if (field === true) {
      out[key] = doc[key];
      continue;
    }
    const value: unknown = doc[key];
    if (!Array.isArray(value)) continue;
    const match = value.find((element: unknown) => Array.isArray(element) || (isDocument(element) && field(element)));
    if (Array.isArray(match)) return null;
    if (match !== undefined) out[key] = [match];
  }
  return out;
}

/** The filter of `{ $elemMatch: filter }` when it names fields only (no top-level operator), else null. */
function elemMatchFilter(value: unknown): Document | null {
  if (!isDocument(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== '$elemMatch') return null;
  const filter: unknown = value.$elemMatch;
  if (!isDocument(filter) || Object.keys(filter).some((key) => key.startsWith('$'))) return null;
  return filter;
}

function isDocument(value: unknown): value is Document {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
