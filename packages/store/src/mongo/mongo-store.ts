/**
 * The MongoDB backend: the port over the official driver (DESIGN.md "Persistence").
 */
import { MongoClient, type Db } from 'mongodb';
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
import { databaseNameFromUri } from './database-name.ts';
import { MongoCollection } from './mongo-collection.ts';
import { decorateCollection } from '../collection-decorator.ts';
import { translateTransientErrors } from './transient-errors.ts';

/**
 * Connects to MongoDB at `uri` and returns the store of database `dbName` (default: the URI's
 * path, else `switchyard`). Rejects when `uri` is malformed or no server answers within the
 * driver's server-selection timeout (30 s by default, `serverSelectionTimeoutMS` in the URI).
 */
export async function openMongoStore(uri: string, dbName?: string): Promise<DocumentStore> {
  const client = new MongoClient(uri);
  try {
    await client.connect();
  } catch (error) {
    await client.close();
    throw error;
  }
  return new MongoStore(client, client.db(dbName ?? databaseNameFromUri(uri)));
}

class MongoStore implements DocumentStore {
  readonly backend = 'mongodb';
  readonly #client: MongoClient;
  readonly #db: Db;

  constructor(client: MongoClient, db: Db) {
    this.#client = client;
    this.#db = db;
  }

  collection<T extends Document = Document>(name: string): DocumentCollection<T> {
    // An outage or failover error of the driver becomes StoreUnavailableError (transient-errors.ts).
    return decorateCollection(new MongoCollection<T>(this.#db.collection<T>(name)), translateTransientErrors);
  }

  /** MongoDB reclaims the space of deleted documents by itself. */
  async compact(): Promise<void> {}

  async close(): Promise<void> {
    await this.#client.close();
  }
}
