/**
 * RunStateView derivation (spec run-state.md; DESIGN.md "Run state"): one pure function that every
 * read surface shares. It never invents a state: ambiguity gives `unknown`.
 */
import type { RunStatus } from './run-status.ts';

/** Every state a RunStateView can have (run-state.md, plus `pending` and `paused`). */
export const RUN_STATES = ['pending', 'running', 'paused', 'waiting-approval', 'waiting-timer', 'stale', 'orphaned', 'failed', 'cancelled', 'succeeded', 'unknown'] as const;

/** A run's derived state. */
export type RunState = (typeof RUN_STATES)[number];

export type ReasonBlocked = { kind: 'approval'; nodeId: string; requestedAt: string } | { kind: 'timer'; nodeId: string; wakeAt: string };
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
  /** Undecided requirements, oldest first. */
  pendingRequirements: ReadonlyArray<{ stepId: string; requestedAt: string }>;
  /** Steps waiting in retry backoff (`wakeAt` epoch ms). */
  retryWaits?: ReadonlyArray<{ nodeId: string; wakeAt: number }>;
  /** Now, epoch ms (injected so that the function is pure). */
  now: number;
}

/**
 * How long a run's lease may have expired before it counts as `orphaned` instead of `stale`, ms:
 * every live instance scans for such runs every 15 s (SWITCHYARD_RECOVERY_INTERVAL_MS) and claims
 * them, so a lease expired this long means no instance is taking the run over.
 */
export const ORPHANED_AFTER_MS = 60_000;

/**
 * Derives the RunStateView. A `running` run with a live lease and a step in retry backoff is
 * `waiting-timer` (blocked by the earliest wake-up). One whose lease has expired is `stale` (its
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
      const first = input.pendingRequirements[0];
      return first
        ? { ...base, state: 'waiting-approval', blocked: { kind: 'approval', nodeId: first.stepId, requestedAt: first.requestedAt } }
        : { ...base, state: 'waiting-approval' };
    }
    case 'running': {
      if (input.leaseExpiresAt === null) return { ...base, state: 'unknown' };
      if (input.leaseExpiresAt >= input.now) {
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
