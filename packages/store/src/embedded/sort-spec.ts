/**
 * Turns the driver's `Sort` into the `{ field: 1 | -1 }` spec mingo sorts by.
 */
import type { Sort } from '../document-collection.ts';

/** A normalized sort specification: field paths in priority order, 1 ascending, -1 descending. */
export type SortSpec = Record<string, 1 | -1>;

const DIRECTIONS: ReadonlyMap<unknown, 1 | -1> = new Map<unknown, 1 | -1>([
  [1, 1], [-1, -1], ['asc', 1], ['desc', -1], ['ascending', 1], ['descending', -1],
]);

/**
 * The spec of `sort` with `_id` ascending appended unless present, so ties (and MongoDB's
 * unspecified order between types) always break the same way. Accepts the object form
 * (`{ created_at: -1 }`, directions 1/-1/'asc'/'desc'/'ascending'/'descending') and a Map;
 * throws a TypeError for the driver's other forms and for `$meta` sorts.
 */
export function sortSpec(sort: Sort): SortSpec {
  if (typeof sort !== 'object' || sort === null || Array.isArray(sort)) {
    throw new TypeError(`embedded store: sort must be an object such as { field: 1 }, got ${JSON.stringify(sort)}`);
  }
  const entries: Iterable<[string, unknown]> = sort instanceof Map ? sort : Object.entries(sort);
  const spec: SortSpec = {};
  for (const [field, direction] of entries) {
    const normalized = DIRECTIONS.get(direction);
    if (normalized === undefined) {
      throw new TypeError(`embedded store: unsupported sort direction for '${field}': ${JSON.stringify(direction)}`);
    }
    spec[field] = normalized;
  }
  if (!Object.hasOwn(spec, '_id')) spec._id = 1;
  return spec;
}
