import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../document-collection.ts';
import { openEmbeddedStore } from '../embedded/embedded-store.ts';
import { newId } from './documents.ts';
import { IdempotencyKeys } from './idempotency-keys.ts';
import { ensureIndexes } from './indexes.ts';

let store: DocumentStore;
let keys: IdempotencyKeys;
beforeEach(async () => {
  store = await openEmbeddedStore({ dataDir: null });
  keys = new IdempotencyKeys(store);
  await ensureIndexes(store);
});
afterEach(async () => {
  await store.close();
});

const HOUR = 3_600_000;
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);

describe('IdempotencyKeys', () => {
  it('lets the first claim win and shows later ones what it recorded', async () => {
    const [workflow, first, second] = [newId(), newId(), newId()];
    expect(await keys.claim(workflow, 'k', { runId: first, bodyHash: 'h1', now: at(0), ttlMs: HOUR })).toEqual({ won: true });
    expect(await keys.claim(workflow, 'k', { runId: second, bodyHash: 'h2', now: at(1000), ttlMs: HOUR })).toEqual({
      won: false,
      existing: { runId: first, bodyHash: 'h1', createdAt: at(0), expiresAt: at(HOUR) },
    });
    expect(await keys.claim(newId(), 'k', { runId: second, bodyHash: 'h2', now: at(1000), ttlMs: HOUR })).toEqual({ won: true });
  });

  it('hands over an expired key, and a key whose run was never created when asked to', async () => {
    const workflow = newId();
    const first = newId();
    await keys.claim(workflow, 'k', { runId: first, bodyHash: 'h', now: at(0), ttlMs: HOUR });
    const late = newId();
    expect(await keys.claim(workflow, 'k', { runId: late, bodyHash: 'h', now: at(HOUR), ttlMs: HOUR })).toEqual({ won: true });
    const stalled = newId();
    expect((await keys.claim(workflow, 'k', { runId: stalled, bodyHash: 'h', now: at(HOUR + 1), ttlMs: HOUR, takeOverRunId: first })).won).toBe(false);
    expect(await keys.claim(workflow, 'k', { runId: stalled, bodyHash: 'h', now: at(HOUR + 1), ttlMs: HOUR, takeOverRunId: late })).toEqual({ won: true });
  });

  it('releases a key only for the run it names, and purges expired keys', async () => {
    const workflow = newId();
    const runId = newId();
    await keys.claim(workflow, 'k', { runId, bodyHash: 'h', now: at(0), ttlMs: HOUR });
    await keys.release(workflow, 'k', newId());
    expect((await keys.claim(workflow, 'k', { runId: newId(), bodyHash: 'h', now: at(1), ttlMs: HOUR })).won).toBe(false);
    await keys.release(workflow, 'k', runId);
    expect((await keys.claim(workflow, 'k', { runId: newId(), bodyHash: 'h', now: at(2), ttlMs: HOUR })).won).toBe(true);
    await keys.claim(workflow, 'other', { runId: newId(), bodyHash: 'h', now: at(0), ttlMs: 10 });
    expect(await keys.purgeExpired(at(HOUR))).toBe(1);
  });
});
