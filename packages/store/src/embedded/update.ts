/**
 * The embedded backend's update operators. Each operator is mingo's own (`$set`, `$unset`,
 * `$inc`, `$mul`, `$min`, `$max`, `$rename`, `$push`, `$pull`, `$pullAll`, `$addToSet`, `$pop`,
 * `$bit`), called directly rather than through mingo's `update()`, which rebuilds its operator
 * tables on every call. Added here: upserts and `$setOnInsert`, `$currentDate` (mingo's freezes
 * the clock of its shared defaults), concrete positional paths and conflict checks
 * (update-paths.ts), and MongoDB's validation of arrayFilters.
 */
import { $addToSet, $bit, $inc, $max, $min, $mul, $pop, $pull, $pullAll, $push, $rename, $set, $unset } from 'mingo/operators/update';
import { setValue } from 'mingo/util';
import { ObjectId } from 'mongodb';
import type { Document, Filter, UpdateFilter } from '../document-collection.ts';
import { cloneMutable, normalizedCopy } from './copy.ts';
import { FAST_PATHS } from './fast-paths.ts';
import { pinnedFields } from './pinned-fields.ts';
import { applyPlainly, plainAssignments } from './plain-update.ts';
import { compileFilter } from './query.ts';
import { resolveUpdatePaths, type ArrayFilterMatchers } from './update-paths.ts';

/** A validated update: the operators to apply (BSON-normalized copies), `$setOnInsert`'s fields, the compiled arrayFilters. */
export interface ParsedUpdate {
  readonly modifier: Document;
  /** The modifier as plain assignments (see plain-update.ts), when it is one. */
  readonly plain: ReturnType<typeof plainAssignments>;
  readonly setOnInsert: Document | undefined;
  readonly arrayFilters: ArrayFilterMatchers;
}

/** An update operator: its `{ path: value }` argument → mutation of a document returning the changed paths. */
type Operator = (fields: Document) => (doc: Document) => string[];

const OPERATORS: ReadonlyMap<string, Operator> = new Map<string, Operator>([
  ['$set', $set],
  ['$unset', $unset],
  ['$inc', $inc],
  ['$mul', $mul],
  ['$min', $min],
  ['$max', $max],
  ['$rename', $rename],
  ['$push', $push],
  ['$pull', $pull],
  ['$pullAll', $pullAll],
  ['$addToSet', $addToSet],
  ['$pop', $pop],
  ['$bit', $bit],
  ['$currentDate', $set], // values are Dates fixed by parseUpdate
]);

const IDENTIFIER = /\$\[([^\]]+)\]/g;

/**
 * Validates `update` (known operators only, each mapping field paths to values) and compiles
 * `arrayFilters`, each of which must name one identifier used by the update, as MongoDB
 * requires. `$currentDate` takes the time of this call. Throws a TypeError for a replacement
 * document, an unknown or malformed operator, or a `$currentDate` other than `true` /
 * `{ $type: 'date' }`; an Error for an arrayFilters mismatch; mingo's error for a malformed
 * array filter; BSON's error (or a DocumentTooLargeError) for operator values BSON cannot hold.
 */
export function parseUpdate(update: UpdateFilter<Document>, arrayFilters: Document[] = []): ParsedUpdate {
  const operators = Object.entries(update as Document);
  if (operators.length === 0) throw new TypeError('update document must contain update operators');
  const used = new Set<string>();
  for (const [operator, fields] of operators) {
    if (!OPERATORS.has(operator) && operator !== '$setOnInsert') {
      throw new TypeError(
        operator.startsWith('$')
          ? `unknown update operator '${operator}'`
          : `update document requires update operators (keys starting with '$'); got '${operator}'`,
      );
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      throw new TypeError(`${operator} takes a document of field paths, got ${JSON.stringify(fields)}`);
    }
    for (const path of Object.keys(fields)) if (path.includes('$[')) for (const [, identifier] of path.matchAll(IDENTIFIER)) used.add(identifier!);
  }
  const matchers = new Map(arrayFilters.map((filter) => [arrayFilterIdentifier(filter), compileFilter(filter)]));
  if (matchers.size !== arrayFilters.length) throw new Error('Found multiple array filters with the same top-level field name');
  for (const identifier of used) {
    if (!matchers.has(identifier)) throw new Error(`No array filter found for identifier '${identifier}'`);
  }
  for (const identifier of matchers.keys()) {
    if (!used.has(identifier)) throw new Error(`The array filter for identifier '${identifier}' was not used in the update`);
  }
  const { $setOnInsert: setOnInsert, ...modifier } = update as Document;
  if (modifier.$currentDate) modifier.$currentDate = currentDates(modifier.$currentDate as Document);
  // The operators' values as MongoDB would receive them, and none of them the caller's objects:
  // what an update writes into a document is then already BSON-normalized (see `isNormalized`).
  const copied = normalizedCopy(modifier);
  return { modifier: copied, plain: matchers.size === 0 ? plainAssignments(copied) : undefined, setOnInsert: setOnInsert as Document | undefined, arrayFilters: matchers };
}

/**
 * `target` with `update` applied, as on a match (`$setOnInsert` ignored), by copy on write:
 * `target` is not changed, and the result shares with it every sub-document the update does not
 * change. `filter` is the one that matched `target` (it resolves the positional `$`). Also says
 * whether the update changed anything, and whether what it wrote is BSON-normalized for sure:
 * true when it was applied as plain assignments of its (normalized) values (plain-update.ts),
 * false when mingo applied it (which can leave e.g. `undefined` in an array: check the result).
 * Throws as `resolveUpdatePaths`, and mingo's error for an update of `_id` or a malformed
 * operator argument.
 */
export function updatedCopy(target: Document, update: ParsedUpdate, filter: Filter<Document>): { document: Document; changed: boolean; normalized: boolean } {
  const document: Document = { ...target };
  // Positional paths made concrete first: over no array element (e.g. no gate left open), what
  // remains may well be plain assignments.
  const plain = update.plain ?? (update.arrayFilters.size > 0 || hasPositionalPath(update.modifier) ? plainAssignments(resolveUpdatePaths(target, update.modifier, update.arrayFilters, filter)) : undefined);
  const changed = plain && FAST_PATHS.plainUpdate ? applyPlainly(document, plain) : undefined;
  if (changed !== undefined) return { document, changed, normalized: true };
  // mingo changes sub-documents in place: it works on copies of the fields it may touch.
  for (const field of touchedFields(update)) if (field in target) document[field] = cloneMutable(target[field]);
  return { document, changed: applyOperators(document, update.modifier, update, filter), normalized: false };
}

/**
 * The document an upsert inserts when `filter` matched nothing: the fields `filter` pins to a
 * single value (see `pinnedFields`), then `update`'s operators, then `$setOnInsert`; `_id`
 * comes first and is a new ObjectId unless the filter or update set it. Throws as
 * {@link applyUpdate} (a positional `$` is an error here, as in MongoDB).
 */
export function upsertDocument(filter: Filter<Document>, update: ParsedUpdate): Document {
  const doc: Document = {};
  for (const [path, values] of pinnedFields(filter)) if (values.length === 1) setValue(doc, path, values[0]);
  if (!update.plain || !FAST_PATHS.plainUpdate || applyPlainly(doc, update.plain) === undefined) applyOperators(doc, update.modifier, update, {});
  if (update.setOnInsert) {
    const setOnInsert = { $set: update.setOnInsert };
    const plain = plainAssignments(setOnInsert);
    if (!plain || !FAST_PATHS.plainUpdate || applyPlainly(doc, plain) === undefined) applyOperators(doc, setOnInsert, update, {});
  }
  const { _id = new ObjectId(), ...fields } = doc;
  return { _id, ...fields };
}

function applyOperators(doc: Document, operators: Document, update: ParsedUpdate, filter: Filter<Document>): boolean {
  let changed = false;
  for (const [operator, fields] of Object.entries(resolveUpdatePaths(doc, operators, update.arrayFilters, filter))) {
    if (OPERATORS.get(operator)!(fields as Document)(doc).length > 0) changed = true;
  }
  return changed;
}

/** Whether some path of `modifier` has a positional segment (`$`, `$[]`, `$[ident]`). */
function hasPositionalPath(modifier: Document): boolean {
  return Object.values(modifier).some((fields) => Object.keys(fields as Document).some((path) => path.includes('$')));
}

function currentDates(fields: Document): Document {
  const now = new Date();
  const dates: Document = {};
  for (const [path, spec] of Object.entries(fields)) {
    if (spec !== true && (spec as { $type?: unknown } | null)?.$type !== 'date') {
      throw new TypeError(`$currentDate supports true or { $type: 'date' } only, got ${JSON.stringify(spec)} for '${path}'`);
    }
    dates[path] = now;
  }
  return dates;
}

/** The one identifier an array filter is about (`{ 'r.step': 'x', 'r.done': null }` → `r`). */
function arrayFilterIdentifier(filter: Document): string {
  const identifiers = new Set(Object.keys(filter).map((path) => path.split('.')[0]!));
  if (identifiers.size !== 1) {
    throw new Error(`an array filter must name exactly one identifier, got ${JSON.stringify([...identifiers])}`);
  }
  return identifiers.values().next().value!;
}

/**
 * The top-level fields `update` may change: the first segment of every path it names (for
 * `$rename`, of the new names too). An update applied to a document changes no other field, so
 * a writer may copy just these (copy on write) and journal just these.
 */
export function touchedFields(update: ParsedUpdate): Set<string> {
  const fields = new Set<string>();
  for (const operator of Object.keys(update.modifier)) {
    const paths = update.modifier[operator] as Document;
    for (const path of Object.keys(paths)) {
      fields.add(topField(path));
      const value = paths[path];
      if (operator === '$rename' && typeof value === 'string') fields.add(topField(value));
    }
  }
  return fields;
}

/** The top-level field of a dotted path. */
function topField(path: string): string {
  const dot = path.indexOf('.');
  return dot < 0 ? path : path.slice(0, dot);
}
