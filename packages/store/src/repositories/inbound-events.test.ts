/**
 * The `events` repository (issue #21 item 2): a client id dedupes for its window only (the old
 * event is kept, listed, with its id) and among one sender's events only, concurrent first posts
 * of one id store one event, a stalled starter is taken over by exactly one taker of the same
 * sender, and retention purges by `expires_at`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../document-collection.ts';
import { openEmbeddedStore } from '../embedded/embedded-store.ts';
import { newId } from './documents.ts';
import { InboundEvents, type NewInboundEvent } from './inbound-events.ts';
import { ensureIndexes } from './indexes.ts';

let store: DocumentStore;
let events: InboundEvents;
beforeEach(async () => {
  store = await openEmbeddedStore({ dataDir: null });
  events = new InboundEvents(store);
  await ensureIndexes(store);
});
afterEach(async () => {
  await store.close();
});

const HOUR = 3_600_000;
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const event = (overrides: Partial<NewInboundEvent> = {}): NewInboundEvent => ({
  name: 'order.created',
  data: { 'a.b': 1, $c: { d: 2 } },
  sourceId: 'delivery-1',
  senderId: 'user:billing',
  bodyHash: 'hash-1',
  now: at(0),
  retentionMs: 7 * 24 * HOUR,
  dedupeMs: 24 * HOUR,
  ...overrides,
});

describe('InboundEvents', () => {
  it('answers a repeated id from the first event within its window; after it, the id starts a new event and the old one stays', async () => {
    const first = await events.receive(event());
    if (!first.won) throw new Error('first receive lost');
    expect(first.event).toMatchObject({ name: 'order.created', sourceId: 'delivery-1', state: 'starting', runs: [], problems: [] });
    const repeat = await events.receive(event({ now: at(23 * HOUR), data: { other: true } }));
    expect(repeat).toMatchObject({ won: false, existing: { id: first.event.id, data: { 'a.b': 1, $c: { d: 2 } } } });

    const later = await events.receive(event({ now: at(24 * HOUR + 1) }));
    expect(later.won).toBe(true);
    if (later.won) expect(later.event.id).not.toBe(first.event.id);
    const { items, total } = await events.list({ name: 'order.created' }, 1, 10);
    expect(total).toBe(2);
    expect(items.map((item) => item.sourceId)).toEqual(['delivery-1', 'delivery-1']);
    // Events without an id never collide.
    for (let i = 0; i < 3; i++) expect((await events.receive(event({ sourceId: null }))).won).toBe(true);
  });

  it("dedupes an id among one sender's events only; the existing event carries its sender and body hash", async () => {
    const billing = await events.receive(event());
    const shop = await events.receive(event({ senderId: 'user:shop', bodyHash: 'hash-2', name: 'user.created' }));
    expect(billing.won && shop.won).toBe(true);
    if (!billing.won || !shop.won) return;
    expect(shop.event.id).not.toBe(billing.event.id);
    expect(await events.receive(event({ senderId: 'user:shop', bodyHash: 'hash-3' }))).toMatchObject({ won: false, existing: { id: shop.event.id, senderId: 'user:shop', bodyHash: 'hash-2', name: 'user.created' } });
    expect(await events.receive(event())).toMatchObject({ won: false, existing: { id: billing.event.id, senderId: 'user:billing', bodyHash: 'hash-1' } });
    // A sender and id do not run together into another pair's key (user 'billing' with id 'x:1', user 'billing:x' with id '1').
    expect((await events.receive(event({ sourceId: 'x:1' }))).won).toBe(true);
    expect((await events.receive(event({ senderId: 'user:billing:x', sourceId: '1' }))).won).toBe(true);
  });

  it('of concurrent first posts of one id, exactly one stores the event', async () => {
    const receipts = await Promise.all(Array.from({ length: 50 }, () => events.receive(event())));
    expect(receipts.filter((receipt) => receipt.won)).toHaveLength(1);
    expect((await events.list({}, 1, 100)).total).toBe(1);
  });

  it('a stalled starter is taken over once; complete records runs and problems, and lists filter by their workflows', async () => {
    const receipt = await events.receive(event());
    if (!receipt.won) throw new Error('lost');
    const { id, claimedAt } = receipt.event;
    // Only its sender takes it over.
    expect(await events.takeOver(id, 'user:shop', claimedAt, at(HOUR))).toBe(false);
    const takers = await Promise.all(Array.from({ length: 10 }, () => events.takeOver(id, 'user:billing', claimedAt, at(HOUR))));
    expect(takers.filter(Boolean)).toHaveLength(1);
    const [shown, other, runId] = [newId(), newId(), newId()];
    await events.complete(id, [{ workflowId: shown, runId }], [{ workflowId: other, trigger: 2, error: 'filterCel: ...' }]);
    expect(await events.takeOver(id, 'user:billing', at(HOUR), at(2 * HOUR))).toBe(false);
    expect(await events.get(id)).toMatchObject({ state: 'done', runs: [{ workflowId: shown, runId }], problems: [{ workflowId: other, trigger: 2, error: 'filterCel: ...' }] });
    expect((await events.list({ workflowIds: [shown] }, 1, 10)).total).toBe(1);
    expect((await events.list({ workflowIds: [other] }, 1, 10)).total).toBe(1);
    expect((await events.list({ workflowIds: [newId()] }, 1, 10)).total).toBe(0);
  });

  it('purges events whose retention ended', async () => {
    await events.receive(event({ sourceId: null, retentionMs: HOUR }));
    await events.receive(event({ sourceId: null, retentionMs: 3 * HOUR }));
    expect(await events.purgeExpired(at(2 * HOUR))).toBe(1);
    expect((await events.list({}, 1, 10)).total).toBe(1);
  });
});
