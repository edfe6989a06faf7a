/**
 * Records -> API responses (spec endpoints 1-12). Times become ISO-8601 strings; internal run
 * fields (lease, triggering identity, directive, counters) are left out.
 */
import { actorOfStored, type Actor } from './access.ts';
import type { NodeRunRecord, RequirementRecord, RunRecord, WorkflowRecord } from './records.ts';
import { jsonByteLength } from './json-size.ts';
import { MAX_ACTIVE_NODE_IDS, type SnapshotBudget } from './response-bounds.ts';
import { deriveRunState } from './run-state.ts';
import { ACTIVE_NODE_RUN_STATUSES, isTerminalRunStatus, type NodeRunStatus } from './run-status.ts';
import type { NodeRunDetail, NodeStatusCounts, RequirementRecordView, RunDetail, RunSummary, StepRequirementSummary } from './schemas/run.ts';
import type { WorkflowDetail, WorkflowSummary } from './schemas/workflow.ts';
import { countNodes } from './validation.ts';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/**
 * The fields of a run that its views (run detail, run list row, runState) read: the store's
 * run-view read (`WorkflowRuns.getViewInWorkflow`) returns only these, leaving out the runner's
 * bookkeeping (lease owner, wake counters, triggering identity, ...).
 */
export const RUN_VIEW_FIELDS = [
  'id',
  'workflowDefinitionId',
  'workflowVersion',
  'status',
  'triggerSource',
  'startedAt',
  'finishedAt',
  'parentRunId',
  'scheduleId',
  'scheduledAt',
  'eventId',
  'errorSummary',
  'pausedAt',
  'pendingDirective',
  'cancelReason',
  'cancelledBy',
  'triggeringUserId',
  'triggeringUsername',
  'triggeringVia',
  'timeoutSeconds',
  'deadlineAt',
  'leaseExpiresAt',
  'heartbeatAt',
  'retryWaits',
  'pendingRequirements',
  'initialInput',
  'finalOutput',
  'definitionSnapshot',
  'resolvedDependencies',
] as const satisfies ReadonlyArray<keyof RunRecord>;

/** A run as its views read it: the {@link RUN_VIEW_FIELDS} of a {@link RunRecord} (a full record is one). */
export type RunViewRecord = Pick<RunRecord, (typeof RUN_VIEW_FIELDS)[number]>;

/** WorkflowRecord -> WorkflowDetail. */
export function toWorkflowDetail(record: WorkflowRecord): WorkflowDetail {
  return {
    id: record.id,
    name: record.name,
    description: record.description,
    canvas: record.canvas,
    nodes: record.nodes,
    enabled: record.enabled,
    tags: record.tags,
    version: record.version,
    inputSchema: record.inputSchema ?? null,
    triggers: record.triggers ?? [],
    access: record.access,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** WorkflowRecord -> one row of the workflow list; `runningCount` (runs not ended) only when given. */
export function toWorkflowSummary(record: WorkflowRecord, runningCount?: number): WorkflowSummary {
  return {
    id: record.id,
    name: record.name,
    description: record.description,
    numNodes: countNodes(record.nodes),
    enabled: record.enabled,
    tags: record.tags,
    version: record.version,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    ...(runningCount === undefined ? {} : { runningCount }),
  };
}

/** Snapshot fields of a node run. */
export type SnapshotField = 'inputSnapshot' | 'outputSnapshot' | 'originalOutputSnapshot';

/** Sizes (bytes of JSON) of the snapshots a response leaves out, by field. */
export type OmittedSnapshots = Partial<Record<SnapshotField, number>>;

/**
 * NodeRunRecord -> NodeRunDetail. `omitted` names snapshots left out of a list-like response
 * (shown as null, sizes under `omittedSnapshots`; see `response-bounds.ts`); `decisions` are the
 * node run's HITL gates (see {@link requirementsOfNodeRun}).
 */
export function toNodeRunDetail(record: NodeRunRecord, omitted: OmittedSnapshots = {}, decisions: readonly RequirementRecordView[] = []): NodeRunDetail {
  const shown = (field: SnapshotField) => (omitted[field] === undefined ? (record[field] ?? null) : null);
  const hasOriginal = omitted.originalOutputSnapshot !== undefined || (record.originalOutputSnapshot !== undefined && record.originalOutputSnapshot !== null);
  return {
    id: record.id,
    nodeId: record.nodeId,
    nodeName: record.nodeName,
    nodeType: record.nodeType,
    iterationPath: record.iterationPath,
    workflowRunId: record.workflowRunId,
    status: record.status,
    attempt: record.attempt,
    inputSnapshot: shown('inputSnapshot'),
    outputSnapshot: shown('outputSnapshot'),
    ...(hasOriginal ? { originalOutputSnapshot: shown('originalOutputSnapshot') } : {}),
    ...(Object.keys(omitted).length > 0 ? { omittedSnapshots: omitted } : {}),
    ...(decisions.length > 0 ? { decisions: [...decisions] } : {}),
    error: record.error,
    ...(record.executorKey ? { executorKey: record.executorKey } : {}),
    ...(record.poolAttempts && record.poolAttempts.length > 0 ? { poolAttempts: record.poolAttempts.map((tried) => ({ ...tried })) } : {}),
    startedAt: iso(record.startedAt),
    finishedAt: iso(record.finishedAt),
  };
}

/**
 * What a run response carries of its node runs: the first ones (as views), how many there are in
 * all, where to list them all, and how all of them stand (see {@link NodeRunTally}).
 */
export interface NodeRunExcerpt {
  items: NodeRunDetail[];
  total: number;
  url: string;
  statusCounts: NodeStatusCounts;
  activeNodeIds: string[];
}

/**
 * How all node runs of one run stand: how many there are, how many in each status, and the
 * (distinct, sorted, at most {@link MAX_ACTIVE_NODE_IDS}) ids of the nodes executing or held at a
 * gate now.
 */
export interface NodeRunTally {
  total: number;
  counts: NodeStatusCounts;
  activeNodeIds: string[];
}

/** The tally of a run without node runs. */
export function emptyNodeRunTally(): NodeRunTally {
  return { total: 0, counts: { pending: 0, running: 0, awaiting_approval: 0, completed: 0, failed: 0, skipped: 0, cancelled: 0 }, activeNodeIds: [] };
}

/** Tallies the node runs of one run (any order; only their node id and status are read). */
export function tallyNodeRuns(nodeRuns: Iterable<{ nodeId: string; status: NodeRunStatus }>): NodeRunTally {
  const tally = emptyNodeRunTally();
  const active = new Set<string>();
  for (const { nodeId, status } of nodeRuns) {
    tally.total += 1;
    if (Object.hasOwn(tally.counts, status)) tally.counts[status] += 1;
    if (ACTIVE_NODE_RUN_STATUSES.includes(status)) active.add(nodeId);
  }
  tally.activeNodeIds = [...active].sort().slice(0, MAX_ACTIVE_NODE_IDS);
  return tally;
}

/** The run's RunStateView at `now` (epoch ms), from its status, lease, pending gates and open human requests, and retry waits. */
export function runStateOf(run: RunViewRecord, now: number): RunDetail['runState'] {
  return deriveRunState({
    runId: run.id,
    status: run.status,
    leaseExpiresAt: run.leaseExpiresAt?.getTime() ?? null,
    heartbeatAt: run.heartbeatAt?.getTime() ?? null,
    pendingRequirements: pendingRequirementsOf(run).map((r) => ({ stepId: r.stepId, requestedAt: r.requestedAt.toISOString(), phase: r.phase, nodeId: r.nodeId })),
    retryWaits: (run.retryWaits ?? []).map((w) => ({ nodeId: w.nodeId, wakeAt: w.wakeAt.getTime() })),
    now,
  });
}

/** Who triggered the run (its trigger, retry, replay or rerun), as an {@link Actor}; `via` is `none` on runs stored before #18. */
export function triggeredByOf(run: Pick<RunRecord, 'triggeringUserId' | 'triggeringUsername' | 'triggeringVia'>): Actor {
  return { userId: run.triggeringUserId ?? null, username: run.triggeringUsername ?? null, via: run.triggeringVia ?? 'none' };
}

/** RunRecord + an excerpt of its node runs -> one row of the run list, with `runState` at `now` (epoch ms). */
export function toRunSummary(run: RunViewRecord, nodeRuns: NodeRunExcerpt, now: number): RunSummary {
  return {
    id: run.id,
    workflowDefinitionId: run.workflowDefinitionId,
    workflowVersion: run.workflowVersion,
    status: run.status,
    triggerSource: run.triggerSource,
    startedAt: run.startedAt.toISOString(),
    finishedAt: iso(run.finishedAt),
    parentRunId: run.parentRunId,
    scheduleId: run.scheduleId ?? null,
    scheduledAt: iso(run.scheduledAt ?? null),
    eventId: run.eventId ?? null,
    errorSummary: run.errorSummary,
    pausedAt: iso(run.pausedAt ?? null),
    pendingDirective: run.pendingDirective ?? null,
    cancelReason: run.cancelReason ?? null,
    cancelledBy: actorOfStored(run.cancelledBy),
    triggeredBy: triggeredByOf(run),
    timeoutSeconds: run.timeoutSeconds ?? null,
    deadlineAt: iso(run.deadlineAt ?? null),
    nodeRuns: nodeRuns.items,
    nodeRunCount: nodeRuns.total,
    nodeRunsUrl: nodeRuns.url,
    nodeStatusCounts: nodeRuns.statusCounts,
    activeNodeIds: nodeRuns.activeNodeIds,
    runState: runStateOf(run, now),
  };
}

/**
 * The requirements a run detail lists as pending, in the order raised: its undecided gates while
 * the run awaits approval, and its open human requests (phase `ask`, undecided) whatever its
 * status until it ends (issue #18 item 7: an agent's question is pending while the step that asked
 * it waits). An ended run lists none.
 */
export function pendingRequirementsOf(run: Pick<RunRecord, 'status' | 'pendingRequirements'>): RequirementRecord[] {
  if (isTerminalRunStatus(run.status)) return [];
  const gatesToo = run.status === 'awaiting_approval';
  return undecidedRequirements(run).filter((requirement) => gatesToo || requirement.phase === 'ask');
}

/** Undecided requirements, in the order they were raised. */
export function undecidedRequirements(run: Pick<RunRecord, 'pendingRequirements'>): RequirementRecord[] {
  return run.pendingRequirements.filter((r) => r.decidedAt === null);
}

/**
 * RunRecord + an excerpt of its node runs -> RunDetail, including `runState` derived at `now`
 * (epoch ms). `pendingRequirements` lists what {@link pendingRequirementsOf} gives: undecided gates
 * while the run awaits approval, open human requests until it ends (`pendingViews` when the caller built them first, to give them the budget first);
 * `requirements` every gate the run raised, with its decision. Large values are inlined within
 * `budget` (shared with the node runs).
 */
export function toRunDetail(run: RunViewRecord, nodeRuns: NodeRunExcerpt, now: number, budget: SnapshotBudget, pendingViews?: StepRequirementSummary[]): RunDetail {
  const summary = toRunSummary(run, nodeRuns, now);
  return Object.assign(summary, {
    initialInput: run.initialInput,
    finalOutput: run.finalOutput ?? null,
    definitionSnapshot: run.definitionSnapshot,
    resolvedDependencies: run.resolvedDependencies,
    pendingRequirements: pendingViews ?? pendingRequirementsOf(run).map((requirement) => toRequirementSummary(requirement, budget)),
    requirements: run.pendingRequirements.map((requirement) => toRequirementRecordView(requirement, budget)),
  });
}

/** Requirement values that may be large, and are shown within a response budget. */
const BUDGETED_REQUIREMENT_FIELDS = ['stepOutput', 'editedOutput', 'userInput'] as const;

/**
 * RequirementRecord -> StepRequirementSummary (internal bookkeeping left out, times as
 * ISO-8601). With a `budget`, a `stepOutput`, `editedOutput` or `userInput` it cannot afford is
 * null and its size is given under `omittedFields`.
 */
export function toRequirementSummary(requirement: RequirementRecord, budget?: SnapshotBudget): StepRequirementSummary {
  const {
    gateKey: _gateKey,
    nodeId: _nodeId,
    iterationPath: _iterationPath,
    phase: _phase,
    round: _round,
    resolution: _resolution,
    decidedBy: _decidedBy,
    requestedAt: _requestedAt,
    decidedAt: _decidedAt,
    timeoutSeconds: _timeoutSeconds,
    timeoutAt,
    decidedByUser: _decidedByUser,
    prompt: _prompt,
    context: _context,
    approvers,
    allowSelfApproval,
    ...summary
  } = requirement;
  const view: StepRequirementSummary = { ...summary, timeoutAt: iso(timeoutAt), approvers: approvers ?? null, allowSelfApproval: allowSelfApproval ?? true };
  if (!budget) return view;
  const omitted: Partial<Record<(typeof BUDGETED_REQUIREMENT_FIELDS)[number], number>> = {};
  for (const field of BUDGETED_REQUIREMENT_FIELDS) {
    const value = view[field];
    if (value === undefined || value === null) continue;
    const bytes = jsonByteLength(value);
    if (!budget.take(bytes)) {
      omitted[field] = bytes;
      view[field] = null;
    }
  }
  return Object.keys(omitted).length > 0 ? { ...view, omittedFields: omitted } : view;
}

/** RequirementRecord -> RequirementRecordView: the summary with where it was raised and its decision. */
export function toRequirementRecordView(requirement: RequirementRecord, budget?: SnapshotBudget): RequirementRecordView {
  return {
    ...toRequirementSummary(requirement, budget),
    nodeId: requirement.nodeId,
    iterationPath: requirement.iterationPath,
    round: requirement.round,
    requestedAt: requirement.requestedAt.toISOString(),
    resolution: requirement.resolution,
    decidedBy: requirement.decidedBy,
    decidedByUser: actorOfStored(requirement.decidedByUser),
    decidedAt: iso(requirement.decidedAt),
  };
}

/** The requirements of one node run (same node and iteration path), in the order raised. */
export function requirementsOfNodeRun(requirements: readonly RequirementRecord[], nodeRun: Pick<NodeRunRecord, 'nodeId' | 'iterationPath'>): RequirementRecord[] {
  return requirements.filter((requirement) => requirement.nodeId === nodeRun.nodeId && requirement.iterationPath === nodeRun.iterationPath);
}
