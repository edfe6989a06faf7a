/**
 * RunStateView derivation (spec run-state.md; DESIGN.md "Run state"): one pure function that every
 * read surface shares. It never invents a state: ambiguity gives `unknown`.
 */
import type { RunStatus } from './run-status.ts';

/** Every state a RunStateView can have (run-state.md, plus `pending` and `paused`). */
export const RUN_STATES = ['pending', 'running', 'paused', 'waiting-approval', 'waiting-timer', 'stale', 'orphaned', 'failed', 'cancelled', 'succeeded', 'unknown'] as const;

/** A run's derived state. */
export type RunState = (typeof RUN_STATES)[number];

/**
 * Why a run is waiting. `approval`: a person must act. For a gate, `nodeId` is the stepId of the
 * oldest undecided gate (as since the starting design); for a human request (an agent's `ask_human`,
 * issue #18 item 7) `nodeId` is the asking node's id and `requestId` the request's id (the stepId
 * to answer with /approve). `timer`: a step waits in retry backoff until `wakeAt`. Times ISO-8601.
 */
export type ReasonBlocked = { kind: 'approval'; nodeId: string; requestId?: string; requestedAt: string } | { kind: 'timer'; nodeId: string; wakeAt: string };
export type ReasonUnhealthy = { kind: 'engine-heartbeat-stale'; lastHeartbeatAt: string };

/** `{ runId, state, blocked?, unhealthy?, computedAt }`; timestamps ISO-8601. */
export interface RunStateView {
  runId: string;
  state: RunState;
  blocked?: ReasonBlocked;
  unhealthy?: ReasonUnhealthy;
  computedAt: string;
}

/** What the derivation reads off a run document. Times are epoch milliseconds. */
export interface RunStateInput {
  runId: string;
  status: RunStatus | string;
  /** When the owner's lease ends; null when no runner owns the run. */
  leaseExpiresAt: number | null;
  /** Last heartbeat of the owner; null when none. */
  heartbeatAt: number | null;
  /**
   * The requirements the run lists as pending (views.ts `pendingRequirementsOf`), oldest first:
   * gates (no `phase`, or any phase but `ask`) and open human requests (`phase: 'ask'`, with the
   * asking node's `nodeId`).
   */
  pendingRequirements: ReadonlyArray<PendingRequirementInput>;
  /** Steps waiting in retry backoff (`wakeAt` epoch ms). */
  retryWaits?: ReadonlyArray<{ nodeId: string; wakeAt: number }>;
  /** Now, epoch ms (injected so that the function is pure). */
  now: number;
}

/** One pending requirement as {@link deriveRunState} reads it; `requestedAt` ISO-8601. */
export interface PendingRequirementInput {
  stepId: string;
  requestedAt: string;
  /** `'ask'` for a human request; a gate's phase (or nothing) otherwise. */
  phase?: string;
  /** The node the requirement was raised on (read for human requests). */
  nodeId?: string;
}

/**
 * How long a run's lease may have expired before it counts as `orphaned` instead of `stale`, ms:
 * every live instance scans for such runs every 15 s (SWITCHYARD_RECOVERY_INTERVAL_MS) and claims
 * them, so a lease expired this long means no instance is taking the run over.
 */
export const ORPHANED_AFTER_MS = 60_000;

/**
 * Derives the RunStateView. An `awaiting_approval` run is `waiting-approval`, blocked by its oldest
 * undecided gate (by its oldest open human request when it has no gate pending). A `running` run
 * with a live lease and an open human request is `waiting-approval` too (the asking step executes
 * but waits on a person: issue #18 item 7), blocked by the oldest request
 * (`{ kind: 'approval', nodeId, requestId, requestedAt }`); this wins over a step in retry backoff,
 * because the backoff ends by itself and the request needs someone. Otherwise a live-lease run with
 * a step in retry backoff is `waiting-timer` (blocked by the earliest wake-up). One whose lease has expired is `stale` (its
 * work will be resumed by whichever instance claims it), `orphaned` once it expired more than
 * {@link ORPHANED_AFTER_MS} ago; one with no lease at all is `unknown` (it may be in the claim
 * window). Unknown status text gives `unknown`.
 */
export function deriveRunState(input: RunStateInput): RunStateView {
  const computedAt = new Date(input.now).toISOString();
  const base = { runId: input.runId, computedAt };
  switch (input.status) {
    case 'pending':
      return { ...base, state: 'pending' };
    case 'paused':
      return { ...base, state: 'paused' };
    case 'completed':
      return { ...base, state: 'succeeded' };
    case 'failed':
      return { ...base, state: 'failed' };
    case 'cancelled':
      return { ...base, state: 'cancelled' };
    case 'awaiting_approval': {
      const first = input.pendingRequirements.find((requirement) => requirement.phase !== 'ask') ?? input.pendingRequirements[0];
      return first ? { ...base, state: 'waiting-approval', blocked: approvalBlock(first) } : { ...base, state: 'waiting-approval' };
    }
    case 'running': {
      if (input.leaseExpiresAt === null) return { ...base, state: 'unknown' };
      if (input.leaseExpiresAt >= input.now) {
        const ask = input.pendingRequirements.find((requirement) => requirement.phase === 'ask');
        if (ask) return { ...base, state: 'waiting-approval', blocked: approvalBlock(ask) };
        const wait = [...(input.retryWaits ?? [])].sort((a, b) => a.wakeAt - b.wakeAt)[0];
        return wait ? { ...base, state: 'waiting-timer', blocked: { kind: 'timer', nodeId: wait.nodeId, wakeAt: new Date(wait.wakeAt).toISOString() } } : { ...base, state: 'running' };
      }
      const last = input.heartbeatAt ?? input.leaseExpiresAt;
      const state = input.now - input.leaseExpiresAt > ORPHANED_AFTER_MS ? 'orphaned' : 'stale';
      return { ...base, state, unhealthy: { kind: 'engine-heartbeat-stale', lastHeartbeatAt: new Date(last).toISOString() } };
    }
    default:
      return { ...base, state: 'unknown' };
  }
}

/** The `approval` reason of a pending requirement: a gate by its stepId, a human request by node and request id. */
function approvalBlock(requirement: PendingRequirementInput): ReasonBlocked {
  return requirement.phase === 'ask'
    ? { kind: 'approval', nodeId: requirement.nodeId ?? requirement.stepId, requestId: requirement.stepId, requestedAt: requirement.requestedAt }
    : { kind: 'approval', nodeId: requirement.stepId, requestedAt: requirement.requestedAt };
}
