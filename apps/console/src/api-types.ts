/**
 * The shapes of the API answers the console reads, reduced to the fields it uses
 * (docs/reference/http-api.md; the schemas are packages/domain/src/schemas/*.ts). One place for
 * every page: a field the API renames is changed here once.
 */

/** Who did something: `{ userId, username, via }` (decisions, triggers, cancels). */
export interface Actor {
  userId: string | null;
  username: string | null;
  via: string;
}

/** The `pagination` block of every list. */
export interface Pagination {
  page: number;
  perPage: number;
  total: number;
  totalPages: number;
}

/** RunStateView: what the run is doing right now. */
export interface RunStateView {
  state: string;
  blocked?: { kind: 'approval'; nodeId: string; requestId?: string; requestedAt: string } | { kind: 'timer'; nodeId: string; wakeAt: string };
  unhealthy?: { kind: string; lastHeartbeatAt: string };
  computedAt: string;
}

/** A node of a workflow definition (or of a run's definition snapshot), complete: lists are lists. */
export interface WorkflowNode {
  id: string;
  name: string;
  nodeType: 'step' | 'parallel' | 'loop' | 'condition' | 'router';
  position: { x: number; y: number };
  executorKey: string | null;
  children: WorkflowNode[];
  trueSteps: WorkflowNode[];
  falseSteps: WorkflowNode[];
  choices: Array<{ name: string; steps: WorkflowNode[] }>;
  conditionCel: string | null;
  loopConfig: { maxIterations: number; endConditionCel: string | null } | null;
  humanReview: Record<string, unknown> | null;
}

/** One node execution: one node at one iteration path (NodeRunDetail). */
export interface NodeRun {
  id: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  iterationPath: string;
  status: string;
  attempt: number;
  inputSnapshot?: unknown;
  outputSnapshot?: unknown;
  /** Snapshots left out of a list (null there), with their sizes in bytes of JSON. */
  omittedSnapshots?: { inputSnapshot?: number; outputSnapshot?: number; originalOutputSnapshot?: number } | null;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A HITL gate (or human request) on the record, decided or not (RequirementRecordView). */
export interface Requirement {
  stepId: string;
  stepName?: string;
  nodeId: string;
  iterationPath: string;
  round: number;
  requestedAt: string;
  requiresConfirmation: boolean;
  requiresUserInput: boolean;
  requiresOutputReview: boolean;
  requiresRouteSelection: boolean;
  resolution: string | null;
  decidedBy: string | null;
  decidedByUser: Actor | null;
  decidedAt: string | null;
}

/** One row of a run list (RunSummary; `workflowName` in lists across workflows). */
export interface RunSummary {
  id: string;
  workflowDefinitionId: string;
  workflowVersion: number;
  workflowName?: string | null;
  status: string;
  triggerSource: string;
  startedAt: string;
  finishedAt: string | null;
  parentRunId: string | null;
  errorSummary: string | null;
  pendingDirective: string | null;
  cancelReason: string | null;
  cancelledBy: Actor | null;
  triggeredBy: Actor;
  nodeRuns: NodeRun[];
  nodeRunCount: number;
  runState: RunStateView;
}

/** GET …/runs/{id} (or /api/v1/runs/{id}): the run with its input, output, definition snapshot and gates. */
export interface RunDetail extends RunSummary {
  initialInput: unknown;
  finalOutput: unknown;
  definitionSnapshot: { name: string; nodes: WorkflowNode[] };
  requirements: Requirement[];
}
