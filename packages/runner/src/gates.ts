/**
 * HITL gates inside a traversal (DESIGN.md "HITL v2"; STYLE.md §4.2 signal-plus-condition).
 *
 * A gate is memoized like a node run: the first traversal that reaches it raises a requirement
 * on the run and stops that branch (GateBlocked); the run parks once every branch has settled or
 * blocked. A human decision (or the timeout sweeper) decides the requirement; the next traversal
 * finds the decision and acts on it. The runner holds nothing while it waits.
 */
import { buildRequirement, gateKeyOf, type GateRequest, type RequirementRecord } from '@switchyard/domain';
import type { Clock } from './clock.ts';
import type { RunLedger } from './ledger.ts';

/** A branch reached an undecided gate: it stops here until the requirement is decided. */
export class GateBlocked extends Error {
  override readonly name = 'GateBlocked';
  constructor(readonly gateKey: string) {
    super(`waiting for a decision at gate ${gateKey}`);
  }
}

/** A gate decided that the whole run stops (onReject / onTimeout `cancel`). */
export class RunCancelled extends Error {
  override readonly name = 'RunCancelled';
}

/** What the traversal does with a decided requirement. */
export type GateAction = 'proceed' | 'skip' | 'cancel' | 'retry' | 'else_branch';

/** Maps a decided requirement to its action: approvals proceed, rejections follow `onReject`, timeouts their outcome. */
export function actionOf(requirement: RequirementRecord): GateAction {
  switch (requirement.resolution) {
    case 'reject':
      return requirement.onReject;
    case 'skip':
    case 'cancel':
      return requirement.resolution;
    default:
      return 'proceed';
  }
}

/** True when a rejection in `round` may be retried: fewer than `maxRetries` rounds were retried so far. */
export function retryAllowed(requirement: RequirementRecord, round: number): boolean {
  return round + 1 <= (requirement.maxRetries ?? 0);
}

/** Human-readable reason for a gate that stopped a node or the run. */
export function gateOutcomeText(requirement: RequirementRecord): string {
  const who = requirement.decidedBy === 'timeout' ? 'timed out' : 'was rejected';
  const feedback = requirement.rejectionFeedback ? `: ${requirement.rejectionFeedback}` : '';
  return `step '${requirement.stepName}' ${who}${feedback}`;
}

/**
 * Returns the decided requirement of this gate. When it is undecided, raises it if new, calls
 * `onBlocked` (e.g. to mark the node run awaiting approval) and throws GateBlocked.
 */
export async function passGate(
  ledger: RunLedger,
  clock: Clock,
  request: Omit<GateRequest, 'now'>,
  onBlocked: () => Promise<void>,
): Promise<RequirementRecord> {
  const key = gateKeyOf(request.node.id, request.iterationPath, request.phase, request.round, request.iteration);
  const existing = ledger.requirement(key);
  if (existing?.decidedAt) return existing;
  // The node run is marked first: a crash between the two writes then leaves a held node run
  // without its requirement (raised again on the next traversal), never the other way round.
  await onBlocked();
  if (!existing) await ledger.raise(buildRequirement({ ...request, now: clock.now() }));
  throw new GateBlocked(key);
}
