/**
 * What several tools share: REST paths, finding a workflow by id or name, reading a run by id
 * alone, and the run summary every run-returning tool shows (with the API's `runState`).
 */
import * as z from 'zod/v4';
import type { ApiClient } from '../api-client.ts';
import { ToolError } from '../envelope.ts';

export const WORKFLOWS = '/api/v1/workflows';
export const RUNS = '/api/v1/runs';
export const APPROVALS = '/api/v1/approvals';

/** A 24-hex id argument. */
export const id = (what: string) => z.string().regex(/^[0-9a-f]{24}$/i, `${what} must be a 24-character hex id`).describe(what);

/** Path of a run under its workflow. */
export const runPath = (workflowId: string, runId: string, suffix = '') => `${WORKFLOWS}/${workflowId}/runs/${runId}${suffix}`;

/** A REST run row or detail, loosely typed (the bridge relies only on the fields it names). */
export interface RestRun {
  id: string;
  workflowDefinitionId: string;
  workflowName?: string | null;
  status: string;
  triggerSource: string;
  startedAt: string;
  finishedAt: string | null;
  parentRunId: string | null;
  errorSummary: string | null;
  pendingDirective?: string | null;
  runState: { state: string; blocked?: Record<string, unknown>; unhealthy?: Record<string, unknown>; computedAt: string };
  nodeRuns: Array<{ id: string; nodeId: string; nodeName: string; nodeType: string; status: string; iterationPath: string; attempt: number; startedAt: string | null; finishedAt: string | null; error: string | null }>;
  nodeRunCount: number;
  nodeStatusCounts?: Record<string, number>;
  activeNodeIds?: string[];
  pendingRequirements?: Array<{ stepId: string }>;
  requirements?: Array<Record<string, unknown>>;
  finalOutput?: unknown;
  initialInput?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The run state as tools show it. */
export const RunStateSchema = z.object({
  state: z.string().describe('running | paused | waiting-approval | waiting-timer | pending | stale | orphaned | succeeded | failed | cancelled | unknown'),
  blocked: z.record(z.string(), z.unknown()).optional(),
  unhealthy: z.record(z.string(), z.unknown()).optional(),
  computedAt: z.string(),
});

/** A run as list-like tools show it. */
export const RunSummarySchema = z.object({
  runId: z.string(),
  workflowId: z.string(),
  workflowName: z.string().nullable(),
  status: z.string(),
  runState: RunStateSchema,
  triggerSource: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  parentRunId: z.string().nullable(),
  errorSummary: z.string().nullable(),
  activeNodeIds: z.array(z.string()).describe('Nodes executing or waiting at a gate right now'),
  pendingApprovalCount: z.number().int(),
  nodeStatusCounts: z.record(z.string(), z.number().int()).describe('Node runs by status (all of them)'),
  nodeRunCount: z.number().int(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** REST run -> RunSummary. Counts come from the API's `nodeStatusCounts` when present, else from the node runs shown. */
export function toRunSummary(run: RestRun, workflowName: string | null = run.workflowName ?? null): RunSummary {
  const counts = run.nodeStatusCounts ?? countByStatus(run.nodeRuns);
  const active = run.activeNodeIds ?? run.nodeRuns.filter((n) => n.status === 'running' || n.status === 'awaiting_approval').map((n) => n.nodeId);
  return {
    runId: run.id,
    workflowId: run.workflowDefinitionId,
    workflowName,
    status: run.status,
    runState: run.runState,
    triggerSource: run.triggerSource,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    parentRunId: run.parentRunId,
    errorSummary: run.errorSummary,
    activeNodeIds: [...new Set(active)],
    pendingApprovalCount: counts['awaiting_approval'] ?? 0,
    nodeStatusCounts: counts,
    nodeRunCount: run.nodeRunCount,
  };
}

function countByStatus(nodeRuns: RestRun['nodeRuns']): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const nodeRun of nodeRuns) counts[nodeRun.status] = (counts[nodeRun.status] ?? 0) + 1;
  return counts;
}

/** The run by id alone (`GET /api/v1/runs/{id}`). */
export function getRun(api: ApiClient, runId: string): Promise<RestRun> {
  return api.get<RestRun>(`${RUNS}/${runId}`);
}

/** A workflow list row. */
export interface RestWorkflowSummary {
  id: string;
  name: string;
  description: string | null;
  enabled: boolean;
  version: number;
  numNodes: number;
  tags?: string[];
  runningCount?: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * The workflow named exactly `name` (the API's search is a substring match: the exact one is
 * picked from its results), or null.
 */
export async function findWorkflowByName(api: ApiClient, name: string): Promise<RestWorkflowSummary | null> {
  for (let page = 1; page <= 20; page++) {
    const found = await api.get<{ workflows: RestWorkflowSummary[]; pagination: { totalPages: number } }>(WORKFLOWS, { query: name, page, perPage: 100 });
    const exact = found.workflows.find((workflow) => workflow.name === name);
    if (exact) return exact;
    if (page >= found.pagination.totalPages) return null;
  }
  return null;
}

/** The id of the workflow given by `workflowId` or `workflowName` (exactly one of them). */
export async function resolveWorkflowId(api: ApiClient, args: { workflowId?: string; workflowName?: string }): Promise<string> {
  if (args.workflowId && args.workflowName) throw new ToolError('INVALID_INPUT', 'Give workflowId or workflowName, not both', { fields: ['workflowId', 'workflowName'] });
  if (args.workflowId) return args.workflowId;
  if (!args.workflowName) throw new ToolError('INVALID_INPUT', 'workflowId or workflowName is required', { fields: ['workflowId', 'workflowName'] });
  const workflow = await findWorkflowByName(api, args.workflowName);
  if (!workflow) throw new ToolError('WORKFLOW_NOT_FOUND', `No workflow is named '${args.workflowName}'`, { workflowName: args.workflowName });
  return workflow.id;
}

/** Terminal run statuses. */
export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'];
