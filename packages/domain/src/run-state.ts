/**
 * RunStateView derivation (spec run-state.md; DESIGN.md "Run state"): one pure function that every
 * read surface shares. It never invents a state: ambiguity gives `unknown`.
 */
import type { RunStatus } from './run-status.ts';

/** Every state a RunStateView can have (run-state.md, plus `pending` and `paused`). */
export const RUN_STATES = ['pending', 'running', 'paused', 'waiting-approval', 'stale', 'failed', 'cancelled', 'succeeded', 'unknown'] as const;

/** A run's derived state. */
export type RunState = (typeof RUN_STATES)[number];

export type ReasonBlocked = { kind: 'approval'; nodeId: string; requestedAt: string };
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
  /** Now, epoch ms (injected so that the function is pure). */
  now: number;
}

/**
 * Derives the RunStateView. A `running` run whose lease has expired is `stale` (its work will be
 * resumed by whichever instance claims it); one with no lease at all is `unknown` (it may be in
 * the claim window). Unknown status text gives `unknown`.
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
      if (input.leaseExpiresAt >= input.now) return { ...base, state: 'running' };
      const last = input.heartbeatAt ?? input.leaseExpiresAt;
      return { ...base, state: 'stale', unhealthy: { kind: 'engine-heartbeat-stale', lastHeartbeatAt: new Date(last).toISOString() } };
    }
    default:
      return { ...base, state: 'unknown' };
  }
}
