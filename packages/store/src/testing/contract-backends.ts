/**
 * The backends the contract suite (contract.test.ts) runs against: the embedded backend in memory
 * and under a temporary data directory, always; MongoDB when `MONGODB_URI` is set (a fresh
 * database per run, dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import type { DocumentStore } from '../document-collection.ts';
import { openEmbeddedStore } from '../embedded/embedded-store.ts';
import { openMongoStore } from '../mongo/mongo-store.ts';

/** An opened backend and how to dispose of it (close, and delete its data). */
export interface OpenedBackend {
  readonly store: DocumentStore;
  dispose(): Promise<void>;
}

/** A backend of the contract suite. */
export interface ContractBackend {
  readonly name: string;
  open(): Promise<OpenedBackend>;
}

/** The backends to run the contract suite against (see the module comment). */
export function contractBackends(env: NodeJS.ProcessEnv = process.env): ContractBackend[] {
  const backends: ContractBackend[] = [
    {
      name: 'embedded (in memory)',
      open: async () => {
        const store = await openEmbeddedStore({ dataDir: null });
        return { store, dispose: () => store.close() };
      },
    },
    {
      name: 'embedded (data directory)',
      open: async () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-store-contract-'));
        const store = await openEmbeddedStore({ dataDir, compactionMinEntries: 100 });
        return {
          store,
          dispose: async () => {
            await store.close();
            rmSync(dataDir, { recursive: true, force: true });
          },
        };
      },
    },
  ];
  const uri = env.MONGODB_URI;
  if (uri) backends.push({ name: 'mongodb', open: () => openMongoBackend(uri) });
  return backends;
}

async function openMongoBackend(uri: string): Promise<OpenedBackend> {
  const database = `switchyard_contract_${process.pid}_${Date.now()}`;
  const store = await openMongoStore(uri, database);
  return {
    store,
    dispose: async () => {
      await store.close();
      const client = await MongoClient.connect(uri);
      try {
        await client.db(database).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}
