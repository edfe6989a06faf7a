/**
 * Record <-> document conversion shared by the repositories: `id` <-> `_id`, id fields as
 * ObjectIds in MongoDB and 24-hex strings in records, everything else through domain's
 * `toDocument` / `fromDocument` (camelCase <-> snake_case, user data keys escaped).
 */
import { ObjectId } from 'mongodb';
import { fromDocument, isObjectIdHex, toDocument } from '@switchyard/domain';
import type { Document } from '../document-collection.ts';

/** A fresh id, as a 24-hex string. */
export function newId(): string {
  return new ObjectId().toHexString();
}

/** 24-hex string -> ObjectId. Callers validate ids at the edge; a bad one here is a bug. */
export function oid(hex: string): ObjectId {
  if (!isObjectIdHex(hex)) throw new TypeError(`not an ObjectId hex string: '${hex}'`);
  return new ObjectId(hex);
}

/**
 * Record -> document. `refFields` (camelCase) hold ids of other documents: stored as ObjectIds
 * (null stays null).
 */
export function recordToDocument(record: { id: string } & object, refFields: readonly string[] = []): Document {
  const { id, ...rest } = record as { id: string } & Record<string, unknown>;
  const doc = toDocument<Document>(rest);
  for (const field of refFields) {
    const value = (rest as Record<string, unknown>)[field];
    const key = Object.keys(toDocument({ [field]: 0 }))[0]!;
    doc[key] = typeof value === 'string' ? oid(value) : null;
  }
  return { _id: oid(id), ...doc };
}

/** The 24-hex id of a document read from either backend. */
export function hexId(doc: Document): string {
  return (doc._id as ObjectId).toHexString();
}

/** Document -> record: the inverse of {@link recordToDocument}. */
export function documentToRecord<T>(doc: Document, refFields: readonly string[] = []): T {
  // `_id` keeps its name through the mapping (no letter before its underscore) and its ObjectId
  // value; the record gets `id` first and every other field in the document's order. A key loop,
  // not object rest and spread, which V8 runs on a slow path (a few microseconds per document).
  const mapped = fromDocument<Record<string, unknown>>(doc);
  const record: Record<string, unknown> = { id: (doc._id as ObjectId).toHexString() };
  for (const key of Object.keys(mapped)) if (key !== '_id') record[key] = mapped[key];
  for (const field of refFields) {
    const value = record[field];
    record[field] = value instanceof ObjectId ? value.toHexString() : (value ?? null);
  }
  return record as T;
}

/** Escapes a user string for a literal match inside a MongoDB `$regex`. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\\/-]/g, '\\$&');
}
