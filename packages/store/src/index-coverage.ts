/**
 * A static planner check (issue #20 item 6): does some declared index serve a query, by
 * MongoDB's rules, or would MongoDB scan the collection (or sort all the matches in memory to
 * return one page)? The embedded store's query audit (`EmbeddedStoreOptions.queryAudit`) feeds it
 * every query a test runs; `index-coverage.test.ts` runs every repository method through it.
 *
 * The rules, a conservative subset of MongoDB's query planner:
 * - A field is *pinned* by an equality (`f: v`, `{ $eq }`, `{ $in }` without regexes, `null`,
 *   `{ $exists: false }`: the null bound), *bounded* by a range (`$gt`/`$gte`/`$lt`/`$lte`, a
 *   case-sensitive `^prefix` regex), and otherwise *unconstrained* (`$ne`, `$nin`, `$not`,
 *   `$exists: true`, other regexes, `$expr`: an index scan would read every key). Conditions
 *   inside `$and` count; a field constrained in every branch of an `$or` counts (the same index
 *   serves each branch: an OR plan); `$elemMatch: { sub: ... }` constrains `field.sub`.
 * - An index is *usable* when its first key is pinned or bounded (then MongoDB scans a bounded
 *   part of it). A partial index is usable only when the filter repeats each condition of its
 *   partialFilterExpression word for word, at the top level or in a top-level `$and`.
 * - An index *provides* a sort when, after its leading keys that the filter pins (MongoDB
 *   explodes `$in` points for the sort), its next keys are the sort's fields in order, all in the
 *   sort's directions or all reversed (a backward scan). Sort fields the filter pins are left out.
 * - A query is served when some index is usable (or the filter is empty: it reads every document
 *   by definition, e.g. a total count), or a top-level `$or` has every branch served. A query with
 *   a limit and a sort (a page, the oldest N) must also find its order in an index: a usable index
 *   that provides the sort, or, when no index is usable, any index that provides it (an ordered
 *   scan that stops at the limit); else MongoDB would read and sort every match ('sort').
 * `_id` always has its unique index.
 */
import type { Document, Sort } from './document-collection.ts';

/** An index as the check needs it (both backends' declarations have this shape). */
export interface IndexShape {
  readonly name: string;
  readonly keys: Readonly<Record<string, 1 | -1>>;
  readonly partialFilterExpression?: Document;
}

/** A query as the check needs it. */
export interface QueryShape {
  readonly filter: Document;
  /** The driver's object form (`{ field: 1 | -1 | 'asc' | 'desc' }`). */
  readonly sort?: Sort;
  /** At most this many documents (findOne, findOneAndUpdate, updateOne and deleteOne read 1). */
  readonly limit?: number;
}

/** The check's verdict: the index that serves the query, or why none does. */
export type Coverage =
  | { readonly served: true; readonly index: string | null }
  | { readonly served: false; readonly reason: 'scan' | 'sort' };

/** The `_id` index every collection has. */
const ID_INDEX: IndexShape = { name: '_id_', keys: { _id: 1 } };

type Constraint = 'pinned' | 'bounded';

/**
 * Whether `indexes` (besides `_id`) serve `query`, by the rules of the module comment. `index` is
 * null when an empty filter needs none. Pure; throws nothing for filters it does not understand
 * (their conditions count as unconstrained).
 */
export function indexCoverage(indexes: readonly IndexShape[], query: QueryShape): Coverage {
  const all = [ID_INDEX, ...indexes];
  const constraints = constraintsOf(query.filter);
  const usable = all.filter((index) => isUsable(index, constraints, query.filter));
  const sort = sortEntries(query.sort).filter(([field]) => constraints.get(field) !== 'pinned');
  if (query.limit !== undefined && query.limit > 0 && sort.length > 0) {
    const ordered = (usable.length > 0 ? usable : all).find((index) => providesSort(index, constraints, sort));
    if (ordered) return { served: true, index: ordered.name };
    return { served: false, reason: usable.length > 0 ? 'sort' : 'scan' };
  }
  if (usable.length > 0) return { served: true, index: usable[0]!.name };
  if (Object.keys(query.filter).length === 0) return { served: true, index: null };
  if (orBranchesServed(all, query.filter)) return { served: true, index: null };
  return { served: false, reason: 'scan' };
}

function isUsable(index: IndexShape, constraints: ReadonlyMap<string, Constraint>, filter: Document): boolean {
  const [first] = Object.keys(index.keys);
  if (first === undefined || !constraints.has(first)) return false;
  return index.partialFilterExpression === undefined || impliesPartial(filter, index.partialFilterExpression);
}

/** True when every condition of `partial` appears word for word in `filter` (top level or top-level `$and`). */
function impliesPartial(filter: Document, partial: Document): boolean {
  const conditions = new Set<string>();
  const collect = (clause: Document): void => {
    for (const [field, condition] of Object.entries(clause)) {
      if (field === '$and' && Array.isArray(condition)) for (const inner of condition) collect(inner as Document);
      else conditions.add(JSON.stringify([field, condition]));
    }
  };
  collect(filter);
  return Object.entries(partial).every((entry) => conditions.has(JSON.stringify(entry)));
}

function providesSort(index: IndexShape, constraints: ReadonlyMap<string, Constraint>, sort: ReadonlyArray<[string, 1 | -1]>): boolean {
  const keys = Object.entries(index.keys);
  let at = 0;
  while (at < keys.length && keys[at]![0] !== sort[0]![0] && constraints.get(keys[at]![0]) === 'pinned') at += 1;
  if (keys.length - at < sort.length) return false;
  const flip = keys[at]![1] === sort[0]![1] ? 1 : -1;
  return sort.every(([field, direction], i) => keys[at + i]![0] === field && keys[at + i]![1] * flip === direction);
}

/** True when `filter` has a top-level `$or` (or one in a top-level `$and`) each branch of which is served on its own. */
function orBranchesServed(indexes: readonly IndexShape[], filter: Document): boolean {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$or' && Array.isArray(condition) && condition.length > 0) {
      if (condition.every((branch) => indexCoverage(indexes, { filter: branch as Document }).served)) return true;
    }
    if (field === '$and' && Array.isArray(condition) && condition.some((clause) => orBranchesServed(indexes, clause as Document))) return true;
  }
  return false;
}

/** The sort's fields and directions in priority order (1 ascending, -1 descending). */
function sortEntries(sort: Sort | undefined): Array<[string, 1 | -1]> {
  if (sort === undefined || typeof sort !== 'object' || sort === null || Array.isArray(sort)) return [];
  const entries: Iterable<[string, unknown]> = sort instanceof Map ? sort : Object.entries(sort);
  return [...entries].map(([field, direction]) => [field, direction === -1 || direction === 'desc' || direction === 'descending' ? -1 : 1]);
}

/** The fields `filter` constrains and how (see the module comment); `prefix` is an `$elemMatch`'s array path. */
function constraintsOf(filter: Document, prefix = ''): Map<string, Constraint> {
  const constraints = new Map<string, Constraint>();
  const add = (field: string, constraint: Constraint | undefined): void => {
    if (constraint === undefined || constraints.get(field) === 'pinned') return;
    constraints.set(field, constraint);
  };
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const clause of condition) for (const [inner, constraint] of constraintsOf(clause as Document, prefix)) add(inner, constraint);
    } else if (field === '$or' && Array.isArray(condition) && condition.length > 0) {
      const branches = condition.map((branch) => constraintsOf(branch as Document, prefix));
      for (const [inner, constraint] of branches[0]!) {
        if (!branches.every((branch) => branch.has(inner))) continue;
        add(inner, branches.every((branch) => branch.get(inner) === 'pinned') ? 'pinned' : 'bounded');
      }
    } else if (!field.startsWith('$')) {
      const path = prefix + field;
      const elemMatch = isOperatorDocument(condition) ? (condition as Document).$elemMatch : undefined;
      if (isPlainDocument(elemMatch) && !Object.keys(elemMatch).some((key) => key.startsWith('$'))) {
        for (const [inner, constraint] of constraintsOf(elemMatch, `${path}.`)) add(inner, constraint);
      } else add(path, constraintOf(condition));
    }
  }
  return constraints;
}

function constraintOf(condition: unknown): Constraint | undefined {
  if (condition instanceof RegExp) return isPrefixRegex(condition.source, condition.flags) ? 'bounded' : undefined;
  if (!isOperatorDocument(condition)) return 'pinned';
  const operators = condition as Document;
  if (Object.hasOwn(operators, '$eq')) return 'pinned';
  if (Array.isArray(operators.$in) && !operators.$in.some((value) => value instanceof RegExp)) return 'pinned';
  if (operators.$exists === false) return 'pinned';
  if (['$gt', '$gte', '$lt', '$lte'].some((operator) => Object.hasOwn(operators, operator))) return 'bounded';
  if (typeof operators.$regex === 'string' && isPrefixRegex(operators.$regex, typeof operators.$options === 'string' ? operators.$options : '')) return 'bounded';
  return undefined;
}

/** A case-sensitive regex anchored at the start with a literal first character: MongoDB scans a key range. */
function isPrefixRegex(source: string, flags: string): boolean {
  return !flags.includes('i') && /^\^[^.*+?^${}()|[\]\\]/.test(source);
}

function isOperatorDocument(value: unknown): boolean {
  return isPlainDocument(value) && Object.keys(value).some((key) => key.startsWith('$'));
}

function isPlainDocument(value: unknown): value is Document {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}
