/**
 * The field paths of an update, made concrete and checked before mingo applies it:
 * - positional paths (`a.$.b`, `a.$[].b`, `a.$[ident].b`) become array indexes (`a.3.b`),
 *   evaluated against the document before the update, as MongoDB does. (mingo resolves them
 *   itself but refuses two positional paths into one array, e.g. `{ 'steps.$[s].state': ..,
 *   'steps.$[s].at': .. }`, which MongoDB allows; given concrete paths it has nothing to refuse.)
 * - no two paths of the update (across operators, `$rename` targets included) may be equal or
 *   one the prefix of the other, as MongoDB requires.
 */
import type { Document } from '../document-collection.ts';
import { compileFilter, type Matcher } from './query.ts';

/** Compiled arrayFilters: identifier → matcher of `{ [identifier]: element }`. */
export type ArrayFilterMatchers = ReadonlyMap<string, Matcher>;

const NO_MATCH = 'The positional operator did not find the match needed from the query.';

/**
 * `modifier` (operator → { path: value }) with every positional path replaced by the concrete
 * paths it designates in `doc`: `$[]` every element, `$[ident]` the elements its arrayFilter
 * matches, `$` the first element matching `filter`'s condition on that array. A path designating
 * nothing is dropped, and so is an operator left empty. Throws an Error when a positional
 * segment meets a missing field or a non-array, when `$` finds no match, and when two paths
 * conflict (see the module comment).
 */
export function resolveUpdatePaths(doc: Document, modifier: Document, arrayFilters: ArrayFilterMatchers, filter: Document): Document {
  const resolved: Document = {};
  const claim = pathClaimer();
  for (const [operator, fields] of Object.entries(modifier)) {
    const concrete: Document = {};
    for (const [path, value] of Object.entries(fields as Document)) {
      for (const target of concretePaths(doc, path, arrayFilters, filter)) {
        claim(target);
        if (operator === '$rename') claim(String(value));
        concrete[target] = value;
      }
    }
    if (Object.keys(concrete).length > 0) resolved[operator] = concrete;
  }
  return resolved;
}

/** A function registering paths, throwing when one equals or nests within (or contains) an earlier one. */
function pathClaimer(): (path: string) => void {
  const claimed = new Set<string>();
  const ancestors = new Set<string>();
  return (path) => {
    const parents = path.split('.').slice(0, -1).map((_, i, segments) => segments.slice(0, i + 1).join('.'));
    const clash = claimed.has(path) || ancestors.has(path) ? path : parents.find((parent) => claimed.has(parent));
    if (clash !== undefined) throw new Error(`Updating the path '${path}' would create a conflict at '${clash}'`);
    claimed.add(path);
    for (const parent of parents) ancestors.add(parent);
  };
}

function concretePaths(doc: Document, path: string, arrayFilters: ArrayFilterMatchers, filter: Document): string[] {
  const segments = path.split('.');
  if (!segments.some(isPositional)) return [path];
  const paths: string[] = [];
  const walk = (value: unknown, depth: number, prefix: readonly string[]): void => {
    if (depth === segments.length) {
      paths.push(prefix.join('.'));
      return;
    }
    const segment = segments[depth]!;
    if (!isPositional(segment)) {
      walk(childOf(value, segment), depth + 1, [...prefix, segment]);
      return;
    }
    const arrayPath = prefix.join('.');
    if (value === undefined) throw new Error(`The path '${arrayPath}' must exist in the document in order to apply array updates.`);
    if (!Array.isArray(value)) throw new Error(`Cannot apply array updates to non-array element ${arrayPath}`);
    for (const index of positions(segment, value, arrayPath, arrayFilters, filter)) {
      walk(value[index], depth + 1, [...prefix, String(index)]);
    }
  };
  walk(doc, 0, []);
  return paths;
}

function positions(segment: string, array: readonly unknown[], arrayPath: string, arrayFilters: ArrayFilterMatchers, filter: Document): number[] {
  const indexes = [...array.keys()];
  if (segment === '$[]') return indexes;
  if (segment === '$') return [firstMatch(array, arrayPath, filter)];
  const identifier = segment.slice(2, -1);
  const matches = arrayFilters.get(identifier);
  if (!matches) throw new Error(`No array filter found for identifier '${identifier}'`);
  return indexes.filter((index) => matches({ [identifier]: array[index] }));
}

/** Index of the first element of the array at `arrayPath` that satisfies `filter`'s conditions on it. */
function firstMatch(array: readonly unknown[], arrayPath: string, filter: Document): number {
  const conditions = Object.entries(filter).filter(([key]) => key === arrayPath || key.startsWith(`${arrayPath}.`));
  if (conditions.length === 0) throw new Error(NO_MATCH);
  const matches = compileFilter(Object.fromEntries(conditions));
  const index = array.findIndex((element) => matches(nestedUnder(arrayPath, [element])));
  if (index === -1) throw new Error(NO_MATCH);
  return index;
}

/** `{ a: { b: value } }` for path `a.b`. */
function nestedUnder(path: string, value: unknown): Document {
  return path.split('.').reduceRight<unknown>((inner, field) => ({ [field]: inner }), value) as Document;
}

function childOf(value: unknown, segment: string): unknown {
  if (Array.isArray(value)) return /^\d+$/.test(segment) ? value[Number(segment)] : undefined;
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, segment)) return (value as Document)[segment];
  return undefined;
}

function isPositional(segment: string): boolean {
  return segment === '$' || (segment.startsWith('$[') && segment.endsWith(']'));
}
