import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId, openEmbeddedStore, openRepositories, type DocumentStore, type Repositories } from '@switchyard/store';
import { DEFAULT_LEGACY_ACCESS } from '@switchyard/domain';
import { RetentionSweeper, deleteEndedRun } from './retention.ts';
import { ManualClock } from './testing/manual-clock.ts';

const DAY = 86_400_000;
const logger = pino({ level: 'silent' });
let dir: string;
let store: DocumentStore;
let repos: Repositories;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-retention-'));
  store = await openEmbeddedStore({ dataDir: dir });
  repos = await openRepositories(store);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function workflow(name: string): Promise<string> {
  const nodes = [{ id: 'a', name: 'A', nodeType: 'step' as const, executorKey: 'echo', children: [], trueSteps: [], falseSteps: [], choices: [] }];
  return (await repos.definitions.create({ name, description: null, canvas: { viewport: { x: 0, y: 0, zoom: 1 } }, nodes: nodes as never, access: DEFAULT_LEGACY_ACCESS }, new Date())).id;
}

/** A run of `workflowId` with one node run and two events, ended (`completed`) at `finishedAt` unless `ended` is false. */
async function run(workflowId: string, finishedAt: Date, ended = true): Promise<string> {
  const definition = (await repos.definitions.get(workflowId))!;
  const created = await repos.runs.create(
    {
      workflowDefinitionId: workflowId,
      workflowVersion: 1,
      triggerSource: 'test',
      initialInput: { payload: 'x'.repeat(2_000) },
      definitionSnapshot: { name: definition.name, description: null, canvas: definition.canvas, nodes: definition.nodes },
      parentRunId: null,
      resolvedDependencies: [],
      triggeringUserId: null,
      triggeringUsername: null,
      triggeringScopes: [],
    },
    new Date(finishedAt.getTime() - 1_000),
  );
  await repos.runs.claim(created.id, 'owner', 30_000, finishedAt);
  const nodeRun = await repos.nodeRuns.startAttempt(
    { runId: created.id, workflowDefinitionId: workflowId, nodeId: 'a', nodeName: 'A', nodeType: 'step', iterationPath: '', inputSnapshot: { big: 'y'.repeat(2_000) } },
    finishedAt,
  );
  await repos.events.append({ runId: created.id, workflowDefinitionId: workflowId, type: 'run.started', payload: { owner: 'owner' } }, finishedAt);
  if (ended) {
    await repos.nodeRuns.end(nodeRun.id, { status: 'completed', outputSnapshot: { ok: true } }, finishedAt, null);
    await repos.events.append({ runId: created.id, workflowDefinitionId: workflowId, type: 'run.completed', payload: {} }, finishedAt);
    await repos.runs.finish(created.id, 'owner', { status: 'completed', finalOutput: { ok: true } }, finishedAt);
  }
  return created.id;
}

/** What is left of a run in the three collections. */
async function leftOf(runId: string): Promise<[boolean, number, number]> {
  return [(await repos.runs.get(runId)) !== null, (await repos.nodeRuns.listByRun(runId)).length, (await repos.events.listByRun(runId)).length];
}

const clockAt = (ms: number) => new ManualClock(ms);

describe('deleteEndedRun', () => {
  it('deletes an ended run with its node runs and events, and refuses one that has not ended', async () => {
    const wf = await workflow('one');
    const done = await run(wf, new Date());
    const active = await run(wf, new Date(), false);
    expect(await leftOf(done)).toEqual([true, 1, 2]);
    expect(await deleteEndedRun(repos, wf, active)).toBe('not_ended');
    expect(await deleteEndedRun(repos, await workflow('other'), done)).toBe('not_found');
    expect(await deleteEndedRun(repos, wf, done)).toBe('deleted');
    expect(await leftOf(done)).toEqual([false, 0, 0]);
    expect(await leftOf(active)).toEqual([true, 1, 1]);
  });
});

describe('RetentionSweeper', () => {
  it('deletes runs that ended before the retention period, never unfinished ones, and compacts the store', async () => {
    const now = Date.now();
    const wf = await workflow('aged');
    const old = await Promise.all([run(wf, new Date(now - 40 * DAY)), run(wf, new Date(now - 31 * DAY))]);
    const recent = await run(wf, new Date(now - 5 * DAY));
    const unfinished = await run(wf, new Date(now - 90 * DAY), false);
    const journal = join(dir, 'journal.jsonl');
    const before = (await stat(journal)).size;

    const sweeper = new RetentionSweeper({ repos, store, logger, clock: clockAt(now), retentionDays: 30, keepPerWorkflow: null });
    expect(await sweeper.sweep()).toBe(2);
    for (const id of old) expect(await leftOf(id)).toEqual([false, 0, 0]);
    expect((await leftOf(recent))[0]).toBe(true);
    expect((await leftOf(unfinished))[0]).toBe(true);
    expect((await stat(journal)).size).toBeLessThan(before / 10); // compacted into the snapshot
    expect(await sweeper.sweep()).toBe(0);

    await store.close();
    store = await openEmbeddedStore({ dataDir: dir });
    repos = await openRepositories(store);
    expect(await repos.runs.get(old[0]!)).toBeNull();
    expect(await repos.runs.get(recent)).not.toBeNull();
  });

  it('keeps the newest ended runs of each workflow', async () => {
    const now = Date.now();
    const [a, b] = [await workflow('keep a'), await workflow('keep b')];
    const runsA: string[] = [];
    for (let i = 5; i >= 1; i--) runsA.push(await run(a, new Date(now - i * 60_000)));
    const runsB = [await run(b, new Date(now - 60_000))];
    const told: number[] = [];
    const sweeper = new RetentionSweeper({ repos, store, logger, clock: clockAt(now), retentionDays: null, keepPerWorkflow: 2, onDeleted: (count) => told.push(count) });
    expect(await sweeper.sweep()).toBe(3);
    expect(await sweeper.sweep()).toBe(0);
    // The metrics hear of each pass that deleted runs (sweeper actions `retention_delete`), not of empty passes.
    expect(told).toEqual([3]);
    const kept = (await repos.runs.list({ workflowId: a }, 1, 100)).items.map((r) => r.id);
    expect(kept.sort()).toEqual(runsA.slice(3).sort());
    expect((await repos.runs.list({ workflowId: b }, 1, 100)).total).toBe(runsB.length);
  });

  it('deletes no run without a policy, and purges expired idempotency keys either way', async () => {
    const now = Date.now();
    const wf = await workflow('no policy');
    const old = await run(wf, new Date(now - 400 * DAY));
    const runId = newId();
    expect(await repos.idempotencyKeys.claim(wf, 'k', { runId, bodyHash: 'h', now: new Date(now - 2 * DAY), ttlMs: DAY })).toEqual({ won: true });
    const sweeper = new RetentionSweeper({ repos, store, logger, clock: clockAt(now), retentionDays: null, keepPerWorkflow: null });
    expect(sweeper.enabled).toBe(false);
    expect(await sweeper.sweep()).toBe(0);
    expect(await repos.runs.get(old)).not.toBeNull();
    expect(await store.collection('idempotency_keys').countDocuments({})).toBe(0);
  });

  it('ends a pass after the deletion it is at when stopped', async () => {
    const now = Date.now();
    const wf = await workflow('stopping');
    for (let i = 0; i < 5; i++) await run(wf, new Date(now - 40 * DAY));
    const sweeper = new RetentionSweeper({ repos, store, logger, clock: clockAt(now), retentionDays: 30, keepPerWorkflow: null });
    const original = repos.nodeRuns.deleteByRun.bind(repos.nodeRuns);
    repos.nodeRuns.deleteByRun = async (runId) => {
      void sweeper.stop();
      return original(runId);
    };
    expect(await sweeper.sweep()).toBe(1);
    expect((await repos.runs.list({ workflowId: wf }, 1, 100)).total).toBe(4);

    // Started again, it deletes runs again.
    repos.nodeRuns.deleteByRun = original;
    sweeper.start();
    await sweeper.sweep();
    await sweeper.stop();
    expect((await repos.runs.list({ workflowId: wf }, 1, 100)).total).toBe(0);
  });
});

describe('a run deleted the moment it ends', () => {
  it('leaves no event behind, even when its owner writes the final event after the deletion', async () => {
    const { openHarness } = await import('./testing/harness.ts');
    const h = await openHarness();
    try {
      const wf = await h.createWorkflow([{ name: 'A', nodeType: 'step', executorKey: 'echo' }]);
      const created = await h.createRun(wf.id);
      const append = h.repos.events.append.bind(h.repos.events);
      h.repos.events.append = async (event, now, expected) => {
        // A DELETE lands between the owner's status change and its final event.
        if (event.type === 'run.completed') expect(await deleteEndedRun(h.repos, wf.id, created.id)).toBe('deleted');
        return append(event, now, expected);
      };
      h.engine.start(created.id);
      await h.engine.idle();
      expect(await h.repos.runs.get(created.id)).toBeNull();
      expect(await h.repos.events.listByRun(created.id)).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
