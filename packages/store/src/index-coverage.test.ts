/**
 * An index for every query (issue #20 item 6): every public method of every repository runs on
 * the embedded store with its query audit on, and the planner check (index-coverage.ts) must find
 * a declared index (repositories/indexes.ts) for each query it makes. A repository method the
 * table below does not exercise fails the test, as does an index the docs do not list.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LEGACY_ACCESS, UNDECIDED, type Decision, type RequirementRecord, type WorkflowNode } from '@switchyard/domain';
import type { DocumentStore, Document } from './document-collection.ts';
import { openEmbeddedStore } from './embedded/embedded-store.ts';
import type { AuditedQuery } from './embedded/embedded-collection.ts';
import { indexCoverage, type Coverage, type IndexShape, type QueryShape } from './index-coverage.ts';
import { newId } from './repositories/documents.ts';
import { DECLARED_INDEXES, RETIRED_INDEXES, openRepositories, type Repositories } from './repositories/index.ts';

describe('the planner check (MongoDB rules, index-coverage.ts)', () => {
  const indexes: IndexShape[] = [
    { name: 'a_b', keys: { a: 1, b: -1 } },
    { name: 'tag', keys: { tags: 1 } },
    { name: 'items', keys: { 'items.at': 1 } },
    { name: 'open', keys: { c: 1 }, partialFilterExpression: { open: true } },
  ];
  const coverage = (filter: Document, sort?: Document, limit?: number): Coverage => indexCoverage(indexes, { filter, sort, limit });

  it('serves by an equality, $in, range or $exists: false on the first key, and by _id', () => {
    expect(coverage({ a: 1, z: 2 })).toEqual({ served: true, index: 'a_b' });
    expect(coverage({ a: { $in: [1, 2] } })).toEqual({ served: true, index: 'a_b' });
    expect(coverage({ a: { $gt: 1 } })).toEqual({ served: true, index: 'a_b' });
    expect(coverage({ a: { $exists: false } })).toEqual({ served: true, index: 'a_b' });
    expect(coverage({ _id: 'x', z: 1 })).toEqual({ served: true, index: '_id_' });
    expect(coverage({ $and: [{ z: 1 }, { tags: 't' }] })).toEqual({ served: true, index: 'tag' });
    expect(coverage({ items: { $elemMatch: { at: { $lte: 5 }, done: null } } })).toEqual({ served: true, index: 'items' });
  });

  it('reports a scan: a filter on no index key, on a second key only, or with unselective operators', () => {
    expect(coverage({ z: 1 })).toEqual({ served: false, reason: 'scan' });
    expect(coverage({ b: 1 })).toEqual({ served: false, reason: 'scan' });
    expect(coverage({ a: { $ne: 1 } })).toEqual({ served: false, reason: 'scan' });
    expect(coverage({ a: { $nin: [1] } })).toEqual({ served: false, reason: 'scan' });
    expect(coverage({ a: { $regex: 'x', $options: 'i' } })).toEqual({ served: false, reason: 'scan' });
    expect(coverage({ a: { $regex: '^x' } })).toEqual({ served: true, index: 'a_b' });
  });

  it('an $or is served when every branch is, or when every branch constrains the same key', () => {
    expect(coverage({ $or: [{ a: 1 }, { tags: 't' }] })).toEqual({ served: true, index: null });
    expect(coverage({ $or: [{ a: 1 }, { z: 1 }] })).toEqual({ served: false, reason: 'scan' });
    expect(coverage({ $or: [{ a: null }, { a: { $lt: 3 } }], z: 1 })).toEqual({ served: true, index: 'a_b' });
  });

  it('a partial index serves only filters that repeat its condition', () => {
    expect(coverage({ c: 1 })).toEqual({ served: false, reason: 'scan' });
    expect(coverage({ c: 1, open: true })).toEqual({ served: true, index: 'open' });
  });

  it('a page (sort and limit) needs its order from an index: after pinned keys, in either direction', () => {
    expect(coverage({ a: 1 }, { b: -1 }, 10)).toEqual({ served: true, index: 'a_b' });
    expect(coverage({ a: { $in: [1, 2] } }, { b: 1 }, 10)).toEqual({ served: true, index: 'a_b' });
    expect(coverage({}, { a: -1, b: 1 }, 10)).toEqual({ served: true, index: 'a_b' });
    expect(coverage({ a: 1 }, { z: 1 }, 10)).toEqual({ served: false, reason: 'sort' });
    expect(coverage({ a: { $gt: 1 } }, { b: 1 }, 10)).toEqual({ served: false, reason: 'sort' });
    expect(coverage({ a: 1 }, { b: 1, z: 1 }, 10)).toEqual({ served: false, reason: 'sort' });
    expect(coverage({ z: 1 }, { a: 1 }, 10)).toEqual({ served: true, index: 'a_b' });
    expect(coverage({}, { z: 1 }, 10)).toEqual({ served: false, reason: 'scan' });
    // Without a limit, the matches are read anyway: sorting them costs no extra read.
    expect(coverage({ a: 1 }, { z: 1 })).toEqual({ served: true, index: 'a_b' });
    expect(coverage({})).toEqual({ served: true, index: null });
  });
});

describe('the embedded query audit', () => {
  it('sees each query with the indexes of its collection, and reports an unindexed one', async () => {
    const seen: AuditedQuery[] = [];
    const store = await openEmbeddedStore({ dataDir: null, queryAudit: (query) => seen.push(query) });
    const things = store.collection('things');
    await things.createIndex({ a: 1 }, { name: 'a' });
    await things.insertOne({ _id: 1, a: 1, b: 2 });
    expect(await things.find({ b: 2 }, { limit: 5 })).toHaveLength(1);
    await things.countDocuments({ a: 1 });
    expect(seen.map(({ collection, operation, filter, limit }) => ({ collection, operation, filter, limit }))).toEqual([
      { collection: 'things', operation: 'find', filter: { b: 2 }, limit: 5 },
      { collection: 'things', operation: 'countDocuments', filter: { a: 1 }, limit: undefined },
    ]);
    expect(seen.map((query) => indexCoverage(query.indexes, query))).toEqual([
      { served: false, reason: 'scan' },
      { served: true, index: 'a' },
    ]);
    await store.close();
  });

  it('a throwing audit fails the query (the "require index" mode)', async () => {
    const store = await openEmbeddedStore({
      dataDir: null,
      queryAudit: (query) => {
        if (!indexCoverage(query.indexes, query).served) throw new Error(`unindexed query on ${query.collection}`);
      },
    });
    await expect(store.collection('things').deleteMany({ b: 1 })).rejects.toThrow('unindexed query on things');
    await store.close();
  });
});

/** A query no declared index serves, and the repository method that made it. */
interface Finding {
  method: string;
  collection: string;
  operation: string;
  filter: string;
  sort: string | undefined;
  reason: string;
}

/**
 * The only accepted scan: a substring search of workflow names and descriptions (case-insensitive,
 * unanchored) counts its matches by reading every definition; no index can narrow it, and
 * definitions are few. Its page walks index `created` and stops at the page's end.
 */
const ACCEPTED: Array<Pick<Finding, 'method' | 'collection' | 'operation' | 'reason'>> = [
  { method: 'WorkflowDefinitions.list', collection: 'workflow_definitions', operation: 'countDocuments', reason: 'scan' },
];

/** The value shapes of a filter (values replaced by their type), for readable findings. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value instanceof Date) return 'Date';
  if (value instanceof RegExp) return 'RegExp';
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]));
  }
  if (typeof value === 'object' && value !== null) return value.constructor.name;
  return typeof value;
}

const NOW = new Date(Date.UTC(2026, 0, 1));
const LATER = new Date(NOW.getTime() + 3_600_000);
const CANVAS = { viewport: { x: 0, y: 0, zoom: 1 } };
const NODES = [{ id: 'a', name: 'A', nodeType: 'step', executorKey: 'echo', children: [], trueSteps: [], falseSteps: [], choices: [] }] as unknown as WorkflowNode[];
const CONFIRM: Decision = { resolution: 'confirm', confirmed: true, rejectionFeedback: null, editedOutput: null, userInput: null, selectedChoices: null, decidedBy: 'human' };
const ADA = { userId: 'u-1', username: 'ada', via: 'jwt' as const };

/** An undecided gate of step `stepId` with a 60 s timeout. */
function gate(stepId: string): RequirementRecord {
  return {
    schemaVersion: 1, stepId, gateKey: `${stepId}|pre|0`, nodeId: stepId, iterationPath: '', phase: 'pre', round: 0, stepName: stepId, stepType: 'step',
    requiresConfirmation: true, requiresUserInput: false, requiresOutputReview: false, requiresRouteSelection: false,
    confirmationMessage: null, userInputMessage: null, userInputSchema: null, outputReviewMessage: null, availableChoices: null,
    allowMultipleSelections: false, stepOutput: { out: 1 }, isPostExecution: false, ...UNDECIDED, retryCount: 0, maxRetries: null,
    onTimeout: 'skip', onReject: 'retry', requestedAt: NOW, timeoutSeconds: 60, timeoutAt: null, decidedAt: null,
  } as RequirementRecord;
}

/** What the exercises share: the repositories and the records made so far. */
interface World {
  repos: Repositories;
  workflowId: string;
  runId: string;
  childRunId: string;
  nodeRunId: string;
  scheduleId: string;
}

type Exercise = (world: World) => Promise<unknown>;

/**
 * Every public method of every repository, with the calls that exercise its query shapes, run in
 * this order on one store (deletions last).
 */
const EXERCISES: { [R in keyof Repositories]: Record<string, Exercise> } = {
  definitions: {
    create: ({ repos }) => repos.definitions.create({ name: 'second', description: 'd', canvas: CANVAS, nodes: NODES, access: DEFAULT_LEGACY_ACCESS, tags: ['t'] }, NOW),
    applyDefaultAccess: ({ repos }) => repos.definitions.applyDefaultAccess(DEFAULT_LEGACY_ACCESS),
    accessOf: ({ repos, workflowId }) => repos.definitions.accessOf(workflowId),
    setAccess: ({ repos, workflowId }) => repos.definitions.setAccess(workflowId, { ...DEFAULT_LEGACY_ACCESS, viewers: ['user:u-1'] }, NOW),
    visibleIds: ({ repos }) => repos.definitions.visibleIds(['user:u-1']),
    get: ({ repos, workflowId }) => repos.definitions.get(workflowId),
    list: async ({ repos }) => {
      for (const filter of [{}, { search: 'sec' }, { tag: 't' }, { enabled: true }, { visibleTo: ['user:u-1'] }, { search: 'w', tag: 't', enabled: false, visibleTo: ['user:u-1'] }]) {
        await repos.definitions.list(filter, 2, 1);
      }
    },
    update: ({ repos, workflowId }) => repos.definitions.update(workflowId, { enabled: true, tags: ['t', 'u'] }, false, NOW),
    listIdsAfter: async ({ repos, workflowId }) => [await repos.definitions.listIdsAfter(null, 10), await repos.definitions.listIdsAfter(workflowId, 10)],
    namesOf: ({ repos, workflowId }) => repos.definitions.namesOf([workflowId, newId()]),
    accessesOf: ({ repos, workflowId }) => repos.definitions.accessesOf([workflowId]),
    listTriggeredBy: ({ repos }) => repos.definitions.listTriggeredBy('order.created', 10),
    delete: ({ repos }) => repos.definitions.delete(newId()),
  },
  runs: {
    create: ({ repos, workflowId }) => repos.runs.create(newRun(workflowId, null), NOW),
    get: ({ repos, runId }) => repos.runs.get(runId),
    statusOf: ({ repos, runId }) => repos.runs.statusOf(runId),
    exists: ({ repos, runId }) => repos.runs.exists(runId),
    workflowIdOf: ({ repos, runId }) => repos.runs.workflowIdOf(runId),
    getInWorkflow: ({ repos, workflowId, runId }) => repos.runs.getInWorkflow(workflowId, runId),
    getViewInWorkflow: ({ repos, workflowId, runId }) => repos.runs.getViewInWorkflow(workflowId, runId),
    claim: async ({ repos, runId }) => {
      // Claimed, released and claimed again: the second claim without progress sets a recovery backoff (a second write).
      expect(await repos.runs.claim(runId, 'me', 60_000, NOW)).not.toBeNull();
      await repos.runs.release(runId, 'me', NOW);
      expect(await repos.runs.claim(runId, 'me', 60_000, NOW)).not.toBeNull();
      expect(await repos.runs.claim(runId, 'me', 60_000, NOW)).not.toBeNull();
    },
    markProgress: ({ repos, runId }) => repos.runs.markProgress(runId, 'me'),
    addRequirement: async ({ repos, runId }) => {
      expect(await repos.runs.addRequirement(runId, 'me', gate('a'), NOW)).toBe(true);
      expect(await repos.runs.addRequirement(runId, 'me', gate('a'), NOW)).toBe(true); // exists: the lease is checked instead
    },
    addRequirementToLiveRun: ({ repos, runId }) => repos.runs.addRequirementToLiveRun(runId, gate('ask'), NOW, 2),
    gateOf: async ({ repos, workflowId, runId }) => [await repos.runs.gateOf(runId, { stepId: 'a' }, workflowId), await repos.runs.gateOf(runId, { gateKey: 'a|pre|0' })],
    latestGateOf: ({ repos, runId }) => repos.runs.latestGateOf(runId, 'a'),
    requirementsOf: ({ repos, runId }) => repos.runs.requirementsOf(runId),
    list: async ({ repos, workflowId, runId }) => {
      const filters = [
        {},
        { workflowId },
        { workflowIds: [workflowId, newId()] },
        { workflowId, workflowIds: [workflowId] },
        { workflowId, status: 'running' as const },
        { status: 'pending' as const },
        { parentRunId: runId },
        { triggerSource: 'api' },
        { status: 'running' as const, triggerSource: 'api', workflowIds: [workflowId] },
      ];
      for (const filter of filters) await repos.runs.list(filter, 1, 20);
    },
    listWithUndecided: async ({ repos, workflowId, runId }) => {
      for (const filter of [{}, { runId }, { workflowId }, { workflowIds: [workflowId] }]) await repos.runs.listWithUndecided(filter, 10);
    },
    countUndecidedRequirements: ({ repos }) => repos.runs.countUndecidedRequirements(100),
    renewLease: ({ repos, runId }) => repos.runs.renewLease(runId, 'me', 60_000, NOW),
    setTraceContext: ({ repos, runId }) => repos.runs.setTraceContext(runId, 'me', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', null),
    addRetryWait: ({ repos, runId }) => repos.runs.addRetryWait(runId, 'me', { nodeId: 'a', iterationPath: '', wakeAt: LATER }),
    removeRetryWait: ({ repos, runId }) => repos.runs.removeRetryWait(runId, 'me', { nodeId: 'a', iterationPath: '', wakeAt: LATER }),
    setDirective: ({ repos, runId }) => repos.runs.setDirective(runId, null, null, NOW),
    park: async ({ repos, runId }) => expect(await repos.runs.park(runId, 'me', 0, NOW)).not.toBeNull(),
    startTimeouts: async ({ repos, runId }) => repos.runs.startTimeouts({ id: runId, pendingRequirements: await repos.runs.requirementsOf(runId) }, NOW),
    listUntimedGates: ({ repos }) => repos.runs.listUntimedGates(10),
    listExpiredRequirements: ({ repos }) => repos.runs.listExpiredRequirements(LATER, 10),
    decideRequirement: async ({ repos, runId }) => [await repos.runs.decideRequirement(runId, 'a|pre|0', CONFIRM, LATER, LATER), await repos.runs.decideRequirement(runId, 'ask|pre|0', CONFIRM, LATER, undefined, false)],
    listClaimable: ({ repos }) => repos.runs.listClaimable(LATER, 10),
    releaseAfterError: async ({ repos, runId }) => {
      await repos.runs.claim(runId, 'me', 60_000, LATER);
      return repos.runs.releaseAfterError(runId, 'me', LATER);
    },
    release: ({ repos, runId }) => repos.runs.release(runId, 'me', LATER),
    pauseOwned: async ({ repos, runId }) => {
      await repos.runs.claim(runId, 'me', 60_000, LATER);
      await repos.runs.setDirective(runId, null, 'pause', LATER);
      expect(await repos.runs.pauseOwned(runId, 'me', LATER)).not.toBeNull();
    },
    resumePaused: async ({ repos, runId }) => expect(await repos.runs.resumePaused(runId, LATER)).not.toBeNull(),
    pauseUnowned: async ({ repos, runId }) => expect(await repos.runs.pauseUnowned(runId, 'pending', LATER)).not.toBeNull(),
    endUnowned: async ({ repos, childRunId }) =>
      expect(await repos.runs.endUnowned(childRunId, 'pending', { status: 'cancelled', errorSummary: null }, { cancelReason: 'test', cancelledBy: ADA }, LATER)).not.toBeNull(),
    finish: async ({ repos, runId }) => {
      await repos.runs.resumePaused(runId, LATER);
      await repos.runs.claim(runId, 'me', 60_000, LATER);
      expect(await repos.runs.finish(runId, 'me', { status: 'completed', finalOutput: { ok: true } }, LATER)).toBe(true);
    },
    clearRecoveryBackoff: ({ repos, runId }) => repos.runs.clearRecoveryBackoff(runId),
    listOverdue: ({ repos }) => repos.runs.listOverdue(LATER, 10),
    listUnfinishedIds: ({ repos, workflowId }) => repos.runs.listUnfinishedIds(workflowId),
    countUnfinishedByWorkflow: ({ repos, workflowId }) => repos.runs.countUnfinishedByWorkflow([workflowId, newId()]),
    listUnfinishedBySchedule: ({ repos }) => repos.runs.listUnfinishedBySchedule(newId(), 10),
    findByScheduleTick: ({ repos }) => repos.runs.findByScheduleTick(newId(), NOW),
    countByStatus: ({ repos }) => repos.runs.countByStatus('pending'),
    listEndedBefore: async ({ repos }) => expect(await repos.runs.listEndedBefore(new Date(LATER.getTime() + 1), 10)).toHaveLength(2),
    listEndedBeyond: ({ repos, workflowId }) => repos.runs.listEndedBeyond(workflowId, 1, 10),
    deleteUnstarted: async ({ repos, workflowId }) => repos.runs.deleteUnstarted((await repos.runs.create(newRun(workflowId, null), NOW)).id),
    deleteEnded: ({ repos, childRunId }) => repos.runs.deleteEnded(childRunId),
    deleteByWorkflow: ({ repos }) => repos.runs.deleteByWorkflow(newId()),
  },
  nodeRuns: {
    startAttempt: ({ repos, workflowId, runId }) => repos.nodeRuns.startAttempt({ ...nodeKey(workflowId, runId, 'b'), inputSnapshot: { in: 1 } }, NOW),
    recordEndedAttempt: ({ repos, workflowId, runId }) => repos.nodeRuns.recordEndedAttempt({ ...nodeKey(workflowId, runId, 'c'), inputSnapshot: null }, { status: 'completed', outputSnapshot: 2 }, NOW),
    markAwaiting: ({ repos, workflowId, runId }) => repos.nodeRuns.markAwaiting(nodeKey(workflowId, runId, 'd'), NOW),
    setStatus: ({ repos, nodeRunId }) => repos.nodeRuns.setStatus(nodeRunId, 'running', NOW),
    end: ({ repos, nodeRunId }) => repos.nodeRuns.end(nodeRunId, { status: 'completed', outputSnapshot: { out: 1 } }, NOW, null),
    listByRun: ({ repos, runId }) => repos.nodeRuns.listByRun(runId),
    listHeads: ({ repos, runId }) => repos.nodeRuns.listHeads(runId, 1, 2),
    countByRun: ({ repos, runId }) => repos.nodeRuns.countByRun(runId),
    tallyByRuns: async ({ repos, runId, childRunId }) => [await repos.nodeRuns.tallyByRuns([runId]), await repos.nodeRuns.tallyByRuns([runId, childRunId])],
    snapshotsOf: async ({ repos, nodeRunId }) => [await repos.nodeRuns.snapshotsOf([nodeRunId], ['inputSnapshot']), await repos.nodeRuns.snapshotsOf([nodeRunId, newId()], ['outputSnapshot'])],
    backfillSnapshotBytes: ({ repos, nodeRunId }) => repos.nodeRuns.backfillSnapshotBytes(nodeRunId),
    get: ({ repos, runId, nodeRunId }) => repos.nodeRuns.get(runId, nodeRunId),
    copyToRun: async ({ repos, runId, childRunId, nodeRunId }) => repos.nodeRuns.copyToRun((await repos.nodeRuns.get(runId, nodeRunId))!, childRunId, NOW),
    cancelUnfinished: ({ repos, runId }) => repos.nodeRuns.cancelUnfinished(runId, 'ended', NOW),
    countCompletedSteps: ({ repos, runId }) => repos.nodeRuns.countCompletedSteps(runId),
    deleteByRun: ({ repos, childRunId }) => repos.nodeRuns.deleteByRun(childRunId),
    deleteByWorkflow: ({ repos }) => repos.nodeRuns.deleteByWorkflow(newId()),
  },
  events: {
    append: async ({ repos, workflowId, runId }) => {
      const event = { runId, workflowDefinitionId: workflowId, type: 'node.started' as const, payload: { nodeId: 'a', nodeName: 'A', iterationPath: '', attempt: 1, nodeRunId: runId } };
      await repos.events.append(event, NOW);
      await repos.events.append(event, NOW, 1); // taken: reads the last seq and tries again
    },
    lastSeq: ({ repos, runId }) => repos.events.lastSeq(runId),
    onAppend: async ({ repos }) => repos.events.onAppend(() => {})(),
    list: async ({ repos, runId }) => [await repos.events.list(runId), await repos.events.list(runId, { afterSeq: 1, limit: 5, types: ['node.started'], nodeId: 'a' })],
    listByRun: ({ repos, runId }) => repos.events.listByRun(runId),
    deleteByRun: ({ repos, childRunId }) => repos.events.deleteByRun(childRunId),
    deleteByWorkflow: ({ repos }) => repos.events.deleteByWorkflow(newId()),
  },
  idempotencyKeys: {
    claim: async ({ repos, workflowId, runId, childRunId }) => {
      expect(await repos.idempotencyKeys.claim(workflowId, 'k', { runId, bodyHash: 'h', now: NOW, ttlMs: 1000 })).toEqual({ won: true });
      expect((await repos.idempotencyKeys.claim(workflowId, 'k', { runId: childRunId, bodyHash: 'h', now: NOW, ttlMs: 1000 })).won).toBe(false);
    },
    release: ({ repos, workflowId, childRunId }) => repos.idempotencyKeys.release(workflowId, 'k', childRunId),
    purgeExpired: async ({ repos }) => expect(await repos.idempotencyKeys.purgeExpired(LATER)).toBe(1),
    deleteByWorkflow: ({ repos, workflowId }) => repos.idempotencyKeys.deleteByWorkflow(workflowId),
  },
  audit: {
    append: ({ repos, workflowId }) => repos.audit.append({ workflowId, type: 'workflow.toggled', actor: ADA, payload: { enabled: true }, createdAt: NOW }),
    list: ({ repos, workflowId }) => repos.audit.list(workflowId, 1, 10),
    flushOutbox: async ({ repos }) => {
      const created = await repos.definitions.create({ name: 'outboxed', description: null, canvas: CANVAS, nodes: NODES, access: DEFAULT_LEGACY_ACCESS }, NOW, { type: 'workflow.created', actor: ADA, payload: { name: 'outboxed', version: 1 }, createdAt: NOW });
      expect(await repos.audit.flushOutbox(created.id)).toBe(1);
    },
  },
  schedules: {
    create: ({ repos, workflowId }) => repos.schedules.create(newSchedule(workflowId, 'second'), NOW),
    get: ({ repos, scheduleId }) => repos.schedules.get(scheduleId),
    list: ({ repos, workflowId }) => repos.schedules.list(workflowId, 1, 10),
    listAll: async ({ repos, workflowId }) => [await repos.schedules.listAll({}, 1, 10), await repos.schedules.listAll({ workflowIds: [workflowId, newId()] }, 1, 10)],
    update: ({ repos, scheduleId }) => repos.schedules.update(scheduleId, { note: 'n', paused: false }, NOW, 1),
    listDue: ({ repos }) => repos.schedules.listDue(LATER, 10),
    claimTick: async ({ repos, scheduleId }) => {
      expect(await repos.schedules.claimTick(scheduleId, NOW, { fireAt: LATER, dueAt: LATER }, NOW, 3, true)).not.toBeNull();
      expect(await repos.schedules.claimTick(scheduleId, NOW, { fireAt: LATER, dueAt: LATER }, NOW)).toBeNull();
    },
    listStaleFiring: async ({ repos }) => expect((await repos.schedules.listStaleFiring(LATER, 10)).map((stale) => stale.ticks)).toEqual([[{ scheduledAt: NOW, tookRun: true }]]),
    settleTick: async ({ repos, scheduleId }) => {
      expect(await repos.schedules.settleTick(scheduleId, NOW, { scheduledAt: NOW, status: 'skipped', reason: 'r' }, true)).toBe(true);
      expect(await repos.schedules.settleTick(scheduleId, NOW, { scheduledAt: NOW, status: 'skipped', reason: 'r' }, true)).toBe(false);
    },
    refundRun: ({ repos, scheduleId }) => repos.schedules.refundRun(scheduleId),
    recordRecent: ({ repos, scheduleId }) => repos.schedules.recordRecent(scheduleId, { scheduledAt: NOW, status: 'skipped', reason: 'r' }),
    bufferTick: async ({ repos, scheduleId }) => {
      expect(await repos.schedules.bufferTick(scheduleId, NOW, 1)).toBe(true);
      expect(await repos.schedules.bufferTick(scheduleId, LATER, 1)).toBe(false);
    },
    listBuffered: ({ repos }) => repos.schedules.listBuffered(LATER, 10, 10),
    popBuffered: ({ repos, scheduleId }) => repos.schedules.popBuffered(scheduleId, NOW),
    delete: ({ repos }) => repos.schedules.delete(newId()),
    deleteByWorkflow: ({ repos }) => repos.schedules.deleteByWorkflow(newId()),
  },
  inboundEvents: {
    receive: async ({ repos }) => {
      const event = { name: 'order.created', data: { total: 1 }, sourceId: 'dup', senderId: 'user:a', bodyHash: 'h', now: NOW, retentionMs: 1000, dedupeMs: 1000 };
      expect((await repos.inboundEvents.receive(event)).won).toBe(true);
      expect((await repos.inboundEvents.receive(event)).won).toBe(false);
      expect((await repos.inboundEvents.receive({ ...event, now: LATER })).won).toBe(true); // past its window: the key moves on
    },
    get: ({ repos }) => repos.inboundEvents.get(newId()),
    takeOver: ({ repos }) => repos.inboundEvents.takeOver(newId(), 'user:a', NOW, LATER),
    abandon: ({ repos }) => repos.inboundEvents.abandon(newId()),
    complete: async ({ repos, workflowId, runId }) => {
      const receipt = await repos.inboundEvents.receive({ name: 'order.paid', data: {}, sourceId: null, senderId: 'user:a', bodyHash: 'h', now: NOW, retentionMs: 1000, dedupeMs: 1000 });
      if (receipt.won) await repos.inboundEvents.complete(receipt.event.id, [{ workflowId, runId }], [{ workflowId, trigger: 0, error: 'e' }]);
    },
    list: async ({ repos, workflowId }) => [
      await repos.inboundEvents.list({}, 1, 10),
      await repos.inboundEvents.list({ name: 'order.created' }, 1, 10),
      await repos.inboundEvents.list({ workflowIds: [workflowId] }, 1, 10),
    ],
    purgeExpired: ({ repos }) => repos.inboundEvents.purgeExpired(LATER),
  },
};

/** The method names of `repository`'s class and of the classes it extends (the runs' writes extend their reads), without constructors. */
function publicMethodsOf(repository: object): string[] {
  const names = new Set<string>();
  for (let proto = Object.getPrototypeOf(repository); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) if (key !== 'constructor') names.add(key);
  }
  return [...names];
}

/** Methods not listed above because they are private helpers, run by the public methods that call them. */
const PRIVATE_HELPERS: { [R in keyof Repositories]?: readonly string[] } = {
  definitions: ['guardName'],
  schedules: ['guardName', 'page'],
  runs: ['cas'],
  nodeRuns: ['recordAttempt'],
  events: ['notify'],
};

function newRun(workflowId: string, parentRunId: string | null) {
  return {
    workflowDefinitionId: workflowId, workflowVersion: 1, triggerSource: 'api', initialInput: { customer: 'c-1' },
    definitionSnapshot: { name: 'w', description: null, canvas: CANVAS, nodes: NODES }, parentRunId, resolvedDependencies: [],
    triggeringUserId: 'u-1', triggeringUsername: 'ada', triggeringScopes: ['workflows-control'], timeoutSeconds: 60,
  };
}

function newSchedule(workflowId: string, name: string) {
  const spec = { cron: null, intervalSeconds: 60, offsetSeconds: 0, timezone: 'UTC', startAt: null, endAt: null, jitterSeconds: 0 };
  return { workflowDefinitionId: workflowId, name, spec, input: {}, overlapPolicy: 'skip' as const, catchupWindowSeconds: 60, paused: false, note: null, remainingRuns: 3, next: { fireAt: NOW, dueAt: NOW } };
}

function nodeKey(workflowId: string, runId: string, nodeId: string) {
  return { runId, workflowDefinitionId: workflowId, nodeId, iterationPath: '', nodeName: nodeId, nodeType: 'step' as const };
}

describe('every repository query is served by a declared index', () => {
  let store: DocumentStore;
  let repos: Repositories;
  const findings: Finding[] = [];
  let method = 'setup';

  beforeAll(async () => {
    store = await openEmbeddedStore({
      dataDir: null,
      queryAudit: (query) => {
        const coverage = indexCoverage(query.indexes, query);
        if (!coverage.served) {
          findings.push({
            method,
            collection: query.collection,
            operation: query.operation,
            filter: JSON.stringify(shape(query.filter)),
            sort: query.sort && JSON.stringify(query.sort),
            reason: coverage.reason,
          });
        }
      },
    });
    repos = await openRepositories(store);
  });
  afterAll(async () => {
    await store.close();
  });

  it('the exercises name every public method of every repository', () => {
    for (const [name, repository] of Object.entries(repos) as Array<[keyof Repositories, object]>) {
      const methods = publicMethodsOf(repository);
      const listed = [...Object.keys(EXERCISES[name]), ...(PRIVATE_HELPERS[name] ?? [])];
      expect(methods.sort(), `repository ${name}`).toEqual(listed.sort());
    }
  });

  it('runs them all; no query needs a collection scan or an in-memory sort of a whole result', async () => {
    const workflow = await repos.definitions.create({ name: 'first', description: null, canvas: CANVAS, nodes: NODES, access: DEFAULT_LEGACY_ACCESS }, NOW);
    const run = await repos.runs.create(newRun(workflow.id, null), NOW);
    const child = await repos.runs.create(newRun(workflow.id, run.id), NOW);
    const nodeRun = await repos.nodeRuns.startAttempt({ ...nodeKey(workflow.id, run.id, 'a'), inputSnapshot: { in: 1 } }, NOW);
    const schedule = await repos.schedules.create(newSchedule(workflow.id, 'first'), NOW);
    const world: World = { repos, workflowId: workflow.id, runId: run.id, childRunId: child.id, nodeRunId: nodeRun.id, scheduleId: schedule.id };
    let exercised = 0;
    for (const [name, exercises] of Object.entries(EXERCISES)) {
      for (const [methodName, exercise] of Object.entries(exercises)) {
        method = `${(repos as unknown as Record<string, object>)[name]!.constructor.name}.${methodName}`;
        await exercise(world);
        exercised += 1;
      }
    }
    expect(exercised).toBeGreaterThan(80);
    expect(findings.map(({ method, collection, operation, reason }) => ({ method, collection, operation, reason }))).toEqual(ACCEPTED);
  });

  it('the claimable runs in trigger order (created_at, then _id) are served by index `claimable`', () => {
    const now = new Date();
    const filter = {
      $and: [
        { $or: [{ status: { $in: ['pending', 'running'] } }, { status: 'awaiting_approval', wake_pending: true }] },
        { $or: [{ lease_expires_at: null }, { lease_expires_at: { $lt: now } }] },
        { $or: [{ recover_after: null }, { recover_after: { $lte: now } }] },
      ],
    };
    const runs = DECLARED_INDEXES.workflow_runs!;
    expect(indexCoverage(runs, { filter, sort: { created_at: 1, _id: 1 }, limit: 10 })).toEqual({ served: true, index: 'claimable' });
    expect(indexCoverage(runs, { filter, sort: { started_at: 1, _id: 1 }, limit: 10 })).toEqual({ served: true, index: 'status_recent' });
  });

  it('the check fails without an index a query needs: a page of node runs would be sorted in memory', () => {
    const withoutRunStarted = DECLARED_INDEXES.node_runs!.filter((index) => index.name !== 'run_started');
    const page: QueryShape = { filter: { workflow_run_id: newId() }, sort: { started_at: 1, _id: 1 }, limit: 20 };
    expect(indexCoverage(withoutRunStarted, page)).toEqual({ served: false, reason: 'sort' });
    expect(indexCoverage(DECLARED_INDEXES.node_runs!, page)).toEqual({ served: true, index: 'run_started' });
  });

  it('docs/reference/collections.md lists every declared index', () => {
    const docs = readFileSync(new URL('../../../docs/reference/collections.md', import.meta.url), 'utf8');
    for (const [collection, indexes] of Object.entries(DECLARED_INDEXES)) {
      for (const index of indexes) expect(docs, `${collection}.${index.name}`).toContain(`| \`${collection}\` | \`${index.name}\``);
    }
    for (const [collection, names] of Object.entries(RETIRED_INDEXES)) for (const name of names) expect(docs, `retired ${collection}.${name}`).toContain(`\`${name}\``);
  });
});
