/**
 * The keys a MongoDB index on one field path holds for a document (multikey semantics).
 */
import type { Document } from '../document-collection.ts';
import { canonicalKey } from './canonical-key.ts';

/**
 * The values an index on the dotted `path` holds for `doc`, keyed by {@link canonicalKey}
 * (duplicates collapse). Arrays on the way are descended into (a numeric segment also selects
 * that element); a leaf array contributes its elements, or `undefined` when empty; a missing
 * field contributes `null`. Only own properties are followed.
 */
export function indexedValues(doc: Document, path: string): Map<string, unknown> {
  const found = new Map<string, unknown>();
  collect(doc, path.split('.'), 0, found);
  return found;
}

function collect(value: unknown, segments: readonly string[], depth: number, found: Map<string, unknown>): void {
  if (depth === segments.length) {
    if (!Array.isArray(value)) add(found, value);
    else if (value.length === 0) add(found, undefined);
    else for (const element of value) add(found, element);
    return;
  }
  const segment = segments[depth]!;
  if (Array.isArray(value)) {
    if (value.length === 0) add(found, null);
    if (/^\d+$/.test(segment) && Number(segment) < value.length) {
      collect(value[Number(segment)], segments, depth + 1, found);
    }
    for (const element of value) {
      if (Array.isArray(element)) add(found, null);
      else collect(element, segments, depth, found);
    }
    return;
  }
  if (isPlainDocument(value) && Object.hasOwn(value, segment)) {
    collect(value[segment], segments, depth + 1, found);
    return;
  }
  add(found, null);
}

function add(found: Map<string, unknown>, value: unknown): void {
  found.set(canonicalKey(value), value);
}

function isPlainDocument(value: unknown): value is Document {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The one key an index on `path` holds for `doc` when that is plain to see: `path` is a top-level
 * field holding neither an array nor a sub-document (a scalar, an ObjectId, a Date; missing is
 * `null`). Undefined otherwise: {@link indexedValues} then. The common case of every write,
 * without building a Map.
 */
export function singleIndexedKey(doc: Document, path: string): string | undefined {
  if (path.includes('.')) return undefined;
  const value = Object.hasOwn(doc, path) ? doc[path] : null;
  if (Array.isArray(value) || isPlainDocument(value)) return undefined;
  return canonicalKey(value);
}
