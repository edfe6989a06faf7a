/**
 * Every index of every collection, declared in one place for both backends (issue #20 item 6),
 * with the repository queries each one serves; {@link ensureIndexes} creates them at start.
 * `index-coverage.test.ts` runs every repository method on the embedded store and fails when a
 * query is served by none of them (rules: index-coverage.ts); docs/reference/collections.md lists
 * them. `_id` lookups use the `_id` index every collection has.
 */
import type { DocumentStore, IndexOptions } from '../document-collection.ts';
import { IDEMPOTENCY_KEYS } from './idempotency-keys.ts';
import { INBOUND_EVENTS } from './inbound-events.ts';
import { NODE_RUNS } from './node-runs.ts';
import { RUN_EVENTS } from './run-events.ts';
import { SCHEDULES } from './schedules.ts';
import { WORKFLOW_AUDIT } from './workflow-audit.ts';
import { WORKFLOW_DEFINITIONS } from './workflow-definitions.ts';
import { WORKFLOW_RUNS } from './workflow-runs.ts';

/** One declared index: `createIndex(keys, { name, ...options })`, and the queries that need it (`Repository.method`, for the docs). */
export interface DeclaredIndex {
  readonly name: string;
  readonly keys: Readonly<Record<string, 1 | -1>>;
  readonly options?: Omit<IndexOptions, 'name'>;
  readonly serves: readonly string[];
}

/** The indexes of each collection (see the module comment). */
export const DECLARED_INDEXES: Readonly<Record<string, readonly DeclaredIndex[]>> = {
  [WORKFLOW_DEFINITIONS]: [
    { name: 'name_unique', keys: { name: 1 }, options: { unique: true }, serves: ['names are unique (create, update)'] },
    { name: 'created', keys: { created_at: -1, _id: -1 }, serves: ['WorkflowDefinitions.list (no filter, or only a search: newest first)'] },
    { name: 'tags_created', keys: { tags: 1, created_at: -1, _id: -1 }, serves: ['WorkflowDefinitions.list (by tag)'] },
    { name: 'enabled_created', keys: { enabled: 1, created_at: -1, _id: -1 }, serves: ['WorkflowDefinitions.list (enabled or disabled)'] },
    {
      name: 'access_created',
      keys: { access_principals: 1, created_at: -1, _id: -1 },
      serves: ['WorkflowDefinitions.list (visible to a caller)', 'WorkflowDefinitions.visibleIds', 'WorkflowDefinitions.applyDefaultAccess'],
    },
    { name: 'triggers_enabled', keys: { 'triggers.event': 1, enabled: 1, _id: 1 }, serves: ['WorkflowDefinitions.listTriggeredBy (the workflows an event may start, multikey)'] },
  ],
  [WORKFLOW_RUNS]: [
    { name: 'started', keys: { started_at: -1, _id: -1 }, serves: ['WorkflowRuns.list (across workflows, newest first)'] },
    {
      name: 'workflow_recent',
      keys: { workflow_definition_id: 1, started_at: -1, _id: -1 },
      serves: ['WorkflowRuns.list (of a workflow, or of the workflows a caller may see)', 'WorkflowRuns.deleteByWorkflow'],
    },
    {
      name: 'workflow_status_recent',
      keys: { workflow_definition_id: 1, status: 1, started_at: -1, _id: -1 },
      serves: ['WorkflowRuns.list (of a workflow, by status)', 'WorkflowRuns.listEndedBeyond', 'WorkflowRuns.listUnfinishedIds', 'WorkflowRuns.countUnfinishedByWorkflow'],
    },
    { name: 'status_recent', keys: { status: 1, started_at: -1, _id: -1 }, serves: ['WorkflowRuns.list (by status, across workflows)', 'WorkflowRuns.countByStatus'] },
    { name: 'parent_recent', keys: { parent_run_id: 1, started_at: -1, _id: -1 }, serves: ['WorkflowRuns.list (children of a run)'] },
    { name: 'trigger_source_recent', keys: { trigger_source: 1, started_at: -1, _id: -1 }, serves: ['WorkflowRuns.list (by trigger source, and its total)'] },
    { name: 'schedule_status', keys: { schedule_id: 1, status: 1 }, serves: ['RunReads.listUnfinishedBySchedule (the overlap policy of a schedule)'] },
    { name: 'schedule_tick', keys: { schedule_id: 1, scheduled_at: 1 }, serves: ["RunReads.findByScheduleTick (a tick's own run, before its overlap policy)"] },
    {
      name: 'claimable',
      keys: { status: 1, created_at: 1, _id: 1 },
      serves: ['WorkflowRuns.listClaimable (claimable statuses in trigger order; `status_recent` backwards serves its older started_at order)'],
    },
    {
      name: 'pending_approvals',
      keys: { status: 1, _id: 1 },
      serves: ['WorkflowRuns.listWithUndecided', 'WorkflowRuns.countUndecidedRequirements', 'WorkflowRuns.listUntimedGates'],
    },
    { name: 'gate_timeouts', keys: { status: 1, 'pending_requirements.timeout_at': 1 }, serves: ['WorkflowRuns.listExpiredRequirements (the gate timeout sweeper)'] },
    { name: 'ended', keys: { status: 1, finished_at: 1, _id: 1 }, serves: ['WorkflowRuns.listEndedBefore (retention by age)'] },
    { name: 'overdue', keys: { status: 1, deadline_at: 1, _id: 1 }, serves: ['WorkflowRuns.listOverdue (run timeouts)'] },
  ],
  [NODE_RUNS]: [
    {
      name: 'run_node_iteration',
      keys: { workflow_run_id: 1, node_id: 1, iteration_path: 1 },
      options: { unique: true },
      serves: ['NodeRuns.startAttempt, recordEndedAttempt, markAwaiting (upsert by key)', 'NodeRuns.countByRun, tallyByRuns, cancelUnfinished, countCompletedSteps, deleteByRun'],
    },
    { name: 'run_started', keys: { workflow_run_id: 1, started_at: 1, _id: 1 }, serves: ['NodeRuns.listByRun', 'NodeRuns.listHeads (pages in start order)'] },
    { name: 'workflow', keys: { workflow_definition_id: 1 }, serves: ['NodeRuns.deleteByWorkflow'] },
  ],
  [RUN_EVENTS]: [
    { name: 'run_seq', keys: { run_id: 1, seq: 1 }, options: { unique: true }, serves: ['RunEvents.append (seq unique per run)', 'RunEvents.lastSeq, list, listByRun, deleteByRun'] },
    { name: 'workflow', keys: { workflow_definition_id: 1 }, serves: ['RunEvents.deleteByWorkflow'] },
  ],
  [IDEMPOTENCY_KEYS]: [
    {
      name: 'expires_ttl',
      keys: { expires_at: 1 },
      options: { expireAfterSeconds: 0 },
      serves: ['MongoDB deletes a key once `expires_at` passed (TTL)', 'IdempotencyKeys.purgeExpired (the sweep; the embedded store has no TTL task)'],
    },
    { name: 'workflow', keys: { workflow_definition_id: 1 }, serves: ['IdempotencyKeys.deleteByWorkflow'] },
  ],
  [INBOUND_EVENTS]: [
    { name: 'dedupe_unique', keys: { dedupe_key: 1 }, options: { unique: true }, serves: ["InboundEvents.receive (a client id dedupes while its window lasts)"] },
    { name: 'received', keys: { received_at: -1, _id: -1 }, serves: ['InboundEvents.list (newest first)'] },
    { name: 'name_received', keys: { name: 1, received_at: -1, _id: -1 }, serves: ['InboundEvents.list (by name)'] },
    { name: 'workflows_received', keys: { workflow_ids: 1, received_at: -1, _id: -1 }, serves: ['InboundEvents.list (of the workflows a caller may see, multikey)'] },
    {
      name: 'expires_ttl',
      keys: { expires_at: 1 },
      options: { expireAfterSeconds: 0 },
      serves: ['MongoDB deletes an event once `expires_at` passed (TTL)', 'InboundEvents.purgeExpired (the retention sweep; the embedded store has no TTL task)'],
    },
  ],
  [WORKFLOW_AUDIT]: [{ name: 'workflow_created', keys: { workflow_id: 1, created_at: -1, _id: -1 }, serves: ['WorkflowAudit.list'] }],
  [SCHEDULES]: [
    { name: 'workflow_name_unique', keys: { workflow_definition_id: 1, name: 1 }, options: { unique: true }, serves: ['names are unique per workflow (Schedules.create, update)', 'Schedules.deleteByWorkflow'] },
    { name: 'workflow_created', keys: { workflow_definition_id: 1, created_at: -1, _id: -1 }, serves: ['Schedules.list (of a workflow, newest first)', 'Schedules.listAll (of some workflows)'] },
    { name: 'created', keys: { created_at: -1, _id: -1 }, serves: ['Schedules.listAll (across workflows, newest first)'] },
    { name: 'due', keys: { paused: 1, due_at: 1 }, serves: ['Schedules.listDue (the schedule loop: unpaused, longest-due first)'] },
    { name: 'buffered', keys: { paused: 1, buffered_ticks: 1 }, serves: ['Schedules.listBuffered (the schedule loop: buffered ticks to start)'] },
    { name: 'firing', keys: { 'firing.claimed_at': 1 }, serves: ['Schedules.listStaleFiring (the schedule loop: ticks whose loop died between claim and run)'] },
  ],
};

/**
 * Indexes of earlier versions, dropped at start: each was replaced by a declared one (a key added
 * for a sort, TTL) or served nothing any more. Dropping them first also frees their keys for a
 * replacement with the same keys (`expires` -> `expires_ttl`).
 */
export const RETIRED_INDEXES: Readonly<Record<string, readonly string[]>> = {
  [WORKFLOW_DEFINITIONS]: ['created_at', 'tags', 'access_principals'],
  [WORKFLOW_RUNS]: ['workflow_started', 'status_lease', 'parent_started', 'requirement_timeouts', 'status_finished', 'deadline'],
  [IDEMPOTENCY_KEYS]: ['expires'],
};

/**
 * Drops the {@link RETIRED_INDEXES} that exist, then creates the {@link DECLARED_INDEXES}.
 * Idempotent: call at start. Rejects with the backend's error, e.g. code 85/86 when an index of
 * the same name but other keys or options exists (not one of ours).
 */
export async function ensureIndexes(store: DocumentStore): Promise<void> {
  for (const [collection, names] of Object.entries(RETIRED_INDEXES)) {
    for (const name of names) await store.collection(collection).dropIndex(name);
  }
  for (const [collection, indexes] of Object.entries(DECLARED_INDEXES)) {
    for (const { name, keys, options } of indexes) await store.collection(collection).createIndex({ ...keys }, { ...options, name });
  }
}
