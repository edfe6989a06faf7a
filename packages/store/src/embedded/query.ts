/**
 * The embedded backend's use of mingo for reading: filter matching, sort, skip, limit and
 * projection, with MongoDB's query language. Scripts (`$where`, `$function`) are disabled.
 */
import { Context, Query as LoadedQuery } from 'mingo';
import { Query } from 'mingo/query';
import type { Options } from 'mingo/types';
import type { Document, Filter } from '../document-collection.ts';
import type { SortSpec } from './sort-spec.ts';
import { cloneStored } from './copy.ts';
import { FAST_PATHS } from './fast-paths.ts';
import { filterKey } from './filter-key.ts';
import { applyProjection, compileProjection } from './projection.ts';
import { LRUCache } from 'lru-cache';
import { ObjectId } from 'mongodb';

/**
 * The compute options of every query: all of mingo's operators, scripts disabled. mingo's
 * `Query` (the one preloaded with operators) copies its whole operator tables into a new context
 * on every construction, a cost paid by every read; the plain `Query` of `mingo/query` reuses
 * the context of options that are already compute options. mingo does not export that class, so
 * the preloaded `Query` builds an instance once, handing it to a query operator made for the purpose.
 */
const QUERY_OPTIONS: Partial<Options> = (() => {
  let captured: Partial<Options> | undefined;
  const capture = (_field: string, _value: unknown, options: Partial<Options>) => {
    captured = options;
    return () => true;
  };
  new LoadedQuery({ _: { $captureOptions: 1 } }, { scriptEnabled: false, context: Context.init({ query: { $captureOptions: capture } }) });
  if (!captured) throw new Error('mingo did not hand its compute options to a query operator');
  return captured;
})();

/**
 * Compiled filters by {@link filterKey}: compiling costs several microseconds, about ten times a
 * match, and the same filters recur (claims, heartbeats, reads of one run). 500 entries bound the
 * memory (a compiled filter holds a copy of its values: mingo clones the filter).
 */
const COMPILED = new LRUCache<string, Query>({ max: 500 });

/** The compiled `filter`, from the cache when it is there. Throws mingo's error for an unknown operator or a malformed filter. */
function compiledQuery(filter: Filter<Document>): Query {
  const key = filterKey(filter);
  if (key === undefined) return new Query(filter, QUERY_OPTIONS);
  let query = COMPILED.get(key);
  if (!query) {
    query = new Query(filter, QUERY_OPTIONS);
    COMPILED.set(key, query);
  }
  return query;
}

/** A compiled filter: true when the document matches. */
export type Matcher = (doc: Document) => boolean;

/** How {@link selectDocuments} orders, windows and shapes the matches. Counts are documents. */
export interface Selection {
  sort?: SortSpec;
  skip?: number;
  /** 0 or absent: no limit; negative: its absolute value (as the driver does). */
  limit?: number;
  projection?: Document;
}

/** Compiles `filter`. Throws mingo's error for an unknown operator or a malformed filter. */
export function compileFilter(filter: Filter<Document>): Matcher {
  if (!FAST_PATHS.directEquality) {
    const query = compiledQuery(filter);
    return (doc) => query.test(doc);
  }
  const { fields, rest } = splitEqualities(filter);
  // The usual filter (`{ _id }`, `{ workflow_run_id, node_id, iteration_path }`): compared
  // directly, without compiling; mingo only for a document whose value is an array or another
  // BSON type (where MongoDB's equality has more to it): the whole filter then.
  let whole: Query | undefined;
  const equalities = (doc: Document): boolean | undefined => {
    equalityProbe.examined?.(doc);
    for (const [field, expected] of fields) {
      const verdict = equals(doc[field], expected);
      if (verdict !== true) return verdict;
    }
    return true;
  };
  if (rest === undefined) {
    return (doc) => equalities(doc) ?? (whole ??= compiledQuery(filter)).test(doc);
  }
  // Other conditions besides (a compare-and-set: `{ _id, lease_owner, status: { $in } }`): only
  // they are compiled, so that they are compiled once for all documents, not once per `_id`.
  const others = compiledQuery(rest);
  return (doc) => {
    const verdict = equalities(doc);
    if (verdict === undefined) return (whole ??= compiledQuery(filter)).test(doc);
    return verdict && others.test(doc);
  };
}

/**
 * `filter`'s top-level equalities on strings, finite numbers, booleans, ObjectIds and Dates (no
 * operators, no dotted paths, no null), and the filter of its other conditions (undefined when
 * there are none). The filter is their conjunction, as MongoDB reads top-level fields.
 */
function splitEqualities(filter: Filter<Document>): { fields: Array<[string, unknown]>; rest: Document | undefined } {
  const fields: Array<[string, unknown]> = [];
  let rest: Document | undefined;
  for (const field of Object.keys(filter)) {
    const value = (filter as Document)[field];
    if (!field.startsWith('$') && !field.includes('.') && isPlainEqualityValue(value)) fields.push([field, value]);
    else (rest ??= {})[field] = value;
  }
  return { fields, rest };
}

function isPlainEqualityValue(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) || isObjectId(value) || value instanceof Date;
}

/**
 * Where tests observe the documents the direct equality matcher examines (mingo's `Query.test`
 * shows the others): they count how many documents a lookup looked at, as MongoDB's explain
 * reports `totalDocsExamined`. Unset outside tests.
 */
export const equalityProbe: { examined?: (doc: Document) => void } = {};

/** Whether a stored `actual` equals `expected` (see {@link equalityFields}); undefined when only mingo can tell (arrays, other BSON types). */
function equals(actual: unknown, expected: unknown): boolean | undefined {
  if (actual === undefined || actual === null) return false;
  if (typeof actual !== 'object') return actual === expected;
  if (isObjectId(actual)) return isObjectId(expected) && actual.equals(expected);
  if (actual instanceof Date) return expected instanceof Date && actual.getTime() === expected.getTime();
  return undefined;
}

function isObjectId(value: unknown): value is ObjectId {
  return value instanceof ObjectId;
}

/**
 * The documents of `candidates` matching `filter`, sorted, skipped, limited, then projected.
 * Without a projection the returned objects are the candidates themselves (callers copy them
 * out); projected ones may share nested objects with them (but never lose fields to the projection). Throws a RangeError for a negative or
 * fractional skip or a fractional limit, and mingo's error for a malformed filter or projection.
 * Matching uses the compiled filter directly; a mingo cursor only sorts (two matches or more) and
 * applies the projections projection.ts does not (nested paths, other operators).
 */
export function selectDocuments(candidates: Iterable<Document>, filter: Filter<Document>, selection: Selection = {}): Document[] {
  const { sort, skip = 0, limit = 0, projection = {} } = selection;
  if (!Number.isInteger(skip) || skip < 0) throw new RangeError(`skip must be a non-negative integer, got ${skip}`);
  if (!Number.isInteger(limit)) throw new RangeError(`limit must be an integer, got ${limit}`);
  const named = Object.keys(projection).length > 0;
  const simple = named && FAST_PATHS.projection ? compileProjection(projection, compileFilter) : null;
  if (!named || simple !== null) {
    const matches = compileFilter(filter);
    const selected = sort || skip > 0 ? windowed(matches, candidates, sort, skip, limit) : firstMatches(matches, candidates, Math.abs(limit));
    return simple === null ? selected : selected.map((doc) => applyProjection(doc, simple) ?? compiledQuery({}).find<Document>([doc], projection).all()[0]!);
  }
  const query = compiledQuery(filter);
  // mingo removes excluded nested fields (`'a.b': 0`) from the objects it was given: project
  // copies then, never the live documents. An exclusion's top-level fields go first (that part
  // builds a new object without touching the live one), so only what remains is copied.
  const nested = Object.keys(projection).some((key) => key.includes('.'));
  const exclusion = Object.values(projection).every((value) => value === 0 || value === false);
  const first = !nested ? projection : exclusion ? Object.fromEntries(Object.entries(projection).filter(([key]) => !key.includes('.'))) : {};
  const cursor = query.find<Document>(candidates, first);
  if (sort) cursor.sort(sort);
  if (skip > 0) cursor.skip(skip);
  if (limit !== 0) cursor.limit(Math.abs(limit));
  const selected = cursor.all();
  if (!nested) return selected;
  return selected.map((doc) => compiledQuery({}).find<Document>([cloneStored(doc)], projection).all()[0]!);
}

/**
 * The matches of `query` among `candidates`, sorted (by a mingo cursor, and only when there are two
 * or more), then skipped and limited (0: no limit).
 */
function windowed(matcher: Matcher, candidates: Iterable<Document>, sort: SortSpec | undefined, skip: number, limit: number): Document[] {
  const matches = firstMatches(matcher, candidates, 0);
  const sorted = sort && matches.length > 1 ? compiledQuery({}).find<Document>(matches).sort(sort).all() : matches;
  return sorted.slice(skip, limit === 0 ? undefined : skip + Math.abs(limit));
}

/** The first `limit` (0: all) of `candidates` that `matcher` matches, in order: a cursor's result without its cost. */
function firstMatches(matcher: Matcher, candidates: Iterable<Document>, limit: number): Document[] {
  const matches: Document[] = [];
  for (const doc of candidates) {
    if (!matcher(doc)) continue;
    matches.push(doc);
    if (matches.length === limit) break;
  }
  return matches;
}

/** `doc` shaped by an inclusion or exclusion `projection` (may share nested objects with `doc`). */
export function projectDocument(doc: Document, projection: Document): Document {
  return selectDocuments([doc], {}, { projection })[0]!;
}
