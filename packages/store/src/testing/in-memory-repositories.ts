/**
 * For repository tests: a fresh embedded store in memory and its repositories for every test of
 * the file (created in `beforeEach`, closed in `afterEach`).
 */
import { afterEach, beforeEach } from 'vitest';
import type { DocumentStore } from '../document-collection.ts';
import { openEmbeddedStore } from '../embedded/embedded-store.ts';
import { openRepositories, type Repositories } from '../repositories/index.ts';

/** The current test's store and repositories (valid inside tests, after `beforeEach`). */
export interface InMemoryRepositories {
  readonly store: DocumentStore;
  readonly repos: Repositories;
}

/** Registers the hooks; read `.store` / `.repos` of the result inside tests. */
export function useInMemoryRepositories(): InMemoryRepositories {
  const current: { store?: DocumentStore; repos?: Repositories } = {};
  beforeEach(async () => {
    current.store = await openEmbeddedStore({ dataDir: null });
    current.repos = await openRepositories(current.store);
  });
  afterEach(async () => {
    await current.store?.close();
  });
  return {
    get store() {
      return current.store!;
    },
    get repos() {
      return current.repos!;
    },
  };
}
