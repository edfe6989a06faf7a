/**
 * A DocumentStore wrapper that records what is written through it, for tests that must prove a
 * request wrote nothing (test/fuzz.e2e.test.ts): the number of documents in each collection, kept
 * from the results of the writes (no scan per check), and the number of writes that changed a
 * document in place. The repositories built on the wrapped store write through it; everything
 * else is forwarded unchanged.
 */
import type { DocumentCollection, DocumentStore, FindOneAndUpdateOptions, UpdateResult, DeleteResult } from '@switchyard/store';

/** What the store holds and how often it changed, per collection. */
export interface WriteState {
  /** Documents per collection. */
  documents: Record<string, number>;
  /** Writes that changed existing documents (an update that modified something, a matched findOneAndUpdate), per collection. */
  updates: Record<string, number>;
}

export interface WriteLog {
  /** The store to build repositories on. */
  store: DocumentStore;
  /** A copy of the current state (compare two with toEqual). */
  state(): WriteState;
  /** Counts every collection of the underlying store and throws when the kept counts differ (a check of the bookkeeping). */
  verify(): Promise<void>;
}

/**
 * Wraps `store` (which must be empty, or hold only what `collections` count when wrapped) so that
 * every write through it is recorded.
 */
export async function recordWrites(store: DocumentStore): Promise<WriteLog> {
  const documents: Record<string, number> = {};
  const updates: Record<string, number> = {};
  const wrapped = new Map<string, DocumentCollection>();

  const add = (name: string, delta: number) => (documents[name] = (documents[name] ?? 0) + delta);
  const changed = (name: string) => (updates[name] = (updates[name] ?? 0) + 1);

  function wrap(name: string, inner: DocumentCollection): DocumentCollection {
    const recount = async () => (documents[name] = await inner.countDocuments({}));
    const writes: Partial<Record<keyof DocumentCollection, (...args: any[]) => Promise<unknown>>> = {
      async insertOne(doc) {
        await inner.insertOne(doc);
        add(name, 1);
      },
      async deleteOne(filter) {
        const result: DeleteResult = await inner.deleteOne(filter);
        add(name, -result.deletedCount);
        return result;
      },
      async deleteMany(filter) {
        const result: DeleteResult = await inner.deleteMany(filter);
        add(name, -result.deletedCount);
        return result;
      },
      async updateOne(filter, update, options) {
        const result: UpdateResult = await inner.updateOne(filter, update, options);
        if (result.upsertedId !== null && result.upsertedId !== undefined) add(name, 1);
        if (result.modifiedCount > 0) changed(name);
        return result;
      },
      async updateMany(filter, update, options) {
        const result: UpdateResult = await inner.updateMany(filter, update, options);
        if (result.upsertedId !== null && result.upsertedId !== undefined) add(name, 1);
        if (result.modifiedCount > 0) changed(name);
        return result;
      },
      async findOneAndUpdate(filter, update, options: FindOneAndUpdateOptions = {}) {
        const result = await inner.findOneAndUpdate(filter, update, options);
        if (options.upsert) await recount(); // inserted or updated: the result does not say
        if (result !== null) changed(name);
        return result;
      },
    };
    return new Proxy(inner, {
      get(target, property, receiver) {
        const write = writes[property as keyof DocumentCollection];
        if (write) return write;
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'collection') {
        return (name: string) => {
          let collection = wrapped.get(name);
          if (!collection) {
            collection = wrap(name, target.collection(name));
            wrapped.set(name, collection);
          }
          return collection;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

  return {
    store: proxy,
    state: () => ({ documents: { ...documents }, updates: { ...updates } }),
    async verify() {
      for (const [name, collection] of wrapped) {
        const actual = await collection.countDocuments({});
        if (actual !== (documents[name] ?? 0)) throw new Error(`write log: ${name} holds ${actual} documents, the log counted ${documents[name] ?? 0}`);
      }
    },
  };
}
