/**
 * Copies into and out of the embedded store. Into it through a BSON round trip, the same
 * conversion the MongoDB driver applies on the wire: ObjectId, Date, Binary, Long and RegExp
 * survive, `undefined` becomes `null`, functions are dropped, and the copy shares no object with
 * its source ({@link normalizeDocument}, whose bytes are also the journal's). Out of it by
 * {@link cloneStored}, a plain deep copy of what such a round trip produced: the result is the
 * same, without encoding. Immutable parts (`isImmutable` of @switchyard/domain: outputs the engine
 * froze) are shared both ways instead of copied: nobody can change them, and an output that wraps
 * earlier ones then costs only what it adds.
 */
import { isImmutable, memoOnImmutable } from '@switchyard/domain';
import { BSON, ObjectId } from 'mongodb';
import { DocumentTooLargeError, type Document } from '../document-collection.ts';
import { serializeDocument } from './bson-writer.ts';
import { FAST_PATHS } from './fast-paths.ts';

/** MongoDB's maximum document size in bytes of BSON (16 MiB). */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/**
 * The BSON bytes of `doc`. Throws a RangeError above 16 MiB, and BSON's own error for what BSON
 * cannot hold (a cycle, a symbol, a non-object).
 */
export function encodeDocument(doc: Document): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = serializeDocument(doc);
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

/** Bytes of BSON of `doc` (without encoding it). */
export function documentBytes(doc: Document): number {
  return BSON.calculateObjectSize(doc);
}

/**
 * Bytes the top-level `fields` of `doc` take in its BSON (absent fields none): a document's size
 * is 5 plus the sum of its fields', so sizes can be updated by difference.
 */
export function fieldBytes(doc: Document, fields: Iterable<string>): number {
  const subset: Document = {};
  for (const field of fields) if (field in doc) subset[field] = doc[field];
  return BSON.calculateObjectSize(subset) - EMPTY_DOCUMENT_BYTES;
}

const EMPTY_DOCUMENT_BYTES = 5;

/** Throws a DocumentTooLargeError when a document of `bytes` of BSON is over MongoDB's 16 MiB limit. */
export function assertDocumentSize(bytes: number): void {
  if (bytes > MAX_DOCUMENT_BYTES) throw new DocumentTooLargeError(`document is ${bytes} bytes of BSON, over MongoDB's 16 MiB limit`);
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

/** A document in the form MongoDB would store it, with its BSON bytes (what the journal records). Throws as {@link encodeDocument}. */
export function normalizeDocument(doc: Document): { readonly document: Document; readonly bytes: Uint8Array } {
  const bytes = encodeDocument(doc);
  // A plain deep copy is the same as decoding, and cheaper, when BSON would change nothing.
  const copy = FAST_PATHS.copyOnce ? copyIfNormalized(doc, 0) : NOT_NORMALIZED;
  return { document: copy === NOT_NORMALIZED ? decodeDocument(bytes) : (copy as Document), bytes };
}

/**
 * A deep copy of `doc` as MongoDB would store it, like {@link copyDocument}, but without encoding
 * when `doc` is BSON-normalized already (the rule for what the store's callers write): one walk
 * that copies while it checks. Throws as {@link encodeDocument} otherwise.
 */
export function normalizedCopy(doc: Document): Document {
  const copy = FAST_PATHS.copyOnce ? copyIfNormalized(doc, 0) : NOT_NORMALIZED;
  return copy === NOT_NORMALIZED ? copyDocument(doc) : (copy as Document);
}

/** What {@link copyIfNormalized} returns for a value a BSON round trip would change. */
const NOT_NORMALIZED = Symbol('not normalized');

/**
 * Nesting depth past which {@link copyIfNormalized} leaves the value to BSON, whose serializer
 * reports a cycle by name (a cyclic value would otherwise recurse until the stack overflows).
 */
const MAX_COPY_DEPTH = 1_000;

/**
 * A deep copy of `value` when {@link isNormalized} holds for it (same rules, one walk), else
 * {@link NOT_NORMALIZED}.
 */
function copyIfNormalized(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
      return isWellFormed(value) ? value : NOT_NORMALIZED;
    case 'number':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return NOT_NORMALIZED;
  }
  if (value === null) return null;
  // Immutable parts are shared, not copied (nobody changes them).
  if (isImmutable(value)) return isNormalized(value) ? value : NOT_NORMALIZED;
  if (depth > MAX_COPY_DEPTH) return NOT_NORMALIZED;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return NOT_NORMALIZED;
      const element = copyIfNormalized(value[i], depth + 1);
      if (element === NOT_NORMALIZED) return NOT_NORMALIZED;
      copy[i] = element;
    }
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype) {
    const source = value as Record<string, unknown>;
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(source)) {
      if (!isWellFormed(key)) return NOT_NORMALIZED;
      const field = copyIfNormalized(source[key], depth + 1);
      if (field === NOT_NORMALIZED) return NOT_NORMALIZED;
      // An own `__proto__` key (user JSON) must stay a field, never become the prototype.
      if (key === '__proto__') Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true });
      else copy[key] = field;
    }
    return copy;
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? NOT_NORMALIZED : new Date(value.getTime());
  return value instanceof ObjectId ? new ObjectId(value) : NOT_NORMALIZED;
}

/**
 * A deep copy of `value`, which must be BSON-normalized (a document the store holds, or a part
 * of one): equal to a BSON round trip of it and sharing no object with it, but without encoding.
 * Plain objects, arrays, Dates and ObjectIds are copied directly; any other BSON type (Binary,
 * Decimal128, DBRef, RegExp...) through a BSON round trip.
 */
export function cloneStored<T>(value: T): T {
  if (!FAST_PATHS.copyOnce) return (BSON.deserialize(BSON.serialize({ value })) as { value: T }).value;
  return cloneValue(value, true) as T;
}

/** Like {@link cloneStored}, but shares nothing, immutable parts included: a copy to change in place. */
export function cloneMutable<T>(value: T): T {
  return cloneValue(value, false) as T;
}

/** A deep copy of `value`; immutable parts (`isImmutable`, never changed by anyone) are shared when `share`. */
function cloneValue(value: unknown, share: boolean): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (share && isImmutable(value)) return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = cloneValue(value[i], share);
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) {
    const source = value as Record<string, unknown>;
    const copy: Record<string, unknown> = prototype === null ? Object.create(null) : {};
    for (const key of Object.keys(source)) {
      const field = cloneValue(source[key], share);
      // An own `__proto__` key (user JSON) must stay a field, never become the prototype.
      if (key === '__proto__') Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true });
      else copy[key] = field;
    }
    return copy;
  }
  if (value instanceof Date) return new Date(value.getTime());
  if (value instanceof ObjectId) return new ObjectId(value);
  return copyValue(value);
}

/**
 * True when `value` is already what a BSON round trip of it produces, so that it can be stored
 * as is (or copied by {@link cloneStored}): only well-formed strings (BSON's UTF-8 replaces a lone
 * surrogate), numbers, booleans, null, valid Dates (an invalid one comes back as 1970), ObjectIds,
 * arrays without holes or `undefined`, and objects of `Object.prototype` with well-formed keys
 * holding such values. False for anything else (e.g. `undefined`, which BSON turns into null, a
 * Binary, a class instance): decode it from its BSON then.
 */
export function isNormalized(value: unknown): boolean {
  return typeof value === 'object' && value !== null ? memoOnImmutable(NORMALIZED, value, isNormalizedObject) : isNormalizedScalar(value);
}

/** {@link isNormalized} of immutable objects, measured once. */
const NORMALIZED = new WeakMap<object, boolean>();

function isNormalizedScalar(value: unknown): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
      return isWellFormed(value);
    case 'number':
    case 'boolean':
      return true;
    default:
      return false;
  }
}

function isNormalizedObject(value: unknown): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isNormalized(value[i])) return false;
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype) {
    const fields = value as Record<string, unknown>;
    for (const key of Object.keys(fields)) if (!isWellFormed(key) || !isNormalized(fields[key])) return false;
    return true;
  }
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return value instanceof ObjectId;
}

/** `String.prototype.isWellFormed` (Node 20; not in the ES2023 typings): no lone surrogate. */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}
