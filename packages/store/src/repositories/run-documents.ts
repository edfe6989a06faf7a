/**
 * What the `workflow_runs` repository's two halves share (run-reads.ts, workflow-runs.ts): the
 * collection name, the document mapping, the projections and the status sets their filters use.
 */
import {
  CLAIMABLE_RUN_STATUSES,
  DECIDABLE_RUN_STATUSES,
  RUN_STATUSES,
  RUN_VIEW_FIELDS,
  TERMINAL_RUN_STATUSES,
  camelToSnake,
  fromDocument,
  type RequirementRecord,
  type RunRecord,
  type RunStatus,
} from '@switchyard/domain';
import type { Document } from '../document-collection.ts';
import { documentToRecord, oid } from './documents.ts';

export const WORKFLOW_RUNS = 'workflow_runs';
/** Fields holding ObjectId references (mapped to hex ids). */
export const REFS = ['workflowDefinitionId', 'parentRunId'] as const;

/** A run's status with one of its gates (see {@link WorkflowRuns.gateOf}). */
export interface RunGate {
  run: Pick<RunRecord, 'id' | 'workflowDefinitionId' | 'status' | 'triggeringUserId' | 'triggerLineage'>;
  gate: RequirementRecord | null;
}

/** Filters of {@link WorkflowRuns.list}; absent fields do not filter. */
export interface RunListFilter {
  workflowId?: string;
  status?: RunStatus;
  triggerSource?: string;
  parentRunId?: string;
  /** Only runs of these workflows (the ones a caller may see, issue #18); absent: any workflow. */
  workflowIds?: readonly string[];
}

/** `query` narrowed to runs of `workflowIds` when given (index `workflow_recent`), on top of a `workflowId` equality when both are given. */
export function inWorkflows(query: Document, workflowIds: readonly string[] | undefined): Document {
  if (workflowIds === undefined) return query;
  const among = { $in: workflowIds.map(oid) };
  return query.workflow_definition_id === undefined ? { ...query, workflow_definition_id: among } : { $and: [query, { workflow_definition_id: among }] };
}

/**
 * What a run list row needs: large fields (definition snapshot, input, output, dependencies, the
 * values of gates) stay in the store; the gates themselves come along for the run's runState and
 * its node runs' decisions.
 */
export const LIST_PROJECTION: Document = {
  definition_snapshot: 0,
  initial_input: 0,
  final_output: 0,
  resolved_dependencies: 0,
  'pending_requirements.step_output': 0,
  'pending_requirements.edited_output': 0,
  'pending_requirements.user_input': 0,
};

/** The run views' fields ({@link RUN_VIEW_FIELDS}) as an inclusion projection. */
export const VIEW_PROJECTION: Document = Object.fromEntries(RUN_VIEW_FIELDS.filter((field) => field !== 'id').map((field) => [camelToSnake(field), 1]));

/** A {@link RunGate} of a run document read with its status and gates: `pick` chooses the gate (documents), which alone is mapped. */
export function runGate(doc: Document, pick: (gates: Document[]) => Document | undefined): RunGate {
  const { pending_requirements: gates, ...rest } = doc;
  const gate = pick((gates as Document[] | undefined) ?? []);
  return { run: toRecord(rest), gate: gate ? fromDocument<RequirementRecord>(gate) : null };
}

/** Statuses in which a requirement may be decided (a run may run on while one gate waits). */
export const DECIDABLE = [...DECIDABLE_RUN_STATUSES];

/** Statuses of runs that have not ended. */
export const LIVE = RUN_STATUSES.filter((status) => !TERMINAL_RUN_STATUSES.includes(status));

/** Runs an instance may take over: see {@link WorkflowRuns.claim}. */
export const CLAIMABLE: Document = { $or: [{ status: { $in: [...CLAIMABLE_RUN_STATUSES] } }, { status: 'awaiting_approval', wake_pending: true }] };

export function noLiveLease(now: Date): Document {
  return { $or: [{ lease_expires_at: null }, { lease_expires_at: { $lt: now } }] };
}

/** A stored run document as a record. */
export function toRecord(doc: Document): RunRecord {
  return documentToRecord<RunRecord>(doc, REFS);
}
