/**
 * Runs and approvals addressed without their workflow (issue "Run control" items 5 and 8):
 * `GET /api/v1/runs`, `GET /api/v1/runs/{run_id}`, `GET /api/v1/approvals`, and the child-run
 * list of a run. Items carry their workflow's name, so a client needs no second request.
 */
import Type, { type Static } from 'typebox';
import { PageQuery, Pagination, Timestamp, nullable, objectIdString } from './common.ts';
import { IncludeNodeRuns, RunDetail, RunStatusSchema, RunSummary, StepRequirementSummary } from './run.ts';

const workflowName = nullable(Type.String({ description: "The workflow's name (null when it was deleted meanwhile)" }));

/** Query of GET /api/v1/runs. */
export const AllRunsQuery = Type.Object({
  status: Type.Optional(RunStatusSchema),
  workflowId: Type.Optional(objectIdString('Only runs of this workflow')),
  triggerSource: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  includeNodeRuns: IncludeNodeRuns,
  ...PageQuery.properties,
});
export type AllRunsQuery = Static<typeof AllRunsQuery>;

/** A row of GET /api/v1/runs: a run summary with its workflow's name. */
export const RunSummaryWithWorkflow = Type.Object({ ...RunSummary.properties, workflowName });
export type RunSummaryWithWorkflow = Static<typeof RunSummaryWithWorkflow>;

/** Response of GET /api/v1/runs. */
export const AllRunsResponse = Type.Object({ runs: Type.Array(RunSummaryWithWorkflow), pagination: Pagination });
export type AllRunsResponse = Static<typeof AllRunsResponse>;

/** Response of GET /api/v1/runs/{run_id}: the run detail with its workflow's name. */
export const RunDetailWithWorkflow = Type.Object({ ...RunDetail.properties, workflowName });
export type RunDetailWithWorkflow = Static<typeof RunDetailWithWorkflow>;

/** Query of GET /api/v1/approvals. */
export const ApprovalListQuery = Type.Object({
  runId: Type.Optional(objectIdString('Only gates of this run')),
  workflowId: Type.Optional(objectIdString('Only gates of runs of this workflow')),
  nodeId: Type.Optional(Type.String({ minLength: 1, description: 'Only gates of this node' })),
  mine: Type.Optional(
    Type.Boolean({ description: 'true: only the gates the caller may decide right now (approvers, role and four-eyes applied: `canDecide` is true on every row)' }),
  ),
  ...PageQuery.properties,
});
export type ApprovalListQuery = Static<typeof ApprovalListQuery>;

/** One undecided gate, with where it is. */
export const PendingApproval = Type.Object({
  runId: Type.String(),
  workflowId: Type.String(),
  workflowName,
  runStatus: RunStatusSchema,
  nodeId: Type.String(),
  iterationPath: Type.String({ description: "Where in the run's loops the gate is ('' outside loops; see NodeRunDetail.iterationPath)" }),
  phase: Type.String({ description: 'pre (before the node runs), decision (condition/router), post (output review), iteration (loop iteration review), ask (a human request)' }),
  requestedAt: Timestamp,
  requirement: StepRequirementSummary,
  approvers: nullable(Type.Array(Type.String(), { description: "Who alone may decide it; null: the workflow's operators" })),
  canDecide: Type.Boolean({ description: 'Whether the caller may decide it now (approvers, its role on the workflow and four-eyes applied)' }),
});
export type PendingApproval = Static<typeof PendingApproval>;

/** Response of GET /api/v1/approvals. */
export const ApprovalListResponse = Type.Object({ approvals: Type.Array(PendingApproval), pagination: Pagination });
export type ApprovalListResponse = Static<typeof ApprovalListResponse>;
