/**
 * A lookup structure for equality filters on one field: canonical value → keys of the documents
 * whose field holds that value (or, for arrays, contains it). Used to narrow a scan to candidates;
 * the filter still decides.
 */
import type { Document } from '../document-collection.ts';
import { canonicalKey } from './canonical-key.ts';
import { indexedValues, singleIndexedKey } from './indexed-values.ts';

/** Equality lookups on one field path (see the module comment). Values are keyed by `canonicalKey`. */
export class EqualityIndex {
  /** The dotted field path indexed. */
  readonly path: string;
  readonly #entries = new Map<string, Set<string>>();

  /** An empty index of `path`. */
  constructor(path: string) {
    this.path = path;
  }

  /** Indexes `doc`, stored under the document key `docKey` (the canonical key of its `_id`). */
  add(docKey: string, doc: Document): void {
    const single = singleIndexedKey(doc, this.path);
    if (single !== undefined) this.#insert(single, docKey);
    else for (const valueKey of indexedValues(doc, this.path).keys()) this.#insert(valueKey, docKey);
  }

  /** Unindexes `doc` (the version that was indexed) of document key `docKey`. */
  remove(docKey: string, doc: Document): void {
    const single = singleIndexedKey(doc, this.path);
    if (single !== undefined) this.#delete(single, docKey);
    else for (const valueKey of indexedValues(doc, this.path).keys()) this.#delete(valueKey, docKey);
  }

  /** Moves document key `docKey` from the values of `before` to those of `after`, touching only the difference. */
  replace(docKey: string, before: Document, after: Document): void {
    const [oldSingle, newSingle] = [singleIndexedKey(before, this.path), singleIndexedKey(after, this.path)];
    if (oldSingle !== undefined && newSingle !== undefined) {
      if (oldSingle === newSingle) return;
      this.#delete(oldSingle, docKey);
      this.#insert(newSingle, docKey);
      return;
    }
    const old = indexedValues(before, this.path);
    const next = indexedValues(after, this.path);
    for (const valueKey of old.keys()) if (!next.has(valueKey)) this.#delete(valueKey, docKey);
    for (const valueKey of next.keys()) if (!old.has(valueKey)) this.#insert(valueKey, docKey);
  }

  /** The keys of documents holding any of `values` (a live set for a single value: do not mutate). */
  lookup(values: readonly unknown[]): ReadonlySet<string> {
    if (values.length === 1) return this.#entries.get(canonicalKey(values[0])) ?? new Set();
    const union = new Set<string>();
    for (const value of values) for (const docKey of this.#entries.get(canonicalKey(value)) ?? []) union.add(docKey);
    return union;
  }

  #insert(valueKey: string, docKey: string): void {
    const docKeys = this.#entries.get(valueKey);
    if (docKeys) docKeys.add(docKey);
    else this.#entries.set(valueKey, new Set([docKey]));
  }

  #delete(valueKey: string, docKey: string): void {
    const docKeys = this.#entries.get(valueKey);
    if (!docKeys) return;
    docKeys.delete(docKey);
    if (docKeys.size === 0) this.#entries.delete(valueKey);
  }
}
