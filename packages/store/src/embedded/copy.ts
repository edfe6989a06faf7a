/**
 * Copies into and out of the embedded store through a BSON round trip, the same conversion the
 * MongoDB driver applies on the wire: ObjectId, Date, Binary, Long and RegExp survive, `undefined`
 * becomes `null`, functions are dropped, and the copy shares no object with its source.
 */
import { BSON } from 'mongodb';
import { DocumentTooLargeError, type Document } from '../document-collection.ts';

/** MongoDB's maximum document size in bytes of BSON (16 MiB). */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/**
 * The BSON bytes of `doc`. Throws a RangeError above 16 MiB, and BSON's own error for what BSON
 * cannot hold (a cycle, a symbol, a non-object).
 */
export function encodeDocument(doc: Document): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = BSON.serialize(doc);
  } catch (error) {
    // BSON's serialization buffer ends a little above 16 MiB: a larger document overflows it.
    if (error instanceof RangeError) throw new DocumentTooLargeError(`document is over MongoDB's 16 MiB limit of BSON`);
    throw error;
  }
  if (bytes.byteLength > MAX_DOCUMENT_BYTES) {
    throw new DocumentTooLargeError(`document is ${bytes.byteLength} bytes of BSON, over MongoDB's 16 MiB limit`);
  }
  return bytes;
}

/** The document held by BSON `bytes` (driver defaults: numbers promoted, RegExp native). Throws on malformed BSON. */
export function decodeDocument(bytes: Uint8Array): Document {
  return BSON.deserialize(bytes);
}

/** A deep copy of `doc` as MongoDB would store it (see the module comment). Throws as {@link encodeDocument}. */
export function copyDocument(doc: Document): Document {
  return decodeDocument(encodeDocument(doc));
}

/** A deep copy of a single value (e.g. an `_id`), with the same conversions as {@link copyDocument}. */
export function copyValue(value: unknown): unknown {
  return copyDocument({ value }).value;
}
