/**
 * Enforcement of one unique index (single or compound, optionally partial): index key → key of
 * the document owning it.
 */
import type { Document } from '../document-collection.ts';
import { canonicalKey } from './canonical-key.ts';
import { DuplicateKeyError } from './errors.ts';
import type { IndexDefinition } from './index-definition.ts';
import { indexedValues, singleIndexedKey } from './indexed-values.ts';
import { compileFilter, type Matcher } from './query.ts';

/** Above this many combinations of `$in` values, {@link UniqueIndex.lookup} leaves the lookup to the other indexes. */
const MAX_LOOKUP_COMBINATIONS = 64;

interface IndexEntry {
  /** Canonical key of the tuple of values. */
  readonly key: string;
  /** The values, one per indexed field. */
  readonly values: readonly unknown[];
}

/** One unique index of one collection: refuses a second document with the same key tuple. */
export class UniqueIndex {
  readonly definition: IndexDefinition;
  readonly #collection: string;
  readonly #fields: readonly string[];
  readonly #covers: Matcher;
  readonly #owners = new Map<string, string>();

  /**
   * An empty index of `collection` (its name, for error messages). Throws mingo's error when the
   * partialFilterExpression is malformed.
   */
  constructor(collection: string, definition: IndexDefinition) {
    this.definition = definition;
    this.#collection = collection;
    this.#fields = Object.keys(definition.keys);
    const partial = definition.partialFilterExpression;
    this.#covers = partial ? compileFilter(partial) : () => true;
  }

  /** Throws a {@link DuplicateKeyError} when a document other than `docKey` holds one of `doc`'s index keys. */
  assertAvailable(docKey: string, doc: Document): void {
    for (const entry of this.#entriesOf(doc)) {
      const owner = this.#owners.get(entry.key);
      if (owner !== undefined && owner !== docKey) {
        const keyValue = Object.fromEntries(this.#fields.map((field, i) => [field, entry.values[i]]));
        throw new DuplicateKeyError(this.#collection, this.definition.name, this.definition.keys, keyValue);
      }
    }
  }

  /** Records `docKey` as the owner of `doc`'s index keys (after {@link assertAvailable}). */
  add(docKey: string, doc: Document): void {
    for (const entry of this.#entriesOf(doc)) this.#owners.set(entry.key, docKey);
  }

  /** Releases the index keys `doc` (the version that was added) held for `docKey`. */
  remove(docKey: string, doc: Document): void {
    for (const entry of this.#entriesOf(doc)) {
      if (this.#owners.get(entry.key) === docKey) this.#owners.delete(entry.key);
    }
  }

  /**
   * The keys of the documents that can match a filter pinning fields to values (see
   * `indexablePins`), when it pins every field of this index and the index is not partial (a
   * partial index does not hold every document); else undefined. At most one document per
   * combination of values, so a lookup instead of a scan.
   */
  lookup(pins: ReadonlyMap<string, readonly unknown[]>): ReadonlySet<string> | undefined {
    if (this.definition.partialFilterExpression) return undefined;
    let keys: string[][] = [[]];
    for (const field of this.#fields) {
      const values = pins.get(field);
      if (!values || keys.length * values.length > MAX_LOOKUP_COMBINATIONS) return undefined;
      keys = keys.flatMap((combination) => values.map((value) => [...combination, canonicalKey(value)]));
    }
    const docKeys = new Set<string>();
    for (const combination of keys) {
      const owner = this.#owners.get(JSON.stringify(combination));
      if (owner !== undefined) docKeys.add(owner);
    }
    return docKeys;
  }

  /** The last document whose entries were computed, and those entries (a write checks, then adds, the same document). */
  #lastDoc: Document | undefined;
  #lastEntries: IndexEntry[] = [];

  /** The index entries of `doc`: none outside the partial filter, one per combination of multikey values. */
  #entriesOf(doc: Document): IndexEntry[] {
    if (doc !== this.#lastDoc) {
      this.#lastEntries = this.#computeEntries(doc);
      this.#lastDoc = doc;
    }
    return this.#lastEntries;
  }

  #computeEntries(doc: Document): IndexEntry[] {
    if (!this.#covers(doc)) return [];
    const singles: string[] = [];
    for (const field of this.#fields) {
      const single = singleIndexedKey(doc, field);
      if (single === undefined) break;
      singles.push(single);
    }
    if (singles.length === this.#fields.length) return [{ key: JSON.stringify(singles), values: this.#fields.map((field) => doc[field] ?? null) }];
    let combinations: Array<{ keys: string[]; values: unknown[] }> = [{ keys: [], values: [] }];
    for (const field of this.#fields) {
      const values = [...indexedValues(doc, field)];
      combinations = combinations.flatMap((combination) =>
        values.map(([key, value]) => ({ keys: [...combination.keys, key], values: [...combination.values, value] })),
      );
    }
    return combinations.map(({ keys, values }) => ({ key: JSON.stringify(keys), values }));
  }
}
