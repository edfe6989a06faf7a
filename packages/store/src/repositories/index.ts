/**
 * The repositories over one DocumentStore, and the start-up index creation.
 */
import type { DocumentStore } from '../document-collection.ts';
import { IdempotencyKeys } from './idempotency-keys.ts';
import { InboundEvents } from './inbound-events.ts';
import { ensureIndexes } from './indexes.ts';
import { NodeRuns } from './node-runs.ts';
import { RunEvents } from './run-events.ts';
import { Schedules } from './schedules.ts';
import { WorkflowAudit } from './workflow-audit.ts';
import { WorkflowDefinitions } from './workflow-definitions.ts';
import { WorkflowRuns } from './workflow-runs.ts';

export { IdempotencyKeys, type IdempotencyClaim, type IdempotencyRecord } from './idempotency-keys.ts';
export {
  InboundEvents,
  INBOUND_EVENTS,
  type EventListFilter,
  type EventProblem,
  type EventReceipt,
  type EventRun,
  type InboundEventRecord,
  type NewInboundEvent,
} from './inbound-events.ts';
export { NodeRuns, type NodeRunEnd, type NodeRunKey, type NodeRunStart } from './node-runs.ts';
export { RunEvents, type AppendedRunEvent, type RunEventFilter, type RunEventListener } from './run-events.ts';
export {
  Schedules,
  SCHEDULES,
  MAX_RECENT_RUNS,
  MAX_SCHEDULE_CHANGERS,
  type NewSchedule,
  type NextTick,
  type RecentScheduleRun,
  type ScheduleChanges,
  type ScheduleListFilter,
  type ScheduleRecord,
} from './schedules.ts';
export { WorkflowAudit, WORKFLOW_AUDIT, type NewAuditEntry } from './workflow-audit.ts';
export { WorkflowDefinitions, type WorkflowChanges, type WorkflowListFilter } from './workflow-definitions.ts';
export { WorkflowRuns, type ClaimedRun, type DecidedRun, type NewRun, type RunGate, type RunListFilter, type RunOutcome } from './workflow-runs.ts';
export { escapeRegex, newId } from './documents.ts';
export { DECLARED_INDEXES, RETIRED_INDEXES, ensureIndexes, type DeclaredIndex } from './indexes.ts';

/** All repositories of one store. */
export interface Repositories {
  definitions: WorkflowDefinitions;
  runs: WorkflowRuns;
  nodeRuns: NodeRuns;
  events: RunEvents;
  idempotencyKeys: IdempotencyKeys;
  /** Who changed each workflow's definition or access (kept after the workflow is deleted). */
  audit: WorkflowAudit;
  /** Workflow schedules and their tick claims (schedules.ts). */
  schedules: Schedules;
  /** Events posted to `POST /api/v1/events` and the runs they started (inbound-events.ts; `events` is the run events). */
  inboundEvents: InboundEvents;
}

/** Builds the repositories and creates their indexes (`ensureIndexes`, indexes.ts: idempotent; call at start). */
export async function openRepositories(store: DocumentStore): Promise<Repositories> {
  const repositories: Repositories = {
    definitions: new WorkflowDefinitions(store),
    runs: new WorkflowRuns(store),
    nodeRuns: new NodeRuns(store),
    events: new RunEvents(store),
    idempotencyKeys: new IdempotencyKeys(store),
    audit: new WorkflowAudit(store),
    schedules: new Schedules(store),
    inboundEvents: new InboundEvents(store),
  };
  await ensureIndexes(store);
  return repositories;
}
