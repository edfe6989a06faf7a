import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuplicateEntryError } from '@switchyard/domain';
import type { DocumentStore } from '../document-collection.ts';
import { openEmbeddedStore } from '../embedded/embedded-store.ts';
import { newId } from './documents.ts';
import { openRepositories, type NewSchedule, type Repositories } from './index.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:01:00Z');
const T2 = new Date('2026-01-01T00:02:00Z');
const SPEC = { cron: null, intervalSeconds: 60, offsetSeconds: 0, timezone: 'UTC', startAt: null, endAt: null, jitterSeconds: 0 };

function schedule(workflowId: string, overrides: Partial<NewSchedule> = {}): NewSchedule {
  return { workflowDefinitionId: workflowId, name: 'every minute', spec: SPEC, input: { 'a.b': 1, $x: 2 }, overlapPolicy: 'skip', catchupWindowSeconds: 60, paused: false, note: null, remainingRuns: null, next: { fireAt: T0, dueAt: T0 }, ...overrides };
}

describe('Schedules repository (embedded store)', () => {
  let store: DocumentStore;
  let repos: Repositories;
  const workflowId = newId();
  beforeEach(async () => {
    store = await openEmbeddedStore({ dataDir: null });
    repos = await openRepositories(store);
  });
  afterEach(async () => {
    await store.close();
  });

  it('stores and reads back a schedule (input keys with . and $ intact), names unique per workflow', async () => {
    const created = await repos.schedules.create(schedule(workflowId), T0);
    expect(await repos.schedules.get(created.id)).toEqual({ ...created, id: created.id });
    expect(created).toMatchObject({ input: { 'a.b': 1, $x: 2 }, nextFireAt: T0, dueAt: T0, version: 1, recentRuns: [], spec: SPEC });
    await expect(repos.schedules.create(schedule(workflowId), T0)).rejects.toThrow(DuplicateEntryError);
    await repos.schedules.create(schedule(newId()), T0); // same name, other workflow
    expect((await repos.schedules.list(workflowId, 1, 10)).total).toBe(1);
    expect((await repos.schedules.listAll({}, 1, 10)).total).toBe(2);
    expect((await repos.schedules.listAll({ workflowIds: [workflowId] }, 1, 10)).items.map((s) => s.id)).toEqual([created.id]);
  });

  it('buffers ticks up to a bound, lists unpaused schedules with a buffer, and pops the head once (compare-and-set)', async () => {
    const { id } = await repos.schedules.create(schedule(workflowId, { createdBy: 'alice' }), T0);
    expect(await repos.schedules.bufferTick(id, T0, 2)).toBe(true);
    expect(await repos.schedules.bufferTick(id, T1, 2)).toBe(true);
    expect(await repos.schedules.bufferTick(id, T2, 2)).toBe(false);
    expect(await repos.schedules.get(id)).toMatchObject({ bufferedTicks: [T0, T1], createdBy: 'alice', updatedBy: 'alice' });
    expect((await repos.schedules.listBuffered(T2, 10)).map((s) => s.id)).toEqual([id]);
    expect(await repos.schedules.bufferTick(id, T1, 3)).toBe(false); // the same tick never twice
    const other = await repos.schedules.create(schedule(workflowId, { name: 'other' }), T0);
    await repos.schedules.bufferTick(other.id, T0, 1);
    // Pages: the second page holds the schedule the first did not.
    const [first] = await repos.schedules.listBuffered(T2, 1, 0);
    const [second] = await repos.schedules.listBuffered(T2, 1, 1);
    expect([first!.id, second!.id].sort()).toEqual([id, other.id].sort());
    await repos.schedules.delete(other.id);
    expect(await Promise.all([repos.schedules.popBuffered(id, T0), repos.schedules.popBuffered(id, T0)])).toEqual([true, false]);
    expect((await repos.schedules.get(id))!.bufferedTicks).toEqual([T1]);
    await repos.schedules.update(id, { paused: true }, T1);
    expect(await repos.schedules.listBuffered(T2, 10)).toEqual([]);
  });

  it('update bumps the version and honours an expected version', async () => {
    const { id } = await repos.schedules.create(schedule(workflowId), T0);
    expect(await repos.schedules.update(id, { paused: true, note: 'maintenance' }, T1, 1)).toMatchObject({ paused: true, note: 'maintenance', version: 2, updatedAt: T1 });
    expect(await repos.schedules.update(id, { paused: false }, T1, 1)).toBeNull();
    expect(await repos.schedules.update(id, { paused: false, next: null }, T2)).toMatchObject({ paused: false, nextFireAt: null, dueAt: null, version: 3 });
  });

  it('claimTick: of two claims of the same tick exactly one wins; a paused schedule cannot be claimed', async () => {
    const { id } = await repos.schedules.create(schedule(workflowId), T0);
    const claims = await Promise.all([
      repos.schedules.claimTick(id, T0, { fireAt: T1, dueAt: T1 }, T0),
      repos.schedules.claimTick(id, T0, { fireAt: T1, dueAt: T1 }, T0),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(claims.find(Boolean)).toMatchObject({ nextFireAt: T1, dueAt: T1, version: 1 });
    await repos.schedules.update(id, { paused: true }, T1);
    expect(await repos.schedules.claimTick(id, T1, { fireAt: T2, dueAt: T2 }, T1)).toBeNull();
  });

  it('claimTick with consumeFrom takes one remaining run only if the count is unchanged; refundRun gives it back', async () => {
    const { id } = await repos.schedules.create(schedule(workflowId, { remainingRuns: 1 }), T0);
    expect(await repos.schedules.claimTick(id, T0, { fireAt: T1, dueAt: T1 }, T0, 2)).toBeNull();
    expect(await repos.schedules.claimTick(id, T0, { fireAt: T1, dueAt: T1 }, T0, 1)).toMatchObject({ remainingRuns: 0 });
    expect(await repos.schedules.listDue(T2, 10)).toEqual([]); // no runs left: never due
    await repos.schedules.refundRun(id);
    expect((await repos.schedules.listDue(T2, 10)).map((s) => s.remainingRuns)).toEqual([1]);
  });

  it('settleTick: one settle of an in-flight tick records it; a refund after the client made the schedule unlimited still settles', async () => {
    const { id } = await repos.schedules.create(schedule(workflowId, { remainingRuns: 3 }), T0);
    await repos.schedules.claimTick(id, T0, { fireAt: T1, dueAt: T1 }, T0, 3, true);
    expect((await repos.schedules.listStaleFiring(T1, 10)).map((stale) => stale.ticks)).toEqual([[{ scheduledAt: T0, tookRun: true }]]);
    await repos.schedules.update(id, { remainingRuns: null }, T0);
    expect(await repos.schedules.settleTick(id, T0, { scheduledAt: T0, status: 'skipped', reason: 'disabled' }, true)).toBe(true);
    expect(await repos.schedules.settleTick(id, T0, { scheduledAt: T0, status: 'skipped', reason: 'disabled' }, true)).toBe(false);
    const after = (await repos.schedules.get(id))!;
    expect(after).toMatchObject({ remainingRuns: null, recentRuns: [{ scheduledAt: T0, status: 'skipped', reason: 'disabled' }] });
    expect(await repos.schedules.listStaleFiring(T2, 10)).toEqual([]);
  });

  it('listDue: unpaused schedules due by now, longest-due first, at most limit', async () => {
    const a = await repos.schedules.create(schedule(workflowId, { name: 'a', next: { fireAt: T1, dueAt: T1 } }), T0);
    const b = await repos.schedules.create(schedule(workflowId, { name: 'b', next: { fireAt: T0, dueAt: T0 } }), T0);
    await repos.schedules.create(schedule(workflowId, { name: 'paused', paused: true }), T0);
    await repos.schedules.create(schedule(workflowId, { name: 'later', next: { fireAt: T2, dueAt: T2 } }), T0);
    await repos.schedules.create(schedule(workflowId, { name: 'done', next: null }), T0);
    expect((await repos.schedules.listDue(T1, 10)).map((s) => s.id)).toEqual([b.id, a.id]);
    expect((await repos.schedules.listDue(T1, 1)).map((s) => s.id)).toEqual([b.id]);
  });

  it('recordRecent keeps the last 10 outcomes, oldest first', async () => {
    const { id } = await repos.schedules.create(schedule(workflowId), T0);
    const runId = newId();
    for (let i = 0; i < 14; i++) {
      const scheduledAt = new Date(T0.getTime() + i * 60_000);
      await repos.schedules.recordRecent(id, i % 2 ? { scheduledAt, status: 'skipped', reason: 'overlap' } : { scheduledAt, startedAt: scheduledAt, runId, status: 'pending' });
    }
    const { recentRuns } = (await repos.schedules.get(id))!;
    expect(recentRuns).toHaveLength(10);
    expect(recentRuns[0]).toEqual({ scheduledAt: new Date(T0.getTime() + 4 * 60_000), startedAt: new Date(T0.getTime() + 4 * 60_000), runId, status: 'pending' });
    expect(recentRuns[9]).toEqual({ scheduledAt: new Date(T0.getTime() + 13 * 60_000), status: 'skipped', reason: 'overlap' });
  });

  it('delete and deleteByWorkflow', async () => {
    const { id } = await repos.schedules.create(schedule(workflowId), T0);
    await repos.schedules.create(schedule(workflowId, { name: 'two' }), T0);
    expect(await repos.schedules.delete(id)).toBe(true);
    expect(await repos.schedules.delete(id)).toBe(false);
    expect(await repos.schedules.deleteByWorkflow(workflowId)).toBe(1);
  });
});
