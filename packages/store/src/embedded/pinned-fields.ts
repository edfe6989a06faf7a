/**
 * Reads from a filter which fields it pins to a list of values, for index lookups and for the
 * fields an upsert copies from its filter.
 */
import { ObjectId } from 'mongodb';
import type { Document } from '../document-collection.ts';

/**
 * Every field that `filter` requires to equal one of a list of values, as `[path, values]`:
 * `path: v` (v neither a regex nor an operator document), `path: { $eq: v }` and
 * `path: { $in: [...] }`, at the top level or inside a top-level `$and`. A field may appear more
 * than once (each occurrence must hold).
 */
export function* pinnedFields(filter: Document): Generator<[string, unknown[]]> {
  for (const [path, condition] of Object.entries(filter)) {
    if (path === '$and' && Array.isArray(condition)) {
      for (const clause of condition) if (isDocument(clause)) yield* pinnedFields(clause);
    } else if (!path.startsWith('$')) {
      const values = pinnedValues(condition);
      if (values !== undefined) yield [path, values];
    }
  }
}

/**
 * The fields of `filter` pinned to values that the `_id` map and the equality indexes can look up
 * (strings, numbers, booleans, Dates, ObjectIds; see {@link isIndexableScalar}). When a field is
 * pinned twice, the first occurrence wins (either yields a superset of the matches).
 */
export function indexablePins(filter: Document): Map<string, unknown[]> {
  const pins = new Map<string, unknown[]>();
  for (const [path, values] of pinnedFields(filter)) {
    if (!pins.has(path) && values.every(isIndexableScalar)) pins.set(path, values);
  }
  return pins;
}

/**
 * True for values whose index key (canonical) equality is exactly mingo's equality: strings,
 * non-NaN numbers, booleans, valid Dates and ObjectIds. `null` is excluded (it also matches
 * missing fields), as are regexes, documents and arrays.
 */
export function isIndexableScalar(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return !Number.isNaN(value);
  }
  return value instanceof ObjectId || (value instanceof Date && !Number.isNaN(value.getTime()));
}

function pinnedValues(condition: unknown): unknown[] | undefined {
  if (condition instanceof RegExp) return undefined;
  if (!isOperatorDocument(condition)) return [condition];
  if (Object.hasOwn(condition, '$eq')) return [condition.$eq];
  if (Array.isArray(condition.$in) && !condition.$in.some((value) => value instanceof RegExp)) return condition.$in;
  return undefined;
}

function isOperatorDocument(value: unknown): value is Document {
  return isDocument(value) && Object.keys(value).some((key) => key.startsWith('$'));
}

function isDocument(value: unknown): value is Document {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}
