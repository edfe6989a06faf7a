/**
 * Run ownership and lifecycle (DESIGN.md "Ownership"): claims a run with a compare-and-set on
 * (status, lease), renews the lease with a heartbeat while the interpreter walks the tree, ends
 * the run with a CAS that requires the lease, and releases the lease on shutdown. Runs whose owner
 * died (lease expired) are claimed again by the recovery loop of any instance and continue by
 * re-traversal: settled node runs are reused, the rest executes.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { RunRecord } from '@switchyard/domain';
import { isDocumentTooLarge, type Repositories, type RunOutcome } from '@switchyard/store';
import type { CelEngine } from './cel/index.ts';
import { systemClock, type Clock } from './clock.ts';
import type { ExecutorRegistry } from './executors/types.ts';
import { GateBlocked, RunCancelled } from './gates.ts';
import { Interpreter, NodeFailedError } from './interpreter.ts';
import { Lease } from './lease.ts';
import { LoopClock, type LoopStatus } from './loop-status.ts';
import { LeaseExpired, RunLedger } from './ledger.ts';
import type { Logger } from './logger.ts';
import type { DownstreamTokenMinter } from './downstream-token.ts';
import { ExecutionControl, directiveStop, stopEffect, type StopReason } from './stop-reason.ts';
import { endExecutionSpan, startExecutionSpan, withContext } from './tracing.ts';

/** Tunables of the engine. Milliseconds throughout. */
export interface RunEngineOptions {
  repos: Repositories;
  executors: ExecutorRegistry;
  cel: CelEngine;
  logger: Logger;
  clock?: Clock;
  /** How long a claim lasts without a heartbeat (default 30,000 ms). */
  leaseMs?: number;
  /** Heartbeat period (default leaseMs / 3). */
  heartbeatMs?: number;
  /** Max children of one parallel node in flight (default 8). */
  parallelLimit?: number;
  /** Largest step output, bytes of JSON (default 1 MiB; `SWITCHYARD_MAX_OUTPUT_BYTES`). */
  maxOutputBytes?: number;
  /** Mints a short-lived token per executor call from the run's triggering identity (default none). */
  downstreamTokens?: DownstreamTokenMinter;
  /** Rewrites executor failure text before the API shows it (public-text.ts `publicErrorText`; default unchanged). */
  publicText?: (text: string) => string;
  /** Period of the orphaned-run recovery scan (default 15,000 ms). */
  recoveryIntervalMs?: number;
  /** Recovery claims no more runs once this instance executes this many (default 256). */
  maxActiveRuns?: number;
  /** This instance's owner id; default `host:pid:random`. */
  owner?: string;
  /** Jitter source for retry backoff (tests make it deterministic). */
  random?: () => number;
  /** Test seams. `beforePark` runs after a traversal found only blocked branches, before the park CAS. */
  hooks?: { beforePark?: (runId: string) => Promise<void> };
}

/** Executions in a row that may end on an internal error before the run is failed. */
export const MAX_INTERNAL_FAILURES = 5;

/**
 * Claims in a row that may end without progress (no node run ended, no park: the execution lost
 * its lease, or the process died, e.g. on an expression or step that blocks or crashes it)
 * before the next claim fails the run instead of executing it again (poison-run protection).
 * Recovery also backs off between such claims (`recoveryBackoffMs` of the store).
 */
export const MAX_CLAIMS_WITHOUT_PROGRESS = 5;

/** Executes runs in the background of this process. */
export class RunEngine {
  readonly owner: string;
  private readonly clock: Clock;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly parallelLimit: number;
  private readonly recoveryIntervalMs: number;
  /** Runs this instance executes; `rerun` asks for one more claim once the current execution ends. */
  private readonly active = new Map<string, { control: ExecutionControl; done: Promise<void>; rerun: boolean }>();
  private stopRecovery: (() => void) | null = null;
  private readonly recoveryLoop: LoopClock;
  private closed = false;

  constructor(private readonly options: RunEngineOptions) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.clock = options.clock ?? systemClock;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.floor(this.leaseMs / 3);
    this.parallelLimit = options.parallelLimit ?? 8;
    this.recoveryIntervalMs = options.recoveryIntervalMs ?? 15_000;
    this.recoveryLoop = new LoopClock(() => this.clock.now(), this.recoveryIntervalMs);
  }

  /**
   * Starts executing `runId` in the background. When this instance already executes it, asks for
   * one more claim after the current execution ends: a wake-up (e.g. a decision) that arrives
   * after that execution parked the run, but before it let go, is not lost. The returned promise
   * (which never rejects) settles when this instance stops working on the run: finished, parked,
   * claimed elsewhere or shut down. Callers may ignore it.
   */
  start(runId: string): Promise<void> {
    const current = this.active.get(runId);
    if (current) {
      current.rerun = true;
      return current.done;
    }
    if (this.closed) return Promise.resolve();
    const control = new ExecutionControl();
    const entry = { control, done: Promise.resolve(), rerun: false };
    entry.done = this.execute(runId, control, entry)
      .catch((error: unknown) => this.options.logger.error({ err: error, runId }, 'run execution crashed'))
      .then(() => {
        this.active.delete(runId);
        if (entry.rerun && !this.closed) return this.start(runId);
      });
    this.active.set(runId, entry);
    return entry.done;
  }

  /** Claims every run that has no live owner (crashed instances, restarts). Returns how many were started. */
  async recoverOrphans(): Promise<number> {
    const room = (this.options.maxActiveRuns ?? 256) - this.active.size;
    if (room <= 0) return 0;
    const ids = await this.options.repos.runs.listClaimable(this.clock.now(), Math.min(100, room));
    const fresh = ids.filter((id) => !this.active.has(id));
    for (const id of fresh) this.start(id);
    if (fresh.length > 0) this.options.logger.info({ count: fresh.length }, 'recovering runs without a live owner');
    return fresh.length;
  }

  /** Runs {@link recoverOrphans} now and then every `recoveryIntervalMs`. */
  startRecovery(): void {
    if (this.stopRecovery || this.closed) return;
    const tick = () =>
      void this.recoverOrphans().then(
        () => this.recoveryLoop.ran(),
        (error: unknown) => this.options.logger.error({ err: error }, 'run recovery scan failed'),
      );
    this.recoveryLoop.started();
    tick();
    this.stopRecovery = this.clock.every(this.recoveryIntervalMs, tick);
  }

  /**
   * The recovery loop's state (loop-status.ts): running between {@link startRecovery} and
   * {@link close}; `lastRunAt` is when the last scan finished without an error (engine clock).
   */
  recoveryStatus(): LoopStatus {
    return this.recoveryLoop.status;
  }

  /**
   * Stops executing `runId` in this instance at once (in-flight executor calls are aborted) and
   * resolves when it has stopped. The run document is left as it is; used when a run is deleted.
   */
  async abort(runId: string, reason: string): Promise<void> {
    const current = this.active.get(runId);
    if (!current) return;
    current.control.stop({ kind: 'deleted', detail: reason });
    await current.done;
  }

  /**
   * Signals a directive stored on the run (`pending_directive`) to its execution in this
   * instance, if any, so that it is honoured at once instead of at the next heartbeat: a pause at
   * the next node boundary, a cancel or timeout by aborting in-flight calls. A withdrawn pause
   * (resume before it was honoured) asks for one more claim once the execution has let go.
   * Returns a promise that settles when this instance stops working on the run (never rejects),
   * or null when this instance does not execute it.
   */
  signal(runId: string, reason: StopReason | 'resume'): Promise<void> | null {
    const current = this.active.get(runId);
    if (!current) return null;
    if (reason === 'resume') current.rerun = true;
    else current.control.stop(reason);
    return current.done;
  }

  /** Resolves when no run is executing in this instance (tests, graceful shutdown). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((a) => a.done));
  }

  /** Number of runs executing in this instance right now. */
  get activeCount(): number {
    return this.active.size;
  }

  /**
   * Stops: no new runs, in-flight executor calls are aborted and the leases released so that
   * another instance (or the next start) continues the runs by re-traversal.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stopRecovery?.();
    this.recoveryLoop.stopped();
    for (const { control } of this.active.values()) control.stop({ kind: 'shutdown' });
    await this.idle();
  }

  private async execute(runId: string, control: ExecutionControl, entry: { rerun: boolean }): Promise<void> {
    const { repos, logger } = this.options;
    const claimedAt = this.clock.now();
    const claimed = await repos.runs.claim(runId, this.owner, this.leaseMs, claimedAt);
    if (!claimed) return;
    const { takenOverFrom, ...claimedRun } = claimed;
    let run: RunRecord = claimedRun;
    logger.info({ runId, workflowId: run.workflowDefinitionId, claimsSinceProgress: run.claimsSinceProgress }, 'run claimed');
    if ((run.claimsSinceProgress ?? 0) > MAX_CLAIMS_WITHOUT_PROGRESS) return await this.failPoisonRun(run);
    const lease = new Lease({
      repos,
      clock: this.clock,
      logger,
      runId,
      owner: this.owner,
      leaseMs: this.leaseMs,
      heartbeatMs: this.heartbeatMs,
      claimedAt,
      onStop: (reason) => control.stop(reason),
    });
    lease.start();
    let ledger = new RunLedger(repos, run, this.clock, [], this.owner, lease);
    // One span per execution (tracing.ts); the first traced execution of a run without a trigger context stores its own for the next ones.
    const execution = startExecutionSpan(run);
    let ended = 'stopped';
    let failure: unknown;
    if (execution.toStore) {
      const { traceParent, traceState } = execution.toStore;
      await repos.runs.setTraceContext(runId, this.owner, traceParent, traceState).catch((error: unknown) => logger.warn({ err: error, runId }, 'could not store the run trace context'));
    }
    try {
      for (let pass = 1; ; pass++) {
        // A directive stored before this claim (sent while no runner held the run, or to a runner that died) or during the last traversal.
        const pending = directiveStop(run);
        if (pending) control.stop(pending);
        if (control.reason) return await this.settleStop(ledger, control.reason, entry);
        const history = await repos.nodeRuns.listByRun(runId);
        ledger = new RunLedger(repos, run, this.clock, history, this.owner, lease);
        // `takenOverFrom`: the owner whose expired lease this claim took over (a lease takeover).
        if (pass === 1) await ledger.event(history.length === 0 ? 'run.started' : 'run.resumed', { owner: this.owner, ...(takenOverFrom === null ? {} : { takenOverFrom }) });
        const outcome = await withContext(execution.context, () => this.traverse(ledger, control));
        ended = typeof outcome === 'string' ? outcome : outcome.status;
        if (outcome === 'stopped') return await this.settleStop(ledger, control.reason!, entry);
        if (outcome !== 'blocked') return await this.finish(ledger, outcome);
        // Every branch is done or waits at a gate: park, unless a decision came in meanwhile.
        await this.options.hooks?.beforePark?.(runId);
        const parked = await repos.runs.park(runId, this.owner, run.wakeSeq, this.clock.now());
        if (parked) {
          await repos.runs.startTimeouts(parked, this.clock.now());
          await ledger.event('run.awaiting_approval', {});
          logger.info({ runId }, 'run awaiting approval');
          ended = 'awaiting_approval';
          return;
        }
        const current = await repos.runs.get(runId);
        if (!current || current.leaseOwner !== this.owner || current.status !== 'running') return;
        run = current; // a decision or a directive arrived during the traversal: walk again to consume it
      }
    } catch (error) {
      if (control.reason) return await this.settleStop(ledger, control.reason, entry);
      ended = 'error';
      failure = error;
      await this.internalFailure(run, error);
    } finally {
      lease.stop();
      endExecutionSpan(execution, ended, failure);
    }
  }

  /**
   * One traversal: the run's outcome, `blocked` at gates, or `stopped` when the execution was
   * stopped (see {@link ExecutionControl}). A node failure outweighs a pause; a completed
   * traversal completes the run even when a pause came too late to stop anything. Anything else
   * that is thrown (a store error, a bug) is no outcome of the workflow: it propagates.
   */
  private async traverse(ledger: RunLedger, control: ExecutionControl): Promise<RunOutcome | 'blocked' | 'stopped'> {
    try {
      const interpreter = new Interpreter({
        ledger,
        executors: this.options.executors,
        cel: this.options.cel,
        clock: this.clock,
        signal: control.signal,
        boundary: control.boundary,
        parallelLimit: ledger.run.parallelLimit ?? this.parallelLimit,
        random: this.options.random,
        maxOutputBytes: this.options.maxOutputBytes,
        downstreamTokens: this.options.downstreamTokens,
        publicText: this.options.publicText,
      });
      const finalOutput = await interpreter.run();
      if (interpreter.targetReached) {
        // A node rerun ends right after its target: the containers around it never finished.
        await ledger.closeOpenNodeRuns('not finished: the node rerun ended after its target');
      }
      return { status: 'completed', finalOutput };
    } catch (error) {
      if (error instanceof LeaseExpired) control.stop({ kind: 'lease_lost', detail: error.message });
      if (control.signal.aborted) return 'stopped';
      if (error instanceof NodeFailedError) return { status: 'failed', errorSummary: error.message };
      if (error instanceof RunCancelled) return { status: 'cancelled', errorSummary: error.message };
      if (control.boundary.aborted) return 'stopped';
      if (error instanceof GateBlocked) return 'blocked';
      throw error;
    }
  }

  /**
   * Carries out the effect of a stop on the run (the one place stop reasons become outcomes, see
   * {@link stopEffect}): release the lease at shutdown, leave the run alone when it is no longer
   * ours, end it for a cancel or timeout, pause it. A pause that can no longer be applied (a
   * resume withdrew it, a cancel replaced it) gives the run up and asks for one more claim, which
   * sees the run as it now is.
   */
  private async settleStop(ledger: RunLedger, reason: StopReason, entry: { rerun: boolean }): Promise<void> {
    const { repos, logger } = this.options;
    const runId = ledger.run.id;
    const effect = stopEffect(reason);
    switch (effect.kind) {
      case 'release':
        await repos.runs.release(runId, this.owner, this.clock.now());
        logger.info({ runId }, 'run released at shutdown; it continues on the next claim');
        return;
      case 'abandon':
        logger.warn({ runId, reason }, 'run stopped');
        return;
      case 'end':
        await this.finish(ledger, effect.outcome);
        return;
      case 'pause':
        if (await repos.runs.pauseOwned(runId, this.owner, this.clock.now())) {
          await ledger.event('run.paused', {});
          logger.info({ runId }, 'run paused');
          return;
        }
        await repos.runs.release(runId, this.owner, this.clock.now());
        entry.rerun = true;
        return;
    }
  }

  /**
   * An execution ended on an internal error (e.g. the store was briefly unreachable). The run is
   * not failed for it: the lease is given up and any instance's recovery continues the run by
   * re-traversal. After {@link MAX_INTERNAL_FAILURES} such executions in a row the run fails.
   */
  private async internalFailure(run: RunRecord, error: unknown): Promise<void> {
    const { repos, logger } = this.options;
    const message = error instanceof Error ? error.message : String(error);
    try {
      // Data too large to store is the workflow's own doing (another try fails the same way);
      // anything else is given up on only after MAX_INTERNAL_FAILURES executions in a row.
      const giveUp = isDocumentTooLarge(error)
        ? `A value of this run is too large to store: ${message}`
        : (run.internalFailures ?? 0) + 1 >= MAX_INTERNAL_FAILURES
          ? `Internal error: ${message}`
          : null;
      if (giveUp !== null) {
        logger.error({ err: error, runId: run.id }, 'run failed on an error it cannot recover from');
        await this.finish(new RunLedger(repos, run, this.clock, [], this.owner), { status: 'failed', errorSummary: giveUp });
        return;
      }
      const count = await repos.runs.releaseAfterError(run.id, this.owner, this.clock.now());
      logger.error({ err: error, runId: run.id, internalFailures: count }, 'run execution hit an internal error; released for recovery');
    } catch (secondary) {
      logger.error({ err: secondary, cause: message, runId: run.id }, 'run execution hit an internal error and could not release its lease');
    }
  }

  /** Fails a run whose last executions all ended without progress (see {@link MAX_CLAIMS_WITHOUT_PROGRESS}). */
  private async failPoisonRun(run: RunRecord): Promise<void> {
    const executions = (run.claimsSinceProgress ?? 1) - 1;
    const errorSummary =
      `Run stopped after ${executions} executions in a row ended without progress (no node finished): each lost its lease ` +
      'or its process before a node could finish, e.g. a step or expression that blocks or crashes the process. ' +
      'Check the last node started (its node run stays running) and the service logs.';
    this.options.logger.error({ runId: run.id, executions }, 'run failed: claimed repeatedly without progress');
    await this.finish(new RunLedger(this.options.repos, run, this.clock, [], this.owner), { status: 'failed', errorSummary });
  }

  private async finish(ledger: RunLedger, outcome: RunOutcome): Promise<void> {
    const { repos, logger } = this.options;
    const finished = await repos.runs.finish(ledger.run.id, this.owner, outcome, this.clock.now());
    if (!finished) {
      logger.warn({ runId: ledger.run.id }, 'run could not be finished: lease lost or status changed');
      return;
    }
    if (outcome.status !== 'completed') {
      await repos.nodeRuns.cancelUnfinished(ledger.run.id, `run ${outcome.status}`, this.clock.now());
    }
    const payload = outcome.status === 'completed' ? {} : { errorSummary: outcome.errorSummary };
    await ledger.event(`run.${outcome.status}`, payload);
    // The run may have been deleted as soon as it ended (DELETE, retention): leave no orphan event.
    if (!(await repos.runs.exists(ledger.run.id))) await repos.events.deleteByRun(ledger.run.id);
    logger.info({ runId: ledger.run.id, status: outcome.status }, 'run finished');
  }
}
