/**
 * Index definitions of the embedded backend: validation, MongoDB's default names, comparison.
 */
import type { Document, IndexOptions } from '../document-collection.ts';
import { canonicalKey } from './canonical-key.ts';

/** A validated index: `keys` in priority order (1 ascending, -1 descending). */
export interface IndexDefinition {
  readonly name: string;
  readonly keys: Readonly<Record<string, 1 | -1>>;
  readonly unique: boolean;
  readonly partialFilterExpression?: Document;
  /**
   * A TTL index: seconds after the date in its (single) key field at which MongoDB deletes the
   * document. The embedded store keeps the option (it is part of the index's identity) but deletes
   * nothing by itself: whoever relies on expiry also sweeps (`IdempotencyKeys.purgeExpired`).
   */
  readonly expireAfterSeconds?: number;
}

/**
 * The definition `createIndex(keys, options)` asks for; the default name is MongoDB's
 * (`run_id_1_created_at_-1`). Throws a TypeError for empty keys, a direction other than 1/-1,
 * an empty name, a partialFilterExpression that is not a document, or an expireAfterSeconds that
 * is not a whole number of seconds >= 0 on a single-field index.
 */
export function indexDefinition(keys: Record<string, 1 | -1>, options: IndexOptions = {}): IndexDefinition {
  const entries = Object.entries(keys);
  if (entries.length === 0) throw new TypeError('createIndex: keys must name at least one field');
  for (const [field, direction] of entries) {
    if (field === '' || (direction !== 1 && direction !== -1)) {
      throw new TypeError(`createIndex: key '${field}' must map a field path to 1 or -1, got ${JSON.stringify(direction)}`);
    }
  }
  const { name = entries.map(([field, direction]) => `${field}_${direction}`).join('_'), unique = false, partialFilterExpression, expireAfterSeconds } = options;
  if (typeof name !== 'string' || name === '') throw new TypeError('createIndex: name must be a non-empty string');
  if (partialFilterExpression !== undefined && (typeof partialFilterExpression !== 'object' || partialFilterExpression === null)) {
    throw new TypeError('createIndex: partialFilterExpression must be a filter document');
  }
  if (expireAfterSeconds !== undefined && (!Number.isInteger(expireAfterSeconds) || expireAfterSeconds < 0 || entries.length !== 1)) {
    throw new TypeError('createIndex: expireAfterSeconds must be a whole number of seconds >= 0, on a single-field index');
  }
  return {
    name,
    keys: { ...keys },
    unique: unique === true,
    ...(partialFilterExpression && { partialFilterExpression }),
    ...(expireAfterSeconds !== undefined && { expireAfterSeconds }),
  };
}

/** True when `a` and `b` index the same fields in the same order and directions. */
export function sameKeys(a: IndexDefinition, b: IndexDefinition): boolean {
  return JSON.stringify(Object.entries(a.keys)) === JSON.stringify(Object.entries(b.keys));
}

/** True when `a` and `b` have the same keys and the same partial filter (field order counts). */
export function sameCoverage(a: IndexDefinition, b: IndexDefinition): boolean {
  return sameKeys(a, b) && canonicalKey(a.partialFilterExpression) === canonicalKey(b.partialFilterExpression);
}

/** True when `a` and `b` are the same index: name, keys, uniqueness, partial filter and TTL. */
export function sameIndex(a: IndexDefinition, b: IndexDefinition): boolean {
  return a.name === b.name && a.unique === b.unique && a.expireAfterSeconds === b.expireAfterSeconds && sameCoverage(a, b);
}
