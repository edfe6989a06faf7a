/**
 * Run and node-run status machines (spec "WorkflowRunStatus", "NodeRunStatus"; DESIGN.md
 * "Run lifecycle"). Every run transition is a compare-and-set on the run document whose filter
 * is built from {@link RUN_TRANSITIONS}.
 */

export const RUN_STATUSES = ['pending', 'running', 'paused', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const NODE_RUN_STATUSES = ['pending', 'running', 'awaiting_approval', 'completed', 'failed', 'skipped', 'cancelled'] as const;
export type NodeRunStatus = (typeof NODE_RUN_STATUSES)[number];

/** Run statuses after which nothing changes. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

/** Node-run statuses after which the node run is reused as is by re-traversal. */
export const SETTLED_NODE_RUN_STATUSES: readonly NodeRunStatus[] = ['completed', 'skipped'];

/** Node-run statuses of a node run that has not ended (closed as `cancelled` when its run ends otherwise than completed). */
export const OPEN_NODE_RUN_STATUSES: readonly NodeRunStatus[] = ['pending', 'running', 'awaiting_approval'];

/** Node-run statuses of a node that is executing or held at a HITL gate right now (a run's `activeNodeIds`). */
export const ACTIVE_NODE_RUN_STATUSES: readonly NodeRunStatus[] = ['running', 'awaiting_approval'];

/**
 * Run statuses an instance may claim without anything else to check (queued, or running without a
 * live owner); a parked run (`awaiting_approval`) is claimable only with a decision not yet consumed.
 */
export const CLAIMABLE_RUN_STATUSES: readonly RunStatus[] = ['pending', 'running'];

/** Run statuses in which a HITL requirement may be decided (a run may run on while one gate waits; a paused run keeps its decisions). */
export const DECIDABLE_RUN_STATUSES: readonly RunStatus[] = ['running', 'awaiting_approval', 'paused'];

/**
 * Run statuses in which no runner holds the run (nobody executes it), so that a directive is
 * applied to the document directly: queued, paused, or parked at its gates.
 */
export const UNOWNED_RUN_STATUSES: readonly RunStatus[] = ['pending', 'paused', 'awaiting_approval'];

/** For each target status, the statuses a run may move to it from. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  pending: ['paused'],
  running: ['pending', 'running', 'awaiting_approval'],
  paused: ['running', 'pending', 'awaiting_approval'],
  awaiting_approval: ['running'],
  completed: ['running'],
  failed: ['pending', 'running', 'paused', 'awaiting_approval'],
  cancelled: ['pending', 'running', 'paused', 'awaiting_approval'],
};

/** True when the run can never change again. */
export function isTerminalRunStatus(status: RunStatus): boolean {
  return TERMINAL_RUN_STATUSES.includes(status);
}
