/**
 * The common case of an update applied without mingo's machinery: `$set`, `$currentDate`, `$inc`,
 * `$min` and `$max` on plain dotted paths (no positional segment, no array index, no `_id`) that
 * run through plain sub-documents only. That is nearly every write of the engine (a node run
 * starts and ends, a run's status and lease change), and mingo's generic path walk was most of the
 * cost of such a write. Anything else (arrays on the way, other operators, values of other types
 * under `$inc`/`$min`/`$max`) is left to mingo, which then also throws MongoDB's errors.
 *
 * The values assigned are the update's own (parseUpdate's BSON-normalized copies), not copied
 * again: documents held by the store are never mutated in place, so sharing them is safe.
 */
import { isEqual } from 'mingo/util';
import type { Document } from '../document-collection.ts';

/** The operators this module applies. */
const PLAIN_OPERATORS: ReadonlySet<string> = new Set(['$set', '$currentDate', '$inc', '$min', '$max']);

/** Whether a path segment is neither positional nor an array index nor empty nor `__proto__`. */
function isPlainSegment(segment: string): boolean {
  // `__proto__` is left to mingo, which refuses it (assigning it would replace a prototype).
  return segment !== '' && segment !== '__proto__' && !segment.startsWith('$') && !/^\d+$/.test(segment);
}

/** One assignment of a plain update: the path's segments, the operator and its argument. */
interface Assignment {
  readonly segments: readonly string[];
  readonly operator: string;
  readonly value: unknown;
}

/**
 * The assignments of `modifier` (operator → { path: value }) when every operator is one this
 * module applies and every path is plain, no two of them equal or nested (MongoDB's conflict
 * rule); else undefined (mingo's path applies the update and reports what is wrong).
 */
export function plainAssignments(modifier: Document): readonly Assignment[] | undefined {
  const assignments: Assignment[] = [];
  const paths: string[] = [];
  for (const operator of Object.keys(modifier)) {
    if (!PLAIN_OPERATORS.has(operator)) return undefined;
    const fields = modifier[operator] as Document;
    for (const path of Object.keys(fields)) {
      const segments = path.split('.');
      if (segments[0] === '_id' || !segments.every(isPlainSegment)) return undefined;
      assignments.push({ segments, operator, value: fields[path] });
      paths.push(path);
    }
  }
  // Few paths per update: each pair compared, without sorting (or allocating).
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) if (nested(paths[i]!, paths[j]!) || nested(paths[j]!, paths[i]!)) return undefined;
  }
  return assignments;
}

/** Whether `path` equals `prefix` or lies under it (`a.b` under `a`). */
function nested(prefix: string, path: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 0x2e);
}

/**
 * Applies `assignments` to `doc` (its own fields replaced, sub-documents on the paths copied on
 * write, never changed in place) when each meets what this module handles in `doc` (every
 * existing container on a path is a plain object; `$inc` meets a number or nothing, `$min`/`$max`
 * a value of the argument's type (number or Date) or nothing). Returns whether `doc` changed, or
 * undefined, with `doc` untouched, when an assignment is not plain here.
 */
export function applyPlainly(doc: Document, assignments: readonly Assignment[]): boolean | undefined {
  for (const { segments, operator, value } of assignments) {
    const parent = containerOf(doc, segments);
    if (parent === null) return undefined;
    if (operator !== '$set' && operator !== '$currentDate' && !combinable(operator, parent?.[segments.at(-1)!], value)) return undefined;
  }
  let changed = false;
  const copies = new Set<Document>();
  for (const { segments, operator, value } of assignments) {
    const parent = ensureContainer(doc, segments, copies);
    const field = segments.at(-1)!;
    const had = Object.hasOwn(parent, field);
    const next = combine(operator, had ? parent[field] : undefined, had, value);
    if (had && isEqual(parent[field], next)) continue;
    parent[field] = next;
    changed = true;
  }
  return changed;
}

/** The plain object holding the last segment of the path, undefined when a container is missing, null when one is not a plain object. */
function containerOf(doc: Document, segments: readonly string[]): Document | undefined | null {
  let current: Document = doc;
  for (let i = 0; i < segments.length - 1; i++) {
    if (!Object.hasOwn(current, segments[i]!)) return undefined;
    const next: unknown = current[segments[i]!];
    if (!isPlainObject(next)) return null;
    current = next;
  }
  return current;
}

/**
 * The container of the path's last segment (after {@link containerOf} said none is in the way),
 * creating missing sub-documents and replacing each existing one on the way by a shallow copy
 * (once: `copies` holds those made), so that no sub-document `doc` shares is changed.
 */
function ensureContainer(doc: Document, segments: readonly string[], copies: Set<Document>): Document {
  let current: Document = doc;
  for (let i = 0; i < segments.length - 1; i++) {
    const segment = segments[i]!;
    let next = current[segment] as Document | undefined;
    if (next === undefined || !copies.has(next)) {
      next = next === undefined ? {} : { ...next };
      copies.add(next);
      current[segment] = next;
    }
    current = next;
  }
  return current;
}

/** Whether `operator` (`$inc`, `$min`, `$max`) combines `existing` with `value` here. */
function combinable(operator: string, existing: unknown, value: unknown): boolean {
  if (operator === '$inc') return typeof value === 'number' && (existing === undefined || typeof existing === 'number');
  if (typeof value === 'number') return existing === undefined || typeof existing === 'number';
  return value instanceof Date && (existing === undefined || existing instanceof Date);
}

/** The field's new value (`had`: whether it existed; `existing` its value then). */
function combine(operator: string, existing: unknown, had: boolean, value: unknown): unknown {
  if (!had || operator === '$set' || operator === '$currentDate') return value;
  if (operator === '$inc') return (existing as number) + (value as number);
  const [a, b] = [order(value), order(existing)];
  return (operator === '$min' ? a < b : a > b) ? value : existing;
}

function order(value: unknown): number {
  return value instanceof Date ? value.getTime() : (value as number);
}

function isPlainObject(value: unknown): value is Document {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
