/**
 * The port over the official driver's Collection: each method calls the driver and adapts the
 * result's shape, nothing more.
 */
import type { Collection, OptionalUnlessRequiredId } from 'mongodb';
import type {
  DeleteResult,
  Document,
  DocumentCollection,
  Filter,
  FindOneAndUpdateOptions,
  FindOptions,
  IndexOptions,
  UpdateFilter,
  UpdateOptions,
  UpdateResult,
} from '../document-collection.ts';
import { requireId } from '../require-id.ts';

/** A `DocumentCollection` over one driver Collection (see the module comment). */
export class MongoCollection<T extends Document> implements DocumentCollection<T> {
  readonly #collection: Collection<T>;

  /** Wraps the driver's `collection`. */
  constructor(collection: Collection<T>) {
    this.#collection = collection;
  }

  get collectionName(): string {
    return this.#collection.collectionName;
  }

  async insertOne(doc: T): Promise<void> {
    requireId(doc);
    await this.#collection.insertOne(doc as OptionalUnlessRequiredId<T>);
  }

  async findOne(filter: Filter<T>, options: Pick<FindOptions, 'projection' | 'sort'> = {}): Promise<T | null> {
    return (await this.#collection.findOne(filter, definedOnly(options))) as T | null;
  }

  async find(filter: Filter<T>, options: FindOptions = {}): Promise<T[]> {
    return (await this.#collection.find(filter, definedOnly(options)).toArray()) as T[];
  }

  async countDocuments(filter: Filter<T>): Promise<number> {
    return this.#collection.countDocuments(filter);
  }

  async findOneAndUpdate(filter: Filter<T>, update: UpdateFilter<T>, options: FindOneAndUpdateOptions = {}): Promise<T | null> {
    const driverOptions = definedOnly({ ...options, returnDocument: options.returnDocument ?? 'after', includeResultMetadata: false as const });
    return (await this.#collection.findOneAndUpdate(filter, update, driverOptions)) as T | null;
  }

  async updateOne(filter: Filter<T>, update: UpdateFilter<T>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return updateResult(await this.#collection.updateOne(filter, update, definedOnly(options)));
  }

  async updateMany(filter: Filter<T>, update: UpdateFilter<T>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return updateResult(await this.#collection.updateMany(filter, update, definedOnly(options)));
  }

  async deleteOne(filter: Filter<T>): Promise<DeleteResult> {
    const { deletedCount } = await this.#collection.deleteOne(filter);
    return { deletedCount };
  }

  async deleteMany(filter: Filter<T>): Promise<DeleteResult> {
    const { deletedCount } = await this.#collection.deleteMany(filter);
    return { deletedCount };
  }

  async createIndex(keys: Record<string, 1 | -1>, options: IndexOptions = {}): Promise<string> {
    return this.#collection.createIndex(keys, definedOnly(options));
  }

  async dropIndex(name: string): Promise<boolean> {
    try {
      await this.#collection.dropIndex(name);
      return true;
    } catch (error) {
      // 27 IndexNotFound; 26 NamespaceNotFound (no collection yet, so no index either).
      const code = (error as { code?: unknown }).code;
      if (code === 27 || code === 26) return false;
      throw error;
    }
  }
}

function updateResult({ matchedCount, modifiedCount, upsertedId }: { matchedCount: number; modifiedCount: number; upsertedId: unknown }): UpdateResult {
  return { matchedCount, modifiedCount, upsertedId: upsertedId ?? null };
}

/** `options` without its undefined members (the driver would send them to the server as nulls). */
function definedOnly<O extends object>(options: O): O {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as O;
}
