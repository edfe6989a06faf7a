/**
 * The shapes of the run views the runs pages read (packages/domain/src/schemas/run.ts,
 * cross-workflow.ts), reduced to the fields the console uses.
 */

/** Who did something: `{ userId, username, via }`. */
export interface Actor {
  userId: string | null;
  username: string | null;
  via: string;
}

/** RunStateView: what the run is doing right now. */
export interface RunStateView {
  state: string;
  blocked?: { kind: 'approval'; nodeId: string; requestId?: string; requestedAt: string } | { kind: 'timer'; nodeId: string; wakeAt: string };
  unhealthy?: { kind: string; lastHeartbeatAt: string };
  computedAt: string;
}

/** One node execution (NodeRunDetail). */
export interface NodeRun {
  id: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  iterationPath: string;
  status: string;
  attempt: number;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** One row of a run list (RunSummary, with `workflowName` across workflows). */
export interface RunSummary {
  id: string;
  workflowDefinitionId: string;
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

/** A HITL gate on the record (RequirementRecordView). */
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

/** A workflow node as a definition snapshot holds it (only the tree fields). */
export interface SnapshotNode {
  id: string;
  name: string;
  nodeType: string;
  children?: SnapshotNode[];
  trueSteps?: SnapshotNode[];
  falseSteps?: SnapshotNode[];
  choices?: Array<{ name: string; steps: SnapshotNode[] }>;
}

/** GET /api/v1/runs/{id}: the run detail with its workflow name. */
export interface RunDetail extends RunSummary {
  initialInput: unknown;
  finalOutput: unknown;
  definitionSnapshot: { name: string; nodes: SnapshotNode[] };
  requirements: Requirement[];
}

/** A list's `pagination` block. */
export interface Pagination {
  page: number;
  perPage: number;
  total: number;
  totalPages: number;
}

/** The run statuses, in the order people think of them. */
export const RUN_STATUSES = ['pending', 'running', 'paused', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;

/** Whether a run in `status` has ended (completed, failed, cancelled). */
export function hasEnded(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** An actor as a person reads it: username, else user id, else '—'. */
export function actorName(actor: Actor | null | undefined): string {
  return actor?.username ?? actor?.userId ?? '—';
}
