/**
 * Errors the embedded backend raises where MongoDB raises a server error, with the same codes.
 */
import { inspect } from 'node:util';

/** A unique-index violation (MongoDB code 11000); `isDuplicateKeyError` recognizes it. */
export class DuplicateKeyError extends Error {
  readonly code = 11000;
  /** Name of the violated index (`_id_` for the primary key). */
  readonly index: string;
  /** The index's key pattern, e.g. `{ run_id: 1, node_key: 1 }`. */
  readonly keyPattern: Record<string, 1 | -1>;
  /** The clashing key, field by field. */
  readonly keyValue: Record<string, unknown>;

  /** `collection` is the collection name; the message follows MongoDB's "E11000 ..." format. */
  constructor(collection: string, index: string, keyPattern: Record<string, 1 | -1>, keyValue: Record<string, unknown>) {
    super(
      `E11000 duplicate key error collection: ${collection} index: ${index} dup key: ${inspect(keyValue, { breakLength: Infinity, depth: 3 })}`,
    );
    this.name = 'DuplicateKeyError';
    this.index = index;
    this.keyPattern = keyPattern;
    this.keyValue = keyValue;
  }
}

/**
 * `createIndex` asked for an index that clashes with an existing one: code 85
 * (IndexOptionsConflict: same keys, other name or options) or 86 (IndexKeySpecsConflict: same
 * name, other keys).
 */
export class IndexConflictError extends Error {
  readonly code: 85 | 86;

  /** `message` says which existing index clashes. */
  constructor(code: 85 | 86, message: string) {
    super(message);
    this.name = 'IndexConflictError';
    this.code = code;
  }
}
