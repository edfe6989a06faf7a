/**
 * Records -> API responses (spec endpoints 1-12). Times become ISO-8601 strings; internal run
 * fields (lease, triggering identity, directive, counters) are left out.
 */
import type { NodeRunRecord, RequirementRecord, RunRecord, WorkflowRecord } from './records.ts';
import { deriveRunState } from './run-state.ts';
import type { NodeRunDetail, RunDetail, RunSummary, StepRequirementSummary } from './schemas/run.ts';
import type { WorkflowDetail, WorkflowSummary } from './schemas/workflow.ts';
import { countNodes } from './validation.ts';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** WorkflowRecord -> WorkflowDetail. */
export function toWorkflowDetail(record: WorkflowRecord): WorkflowDetail {
  return {
    id: record.id,
    name: record.name,
    description: record.description,
    canvas: record.canvas,
    nodes: record.nodes,
    enabled: record.enabled,
    version: record.version,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** WorkflowRecord -> one row of the workflow list. */
export function toWorkflowSummary(record: WorkflowRecord): WorkflowSummary {
  return {
    id: record.id,
    name: record.name,
    description: record.description,
    numNodes: countNodes(record.nodes),
    enabled: record.enabled,
    version: record.version,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** NodeRunRecord -> NodeRunDetail. */
export function toNodeRunDetail(record: NodeRunRecord): NodeRunDetail {
  return {
    id: record.id,
    nodeId: record.nodeId,
    nodeName: record.nodeName,
    nodeType: record.nodeType,
    iterationPath: record.iterationPath,
    workflowRunId: record.workflowRunId,
    status: record.status,
    attempt: record.attempt,
    inputSnapshot: record.inputSnapshot ?? null,
    outputSnapshot: record.outputSnapshot ?? null,
    ...(record.originalOutputSnapshot !== undefined && record.originalOutputSnapshot !== null ? { originalOutputSnapshot: record.originalOutputSnapshot } : {}),
    error: record.error,
    startedAt: iso(record.startedAt),
    finishedAt: iso(record.finishedAt),
  };
}

/** RunRecord + its node runs -> one row of the run list. */
export function toRunSummary(run: RunRecord, nodeRuns: readonly NodeRunRecord[]): RunSummary {
  return {
    id: run.id,
    workflowDefinitionId: run.workflowDefinitionId,
    workflowVersion: run.workflowVersion,
    status: run.status,
    triggerSource: run.triggerSource,
    startedAt: run.startedAt.toISOString(),
    finishedAt: iso(run.finishedAt),
    parentRunId: run.parentRunId,
    errorSummary: run.errorSummary,
    nodeRuns: nodeRuns.map(toNodeRunDetail),
  };
}

/** Undecided requirements, in the order they were raised. */
export function undecidedRequirements(run: RunRecord): RequirementRecord[] {
  return run.pendingRequirements.filter((r) => r.decidedAt === null);
}

/**
 * RunRecord + node runs -> RunDetail, including `runState` derived at `now` (epoch ms).
 * `pendingRequirements` lists the undecided gates, and only while the run awaits approval.
 */
export function toRunDetail(run: RunRecord, nodeRuns: readonly NodeRunRecord[], now: number): RunDetail {
  const pending = run.status === 'awaiting_approval' ? undecidedRequirements(run) : [];
  return {
    ...toRunSummary(run, nodeRuns),
    initialInput: run.initialInput,
    finalOutput: run.finalOutput ?? null,
    definitionSnapshot: run.definitionSnapshot,
    resolvedDependencies: run.resolvedDependencies,
    pendingRequirements: pending.map(toRequirementSummary),
    runState: deriveRunState({
      runId: run.id,
      status: run.status,
      leaseExpiresAt: run.leaseExpiresAt?.getTime() ?? null,
      heartbeatAt: run.heartbeatAt?.getTime() ?? null,
      pendingRequirements: pending.map((r) => ({ stepId: r.stepId, requestedAt: r.requestedAt.toISOString() })),
      now,
    }) as RunDetail['runState'],
  };
}

/** RequirementRecord -> StepRequirementSummary (internal bookkeeping left out, times as ISO-8601). */
export function toRequirementSummary(requirement: RequirementRecord): StepRequirementSummary {
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
    ...summary
  } = requirement;
  return { ...summary, timeoutAt: iso(timeoutAt) };
}
