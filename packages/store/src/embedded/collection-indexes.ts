/**
 * All secondary indexes of one embedded collection: the definitions, the unique indexes that
 * enforce them, and an equality index on the first field of every index (except `_id`, which the
 * collection's primary map serves) to narrow scans.
 */
import type { Document } from '../document-collection.ts';
import { EqualityIndex } from './equality-index.ts';
import { IndexConflictError } from './errors.ts';
import { sameCoverage, sameIndex, sameKeys, type IndexDefinition } from './index-definition.ts';
import { compileFilter } from './query.ts';
import { UniqueIndex } from './unique-index.ts';

/** An index built over the current documents by {@link CollectionIndexes.prepare}, ready to install. */
export interface PreparedIndex {
  readonly definition: IndexDefinition;
  readonly unique: UniqueIndex | undefined;
  /** A new equality index, when no earlier index starts with the same field. */
  readonly equality: EqualityIndex | undefined;
}

/** The secondary indexes of one collection, kept in step with its documents by the collection. */
export class CollectionIndexes {
  readonly #collection: string;
  readonly #definitions = new Map<string, IndexDefinition>();
  readonly #unique: UniqueIndex[] = [];
  readonly #equality = new Map<string, EqualityIndex>();
  /**
   * Top-level fields some index reads (its keys, its partial filter's fields), or null when a
   * partial filter names fields through operators this cannot follow (then every field counts).
   */
  #indexedFields: Set<string> | null = new Set();

  /** No indexes yet; `collection` names the collection in error messages. */
  constructor(collection: string) {
    this.#collection = collection;
  }

  /** True when an index named `name` is installed. */
  has(name: string): boolean {
    return this.#definitions.has(name);
  }

  /** The installed definitions, in creation order. */
  definitions(): IterableIterator<IndexDefinition> {
    return this.#definitions.values();
  }

  /**
   * Builds the index `definition` over `documents` (document key → document) without installing
   * it; undefined when an identical index exists. Throws an {@link IndexConflictError} when it
   * clashes with an existing index, a DuplicateKeyError when the documents violate it, and
   * mingo's error for a malformed partialFilterExpression.
   */
  prepare(definition: IndexDefinition, documents: ReadonlyMap<string, Document>): PreparedIndex | undefined {
    const existing = this.#definitions.get(definition.name);
    if (existing && sameIndex(existing, definition)) return undefined;
    if (existing) {
      throw sameKeys(existing, definition)
        ? new IndexConflictError(85, `An existing index has the same name as the requested index but different options: ${definition.name}`)
        : new IndexConflictError(86, `An existing index has the same name as the requested index but different keys: ${definition.name}`);
    }
    for (const other of this.#definitions.values()) {
      if (sameCoverage(other, definition)) {
        throw new IndexConflictError(85, `Index already exists with a different name or options: ${other.name}`);
      }
    }
    if (definition.partialFilterExpression) compileFilter(definition.partialFilterExpression);
    const unique = definition.unique ? new UniqueIndex(this.#collection, definition) : undefined;
    const [firstField] = Object.keys(definition.keys) as [string];
    const equality = firstField === '_id' || this.#equality.has(firstField) ? undefined : new EqualityIndex(firstField);
    for (const [docKey, doc] of documents) {
      unique?.assertAvailable(docKey, doc);
      unique?.add(docKey, doc);
      equality?.add(docKey, doc);
    }
    return { definition, unique, equality };
  }

  /** Installs an index from {@link prepare}, provided no document changed in between. */
  install(prepared: PreparedIndex): void {
    this.#definitions.set(prepared.definition.name, prepared.definition);
    if (prepared.unique) this.#unique.push(prepared.unique);
    if (prepared.equality) this.#equality.set(prepared.equality.path, prepared.equality);
    this.#indexedFields = indexedFieldsOf(this.#definitions.values());
  }

  /**
   * Removes the index `name` (its equality index too, unless another index starts with the same
   * field); returns what was removed, which {@link install} puts back (a failed drop undone), or
   * undefined when there is no such index.
   */
  drop(name: string): PreparedIndex | undefined {
    const definition = this.#definitions.get(name);
    if (!definition) return undefined;
    const unique = this.#unique.find((index) => index.definition === definition);
    const [firstField] = Object.keys(definition.keys) as [string];
    const shared = [...this.#definitions.values()].some((other) => other !== definition && Object.keys(other.keys)[0] === firstField);
    const equality = shared ? undefined : this.#equality.get(firstField);
    const dropped: PreparedIndex = { definition, unique, equality };
    this.uninstall(dropped);
    return dropped;
  }

  /** Removes an index {@link install}ed last (a failed write undone, see group-commit.ts). */
  uninstall(prepared: PreparedIndex): void {
    this.#definitions.delete(prepared.definition.name);
    if (prepared.unique) this.#unique.splice(this.#unique.lastIndexOf(prepared.unique), 1);
    if (prepared.equality) this.#equality.delete(prepared.equality.path);
    this.#indexedFields = indexedFieldsOf(this.#definitions.values());
  }

  /**
   * Whether a change of the top-level `fields` of a document can change what any index holds for
   * it: when false, an update touching only those fields needs neither a unique check nor
   * re-indexing.
   */
  reads(fields: Iterable<string>): boolean {
    if (this.#indexedFields === null) return true;
    for (const field of fields) if (this.#indexedFields.has(field)) return true;
    return false;
  }

  /** Throws a DuplicateKeyError when storing `doc` under `docKey` would violate a unique index. */
  assertUnique(docKey: string, doc: Document): void {
    for (const index of this.#unique) index.assertAvailable(docKey, doc);
  }

  /** Indexes a new document (after {@link assertUnique}). */
  add(docKey: string, doc: Document): void {
    for (const index of this.#unique) index.add(docKey, doc);
    for (const index of this.#equality.values()) index.add(docKey, doc);
  }

  /** Unindexes a deleted document (`doc` is the version that was indexed). */
  remove(docKey: string, doc: Document): void {
    for (const index of this.#unique) index.remove(docKey, doc);
    for (const index of this.#equality.values()) index.remove(docKey, doc);
  }

  /** Re-indexes document `docKey` from `before` to `after` (after {@link assertUnique} of `after`). */
  replace(docKey: string, before: Document, after: Document): void {
    for (const index of this.#unique) {
      index.remove(docKey, before);
      index.add(docKey, after);
    }
    for (const index of this.#equality.values()) index.replace(docKey, before, after);
  }

  /**
   * The keys of the documents that can match a filter pinning fields to values (see
   * `indexablePins`): the smallest lookup of a unique index whose fields are all pinned or of an
   * equality index, or undefined when no pinned field is indexed (the caller scans).
   */
  candidates(pins: ReadonlyMap<string, readonly unknown[]>): ReadonlySet<string> | undefined {
    let best: ReadonlySet<string> | undefined;
    if (pins.size === 0) return undefined;
    for (const index of this.#unique) {
      const docKeys = index.lookup(pins);
      if (docKeys && (!best || docKeys.size < best.size)) best = docKeys;
    }
    for (const [path, values] of pins) {
      const docKeys = this.#equality.get(path)?.lookup(values);
      if (docKeys && (!best || docKeys.size < best.size)) best = docKeys;
    }
    return best;
  }
}

/** The top-level fields the `definitions` read (see `CollectionIndexes.reads`); null when not known. */
function indexedFieldsOf(definitions: Iterable<IndexDefinition>): Set<string> | null {
  const fields = new Set<string>();
  for (const definition of definitions) {
    for (const path of Object.keys(definition.keys)) fields.add(path.split('.', 1)[0]!);
    const partial = definition.partialFilterExpression;
    if (partial) {
      for (const path of Object.keys(partial)) {
        if (path.startsWith('$')) return null; // $and/$or/...: named fields are nested
        fields.add(path.split('.', 1)[0]!);
      }
    }
  }
  return fields;
}
