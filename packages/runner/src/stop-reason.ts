/**
 * Why an execution of a run stops before the workflow reached an outcome, and what becomes of the
 * run then: one type, mapped to an effect in one place ({@link stopEffect}), for every way an
 * execution can be stopped (DESIGN.md "Ownership"; issue "Run control", Shape).
 *
 * Two strengths: a **pause** (and a **drain** at graceful shutdown) only stops new nodes from starting (executing ones finish and are
 * recorded: `boundary` signal); every other reason also aborts in-flight executor calls and retry
 * backoff waits at once (`signal`).
 */
import { setMaxListeners } from 'node:events';
import { actorOfStored, cancelSummary, timeoutSummary, type Actor, type RunRecord } from '@switchyard/domain';
import type { RunOutcome } from '@switchyard/store';

export type StopReason =
  /** The process shuts down: the lease is released, another claim continues the run. */
  | { kind: 'shutdown' }
  /**
   * The process shuts down gracefully: no new node starts (executing ones finish within the
   * shutdown grace, like a pause), then the lease is released as for `shutdown`.
   */
  | { kind: 'drain' }
  /** The lease passed (or may have passed) to another instance: stop writing, leave the run as is. */
  | { kind: 'lease_lost'; detail: string }
  /** The run (or its workflow) was deleted: nothing is left to write to. */
  | { kind: 'deleted'; detail: string }
  /** A pause directive: no new node starts; the run becomes `paused` once executing nodes finished. */
  | { kind: 'pause' }
  /** A cancel directive: the run ends `cancelled`. */
  | { kind: 'cancel'; reason: string | null; by: Actor | null }
  /** The run's `timeoutSeconds` passed: the run ends `failed`. */
  | { kind: 'run_timeout'; timeoutSeconds: number | null };

/** What the engine does with a run whose execution stopped for a reason. */
export type StopEffect =
  | { kind: 'release' }
  | { kind: 'abandon' }
  | { kind: 'pause' }
  | { kind: 'end'; outcome: Exclude<RunOutcome, { status: 'completed' }> };

/** The thrown form of a stop: the abort reason of the execution's signals. */
export class ExecutionStopped extends Error {
  override readonly name = 'ExecutionStopped';
  constructor(readonly reason: StopReason) {
    super(`execution stopped: ${reason.kind}`);
  }
}

/** True when the reason aborts in-flight work, not just the start of new nodes. */
export function abortsInFlight(reason: StopReason): boolean {
  return reason.kind !== 'pause' && reason.kind !== 'drain';
}

/** The one mapping from a stop reason to its effect on the run. */
export function stopEffect(reason: StopReason): StopEffect {
  switch (reason.kind) {
    case 'shutdown':
    case 'drain':
      return { kind: 'release' };
    case 'lease_lost':
    case 'deleted':
      return { kind: 'abandon' };
    case 'pause':
      return { kind: 'pause' };
    case 'cancel':
      return { kind: 'end', outcome: { status: 'cancelled', errorSummary: cancelSummary(reason.by, reason.reason) } };
    case 'run_timeout':
      return { kind: 'end', outcome: { status: 'failed', errorSummary: timeoutSummary(reason.timeoutSeconds) } };
  }
}

/** The stop a run's pending directive asks for, or null when none is pending. */
export function directiveStop(run: Pick<RunRecord, 'pendingDirective' | 'cancelReason' | 'cancelledBy' | 'timeoutSeconds'>): StopReason | null {
  switch (run.pendingDirective) {
    case 'pause':
      return { kind: 'pause' };
    case 'cancel':
      return { kind: 'cancel', reason: run.cancelReason ?? null, by: actorOfStored(run.cancelledBy) };
    case 'timeout':
      return { kind: 'run_timeout', timeoutSeconds: run.timeoutSeconds ?? null };
    default:
      return null;
  }
}

/**
 * The stop controls of one execution: `boundary` aborts at any stop (checked before a node
 * starts and by retry backoff waits), `signal` only at stops that abort in-flight work (handed to
 * executor calls). The first reason that aborts in-flight work wins over a pause and over any
 * later reason.
 */
export class ExecutionControl {
  private readonly hard = new AbortController();
  private readonly soft = new AbortController();
  private current: StopReason | null = null;

  constructor() {
    // Every executor call in flight listens to `signal` (a parallel node has many at once).
    setMaxListeners(0, this.hard.signal);
  }

  /** Aborts in-flight executor calls. */
  get signal(): AbortSignal {
    return this.hard.signal;
  }

  /** Aborts at any stop: no node starts after it fired. */
  get boundary(): AbortSignal {
    return this.soft.signal;
  }

  /** Why the execution stops, or null while it runs. */
  get reason(): StopReason | null {
    return this.current;
  }

  /** Stops the execution for `reason` (see the class comment for which reason wins). */
  stop(reason: StopReason): void {
    if (this.current && (abortsInFlight(this.current) || !abortsInFlight(reason))) return;
    this.current = reason;
    const error = new ExecutionStopped(reason);
    if (abortsInFlight(reason)) this.hard.abort(error);
    if (!this.soft.signal.aborted) this.soft.abort(error);
  }
}
