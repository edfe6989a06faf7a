/**
 * BSON encoding of the embedded store's documents that reuses the encoding of immutable parts
 * (`isImmutable` of @switchyard/domain). An output that wraps earlier outputs (an `echo` chain, a
 * loop gathering its iterations) holds them as the same immutable objects; js-bson would encode
 * all of them again at every write, which made each step cost the size of everything before it.
 * Here the bytes of an immutable sub-document, once written, are kept (bounded, least recently
 * used first out) and copied into the next document that holds it.
 *
 * The bytes are exactly js-bson's `BSON.serialize` with its default options (tests compare them):
 * this module writes the types JSON data and the store's own fields use (strings, numbers as
 * int32 or double as js-bson chooses, booleans, null (`undefined` as js-bson treats it), plain objects,
 * arrays, Dates, ObjectIds) and asks js-bson for the element of any other value (Long,
 * Decimal128, Binary, RegExp, a Map, a class instance, a function...). What it cannot write
 * exactly so (a key holding a NUL byte, nesting deep enough to be a cycle) it leaves to
 * `BSON.serialize` for the whole document, which then also throws js-bson's errors.
 */
import { isImmutable } from '@switchyard/domain';
import { LRUCache } from 'lru-cache';
import { BSON, ObjectId } from 'mongodb';
import { DocumentTooLargeError, type Document } from '../document-collection.ts';
import { FAST_PATHS } from './fast-paths.ts';

/** MongoDB's maximum document size in bytes of BSON (16 MiB); writing stops a little past it. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** Immutable sub-documents smaller than this are written again rather than kept. */
const MIN_KEPT_BYTES = 256;

/** Encodings of immutable sub-documents, by object: at most this many bytes in all. */
const kept = new LRUCache<object, Uint8Array>({ maxSize: 8 * 1024 * 1024, sizeCalculation: (bytes) => bytes.byteLength });

/**
 * Nesting depth (of sub-documents written, not copied) past which the document is left to js-bson,
 * which walks without recursion and reports a cycle by name.
 */
const MAX_DEPTH = 1_000;

/** Thrown inside this module when js-bson must encode the whole document. */
class LeaveToBson extends Error {}

/**
 * The BSON bytes of `doc`, equal to `BSON.serialize(doc)`. Throws a DocumentTooLargeError when
 * they would exceed 16 MiB by much (the caller checks the exact limit), and js-bson's errors for
 * what BSON cannot hold.
 */
export function serializeDocument(doc: Document): Uint8Array {
  if (!FAST_PATHS.bsonWriter || Object.getPrototypeOf(doc) !== Object.prototype || typeof doc.toBSON === 'function' || doc._bsontype != null) return BSON.serialize(doc);
  const writer = new Writer();
  try {
    writer.document(doc, false, 0);
  } catch (error) {
    // A RangeError: the stack ran out first (deep nesting).
    if (error instanceof LeaveToBson || (error instanceof RangeError && !(error instanceof DocumentTooLargeError))) return BSON.serialize(doc);
    throw error;
  }
  return writer.bytes();
}

/**
 * The buffer documents are written into, shared by every write (writes are synchronous, one at a
 * time) so that a write allocates only its result; one grown past {@link MAX_SHARED_BYTES} for a
 * large document is not kept.
 */
let shared = Buffer.allocUnsafe(64 * 1024);
const MAX_SHARED_BYTES = 1024 * 1024;

class Writer {
  #buffer = shared;
  #position = 0;

  bytes(): Uint8Array {
    if (this.#buffer.byteLength <= MAX_SHARED_BYTES) shared = this.#buffer;
    return new Uint8Array(this.#buffer.subarray(0, this.#position));
  }

  /** Writes `value` (a plain object, or an array when `isArray`) as a BSON document. */
  document(value: object, isArray: boolean, depth: number): void {
    if (depth > MAX_DEPTH) throw new LeaveToBson();
    const start = this.#position;
    this.#reserve(5);
    this.#position += 4;
    if (isArray) {
      const array = value as unknown[];
      // js-bson writes `undefined` as null in arrays and leaves it out of objects.
      for (let i = 0; i < array.length; i++) this.#element(String(i), array[i] ?? null, depth);
    } else {
      const fields = value as Record<string, unknown>;
      for (const key of Object.keys(fields)) {
        const field = fields[key];
        if (field !== undefined) this.#element(key, field, depth);
        else if (key.includes('\0')) throw new LeaveToBson(); // js-bson refuses the name first
      }
    }
    this.#reserve(1);
    this.#buffer[this.#position++] = 0;
    this.#buffer.writeInt32LE(this.#position - start, start);
  }

  #element(key: string, value: unknown, depth: number): void {
    switch (typeof value) {
      case 'string':
        this.#head(0x02, key);
        this.#string(value);
        return;
      case 'number':
        if (!Object.is(value, -0) && Number.isSafeInteger(value) && value <= 0x7fffffff && value >= -0x80000000) {
          this.#head(0x10, key);
          this.#reserve(4);
          this.#position = this.#buffer.writeInt32LE(value, this.#position);
        } else {
          this.#head(0x01, key);
          this.#reserve(8);
          this.#position = this.#buffer.writeDoubleLE(value, this.#position);
        }
        return;
      case 'boolean':
        this.#head(0x08, key);
        this.#reserve(1);
        this.#buffer[this.#position++] = value ? 1 : 0;
        return;
      case 'object':
        if (value === null) this.#head(0x0a, key);
        else this.#object(key, value, depth);
        return;
      default:
        this.#foreign(key, value);
    }
  }

  #object(key: string, value: object, depth: number): void {
    // A value with `toBSON` is replaced by its result, and one with `_bsontype` is a BSON type (or
    // refused, as a document claiming to be one): js-bson's to write, as it decides.
    if (typeof (value as Document).toBSON === 'function' || (value as Document)._bsontype != null) {
      this.#foreign(key, value);
      return;
    }
    const isArray = Array.isArray(value);
    if (isArray || Object.getPrototypeOf(value) === Object.prototype) {
      this.#head(isArray ? 0x04 : 0x03, key);
      if (!isImmutable(value)) {
        this.document(value, isArray, depth + 1);
        return;
      }
      const bytes = kept.get(value);
      if (bytes) {
        this.#copy(bytes);
        return;
      }
      const start = this.#position;
      this.document(value, isArray, depth + 1);
      if (this.#position - start >= MIN_KEPT_BYTES) kept.set(value, new Uint8Array(this.#buffer.subarray(start, this.#position)));
      return;
    }
    if (value instanceof Date) {
      const time = value.getTime();
      if (Number.isNaN(time)) {
        this.#foreign(key, value);
        return;
      }
      this.#head(0x09, key);
      this.#reserve(8);
      this.#position = this.#buffer.writeBigInt64LE(BigInt(time), this.#position);
      return;
    }
    if (value instanceof ObjectId) {
      this.#head(0x07, key);
      this.#copy(value.id);
      return;
    }
    this.#foreign(key, value);
  }

  /** The element js-bson writes for `key: value` (a type this module does not write itself). */
  #foreign(key: string, value: unknown): void {
    const single = BSON.serialize({ [key]: value });
    this.#copy(single.subarray(4, single.byteLength - 1));
  }

  /** An element's type byte and name (a C string). */
  #head(type: number, key: string): void {
    this.#reserve(2 + key.length * 3);
    this.#buffer[this.#position++] = type;
    const written = this.#buffer.write(key, this.#position, 'utf8');
    if (key.includes('\0')) throw new LeaveToBson(); // js-bson refuses (or, for some names, keeps) it
    this.#position += written;
    this.#buffer[this.#position++] = 0;
  }

  /** A BSON string: int32 byte length (terminator included), UTF-8, NUL. */
  #string(text: string): void {
    this.#reserve(5 + text.length * 3);
    const written = this.#buffer.write(text, this.#position + 4, 'utf8');
    this.#buffer.writeInt32LE(written + 1, this.#position);
    this.#position += 4 + written;
    this.#buffer[this.#position++] = 0;
  }

  #copy(bytes: Uint8Array): void {
    this.#reserve(bytes.byteLength);
    this.#buffer.set(bytes, this.#position);
    this.#position += bytes.byteLength;
  }

  /** Makes room for `bytes` more bytes. Throws a DocumentTooLargeError once more than 16 MiB are written. */
  #reserve(bytes: number): void {
    const needed = this.#position + bytes;
    if (needed <= this.#buffer.byteLength) return;
    if (this.#position > MAX_DOCUMENT_BYTES) throw new DocumentTooLargeError(`document is over MongoDB's 16 MiB limit of BSON`);
    const grown = Buffer.allocUnsafe(Math.max(needed, this.#buffer.byteLength * 2));
    this.#buffer.copy(grown, 0, 0, this.#position);
    this.#buffer = grown;
  }
}
