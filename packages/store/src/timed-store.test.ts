/** The timing decorator of the store port: every call is reported with its collection, operation, duration and outcome. */
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from './embedded/embedded-store.ts';
import { timedStore, type StoreTiming } from './timed-store.ts';

describe('timedStore', () => {
  it('reports each call and passes results and errors through unchanged', async () => {
    const inner = await openEmbeddedStore({ dataDir: null });
    const timings: StoreTiming[] = [];
    let now = 0;
    const store = timedStore(inner, (timing) => timings.push(timing), () => (now += 5));
    const items = store.collection<{ _id: number; n?: number }>('items');
    expect(store.collection<{ _id: number; n?: number }>('items')).toBe(items);
    await items.insertOne({ _id: 1, n: 1 });
    await expect(items.insertOne({ _id: 1, n: 2 })).rejects.toMatchObject({ code: 11000 });
    expect(await items.findOne({ _id: 1 })).toEqual({ _id: 1, n: 1 });
    expect(await items.countDocuments({})).toBe(1);
    expect(timings).toEqual([
      { collection: 'items', operation: 'insertOne', seconds: 0.005, failed: false },
      { collection: 'items', operation: 'insertOne', seconds: 0.005, failed: true },
      { collection: 'items', operation: 'findOne', seconds: 0.005, failed: false },
      { collection: 'items', operation: 'countDocuments', seconds: 0.005, failed: false },
    ]);
    expect(store.backend).toBe('embedded');
    await store.close();
  });

  it('never fails a call because the observer throws', async () => {
    const store = timedStore(await openEmbeddedStore({ dataDir: null }), () => {
      throw new Error('observer bug');
    });
    await store.collection<{ _id: number; n?: number }>('items').insertOne({ _id: 1 });
    expect(await store.collection<{ _id: number; n?: number }>('items').countDocuments({ _id: 1 })).toBe(1);
    await store.close();
  });
});
