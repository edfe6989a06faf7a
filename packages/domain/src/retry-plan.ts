/**
 * What a retry of an ended run carries over from it (issue "Run control" item 2; DESIGN.md
 * "memoized re-traversal"). A full retry (no body) reuses every node run that completed and
 * replays the human decisions the source recorded, so that re-traversal walks the same path:
 * an iteration that was rejected and re-run (`3r1`), a route a person picked, a form's values —
 * and completed outputs on that path are not shown to anyone again. Decisions that ended the
 * source are not replayed (a gate that cancelled the run is asked again), nor gates closed only
 * because the run ended (`run_ended`).
 */
import type { NodeRunRecord, RequirementRecord } from './records.ts';

/** The node runs of the source whose outputs a full retry reuses: every completed one. */
export function nodeRunsToReuse(source: readonly NodeRunRecord[]): NodeRunRecord[] {
  return source.filter((nodeRun) => nodeRun.status === 'completed');
}

/** The decided requirements of the source a full retry replays (see the module comment). */
export function decisionsToReplay(source: readonly RequirementRecord[]): RequirementRecord[] {
  return source.filter((requirement) => requirement.decidedAt !== null && requirement.decidedBy !== 'run_ended' && !cancelledTheRun(requirement));
}

/** True when the decision cancelled the run: a rejection under `onReject: cancel`, or a `cancel` (timeout). */
function cancelledTheRun(requirement: RequirementRecord): boolean {
  return requirement.resolution === 'cancel' || (requirement.resolution === 'reject' && requirement.onReject === 'cancel');
}
