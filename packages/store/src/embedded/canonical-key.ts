/**
 * Canonical strings for values, used as Map keys by the `_id` map and the indexes: two values get
 * the same key exactly when an index of MongoDB holds them as the same key.
 */
import { BSON, ObjectId } from 'mongodb';

/**
 * The canonical key of `value`. Type-tagged, so the string `"1"` and the number `1` differ; `0`
 * and `-0` agree; `null` and `undefined` differ (a missing field is indexed as `null`, an empty
 * array as `undefined`). Documents and arrays are keyed by their BSON bytes, hence field order
 * matters, as in MongoDB. Throws BSON's error for values BSON cannot hold.
 */
export function canonicalKey(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `s${value}`;
    case 'number':
      return `n${value === 0 ? 0 : value}`;
    case 'boolean':
      return value ? 'b1' : 'b0';
    case 'undefined':
      return 'u';
  }
  if (value === null) return 'z';
  if (value instanceof ObjectId) return `o${value.toHexString()}`;
  if (value instanceof Date) return `d${value.getTime()}`;
  return `x${Buffer.from(BSON.serialize({ value })).toString('base64')}`;
}
