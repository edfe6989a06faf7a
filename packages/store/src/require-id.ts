/**
 * The `_id` rule of {@link DocumentCollection.insertOne}, shared by both backends so they reject
 * the same documents (and the driver never adds an `_id` to a caller's object).
 */
import type { Document } from './document-collection.ts';

/**
 * Checks that `doc` carries a usable `_id`: present (not `undefined`), not an array, not a regex
 * (MongoDB refuses both as `_id`). Throws a TypeError otherwise.
 */
export function requireId(doc: Document): void {
  const id: unknown = doc._id;
  if (id === undefined) throw new TypeError('a document must carry its _id');
  if (Array.isArray(id) || id instanceof RegExp) {
    throw new TypeError(`an _id cannot be ${Array.isArray(id) ? 'an array' : 'a regex'}`);
  }
}
