/**
 * The entries of the embedded store's journal and snapshot files, and their one-line encoding.
 *
 * A line is JSON `{"op":"put"|"patch"|"delete"|"index"|"dropIndex","coll":"<collection>","bson":"<base64>"}`
 * where `bson` holds, as BSON, the full new document (`put`), `{ _id, set, unset }` (`patch`: the
 * top-level fields an update changed, with their new values, and those it removed), `{ _id }`
 * (`delete`), the index definition (`index`) or `{ name }` (`dropIndex`). Versions before
 * `dropIndex` existed cannot read a journal holding one (compaction leaves none). Versions before `patch` existed cannot read a
 * journal holding one (compaction rewrites the journal as `put`s). BSON rather than Extended JSON because EJSON would read user data such
 * as `{ "$date": ... }` or `{ "$ref": ..., "$id": ... }` back as typed values; BSON is exact.
 */
import type { Document } from '../document-collection.ts';
import { decodeDocument, encodeDocument } from './copy.ts';
import { CorruptFileError } from './corrupt-file.ts';
import { indexDefinition, type IndexDefinition } from './index-definition.ts';
import type { Line } from './line-reader.ts';

/** One change (journal) or one piece of state (snapshot) of a collection. */
export type JournalEntry =
  | {
      readonly op: 'put';
      readonly collection: string;
      readonly document: Document;
      /** `document` encoded as BSON, when the writer already has it (saves encoding it again). */
      readonly bytes?: Uint8Array;
    }
  | {
      readonly op: 'patch';
      readonly collection: string;
      readonly id: unknown;
      /** Top-level fields with their whole new values. */
      readonly set: Document;
      /** Top-level fields removed. */
      readonly unset: readonly string[];
      /** The entry's payload encoded as BSON, when the writer already has it (see {@link encodePatch}). */
      readonly bytes?: Uint8Array;
    }
  | { readonly op: 'delete'; readonly collection: string; readonly id: unknown }
  | { readonly op: 'index'; readonly collection: string; readonly index: IndexDefinition }
  | { readonly op: 'dropIndex'; readonly collection: string; readonly name: string };

/** The line (without its newline) of `entry`. Throws as `encodeDocument`. */
export function encodeEntry(entry: JournalEntry): string {
  const bytes = (entry.op === 'put' || entry.op === 'patch' ? entry.bytes : undefined) ?? encodeDocument(payloadOf(entry));
  const bson = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  // As JSON.stringify({ op, coll, bson }) would write it (base64 needs no escaping).
  return `{"op":${JSON.stringify(entry.op)},"coll":${JSON.stringify(entry.collection)},"bson":"${bson}"}`;
}

/** The entry encoded in `line`. Throws an Error naming what is malformed. */
export function decodeEntry(line: string): JournalEntry {
  const parsed: unknown = JSON.parse(line);
  if (typeof parsed !== 'object' || parsed === null) throw new Error('entry is not a JSON object');
  const { op, coll: collection, bson } = parsed as Record<string, unknown>;
  if (typeof collection !== 'string' || collection === '') throw new Error('entry lacks its collection name');
  if (typeof bson !== 'string') throw new Error('entry lacks its BSON payload');
  const payload = decodeDocument(Buffer.from(bson, 'base64'));
  switch (op) {
    case 'put':
      if (payload._id === undefined) throw new Error('put entry holds a document without _id');
      return { op, collection, document: payload };
    case 'patch': {
      const { _id: id, set, unset } = payload;
      if (id === undefined) throw new Error('patch entry lacks the _id');
      if (typeof set !== 'object' || set === null || Array.isArray(set)) throw new Error('patch entry lacks its fields');
      if (!Array.isArray(unset) || !unset.every((field) => typeof field === 'string')) throw new Error('patch entry lacks its removed fields');
      return { op, collection, id, set: set as Document, unset: unset as string[] };
    }
    case 'delete':
      if (payload._id === undefined) throw new Error('delete entry lacks the _id');
      return { op, collection, id: payload._id };
    case 'index': {
      const { keys, name, unique, partialFilterExpression, expireAfterSeconds } = payload;
      return { op, collection, index: indexDefinition(keys, { name, unique, partialFilterExpression, expireAfterSeconds }) };
    }
    case 'dropIndex':
      if (typeof payload.name !== 'string') throw new Error('dropIndex entry lacks the index name');
      return { op, collection, name: payload.name };
    default:
      throw new Error(`unknown entry op ${JSON.stringify(op)}`);
  }
}

/** Decodes `line` of `path`, or throws a {@link CorruptFileError} naming the file, line and byte offset. */
export function decodeLine(path: string, line: Line): JournalEntry {
  try {
    return decodeEntry(line.text);
  } catch (error) {
    throw new CorruptFileError(path, line, (error as Error).message, { cause: error });
  }
}

/**
 * The BSON payload of a patch entry (`{ _id, set, unset }`), and how many bytes the `set` fields
 * take in a document (the sum of their elements: a document's size changes by the difference of
 * the old and new fields' bytes). The fields are encoded once, for both. Throws as
 * `encodeDocument`.
 */
export function encodePatch(id: unknown, set: Document, unset: readonly string[]): { bytes: Uint8Array; setFieldBytes: number } {
  const setDocument = encodeDocument(set);
  const idElements = elementsOf(encodeDocument({ _id: id }));
  const unsetElements = elementsOf(encodeDocument({ unset }));
  const bytes = new Uint8Array(4 + idElements.byteLength + SET_ELEMENT_HEAD.byteLength + setDocument.byteLength + unsetElements.byteLength + 1);
  new DataView(bytes.buffer).setInt32(0, bytes.byteLength, true);
  let offset = 4;
  for (const part of [idElements, SET_ELEMENT_HEAD, setDocument, unsetElements]) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return { bytes, setFieldBytes: setDocument.byteLength - EMPTY_DOCUMENT_BYTES };
}

/** BSON element header of an embedded document named `set`: type 0x03, then the name as a C string. */
const SET_ELEMENT_HEAD = Uint8Array.of(0x03, ...Buffer.from('set'), 0);

/** Bytes of an empty BSON document (its length and terminator). */
const EMPTY_DOCUMENT_BYTES = 5;

/** The element bytes of a BSON document (without its length prefix and terminator). */
function elementsOf(document: Uint8Array): Uint8Array {
  return document.subarray(4, document.byteLength - 1);
}

function payloadOf(entry: JournalEntry): Document {
  switch (entry.op) {
    case 'put':
      return entry.document;
    case 'patch':
      return { _id: entry.id, set: entry.set, unset: entry.unset };
    case 'delete':
      return { _id: entry.id };
    case 'index':
      return entry.index;
    case 'dropIndex':
      return { name: entry.name };
  }
}

/**
 * `document` with the patch applied: a new object sharing every field the patch does not name
 * (documents held by the store are never changed in place).
 */
export function applyPatch(document: Document, patch: { readonly set: Document; readonly unset: readonly string[] }): Document {
  const next: Document = { ...document, ...patch.set };
  for (const field of patch.unset) delete next[field];
  return next;
}
