/**
 * The readiness checks (services/readiness.ts) on a ManualClock: a store that does not answer
 * fails the store check after the 2 s bound (the probe still answers), a result is reused for 1 s,
 * and a loop counts as stale only past twice its interval.
 */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore, type DocumentStore } from '@switchyard/store';
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { Readiness, loopCheck } from '../src/services/readiness.ts';

/** `store` whose writes hang while `hung.value` is true. */
function hangingWrites(store: DocumentStore, hung: { value: boolean }): DocumentStore {
  return {
    ...store,
    backend: store.backend,
    collection: ((name: string) => {
      const collection = store.collection(name);
      // Only updateOne is called by the readiness check.
      return { collectionName: name, updateOne: (...args: Parameters<typeof collection.updateOne>) => (hung.value ? new Promise(() => {}) : collection.updateOne(...args)) };
    }) as unknown as DocumentStore['collection'],
    close: () => store.close(),
    compact: () => store.compact(),
  };
}

describe('Readiness', () => {
  it('fails the store check when the store does not answer within 2 s, reuses a result for 1 s, and passes again once it answers', async () => {
    const clock = new ManualClock();
    const hung = { value: false };
    const store = await openEmbeddedStore({ dataDir: null });
    const readiness = new Readiness({ store: hangingWrites(store, hung), clock, instance: 'test', loops: {} });
    expect((await readiness.check()).status).toBe('ready');
    expect(await store.collection('health').findOne({ _id: 'readiness' as never })).toMatchObject({ checked_by: 'test' });

    hung.value = true;
    // Within 1 s: the cached answer, no new check.
    await clock.advance(999);
    expect((await readiness.check()).status).toBe('ready');
    expect(readiness.storeChecks).toBe(1);
    await clock.advance(1);
    const pending = readiness.check();
    expect(readiness.check()).toBe(pending); // one check in flight, shared
    await clock.advance(2_000);
    const report = await pending;
    expect(report.status).toBe('unavailable');
    expect(report.checks.store).toEqual({ ok: false, error: 'the store did not answer within 2000 ms' });

    hung.value = false;
    await clock.advance(1_000);
    expect((await readiness.check()).checks.store.ok).toBe(true);
    expect(readiness.storeChecks).toBe(3);
    await store.close();
  });

  it('counts a loop stale only past twice its interval, from its start until its first pass, and never when it is not running', () => {
    const startedAt = new Date(Date.UTC(2026, 0, 1));
    const at = (ms: number) => new Date(startedAt.getTime() + ms);
    const loop = { running: true, intervalMs: 1_000, startedAt, lastRunAt: null };
    expect(loopCheck(loop, at(2_000)).ok).toBe(true);
    expect(loopCheck(loop, at(2_001))).toMatchObject({ ok: false, lastRunAt: null, error: 'has not finished a pass since it started 2001 ms ago, more than twice its 1000 ms interval' });
    expect(loopCheck({ ...loop, lastRunAt: at(1_500) }, at(3_500)).ok).toBe(true);
    expect(loopCheck({ ...loop, lastRunAt: at(1_500) }, at(3_501)).ok).toBe(false);
    expect(loopCheck({ ...loop, running: false }, at(60_000))).toEqual({ ok: true, running: false, intervalMs: 1_000, lastRunAt: null });
  });
});
