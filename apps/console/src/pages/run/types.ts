/**
 * What the runs pages share: the API's shapes (../../api-types.ts) and how a run's status and
 * actors read.
 */
import type { Actor } from '../../api-types.ts';

export type { Actor, NodeRun, Pagination, Requirement, RunDetail, RunStateView, RunSummary, WorkflowNode as SnapshotNode } from '../../api-types.ts';

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
