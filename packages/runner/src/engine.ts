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
import { LeaseExpired, RunLedger } from './ledger.ts';
import type { Logger } from './logger.ts';

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

class Shutdown extends Error {
  override readonly name = 'Shutdown';
}
class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
}
class Aborted extends Error {
  override readonly name = 'Aborted';
}

/** Executes runs in the background of this process. */
export class RunEngine {
  readonly owner: string;
  private readonly clock: Clock;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly parallelLimit: number;
  private readonly recoveryIntervalMs: number;
  /** Runs this instance executes; `rerun` asks for one more claim once the current execution ends. */
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void>; rerun: boolean }>();
  private recoveryTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: RunEngineOptions) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.clock = options.clock ?? systemClock;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.floor(this.leaseMs / 3);
    this.parallelLimit = options.parallelLimit ?? 8;
    this.recoveryIntervalMs = options.recoveryIntervalMs ?? 15_000;
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
    const controller = new AbortController();
    const entry = { controller, done: Promise.resolve(), rerun: false };
    entry.done = this.execute(runId, controller)
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
    if (this.recoveryTimer || this.closed) return;
    const tick = () => this.recoverOrphans().catch((error: unknown) => this.options.logger.error({ err: error }, 'run recovery scan failed'));
    void tick();
    this.recoveryTimer = setInterval(tick, this.recoveryIntervalMs);
    this.recoveryTimer.unref();
  }

  /**
   * Stops executing `runId` in this instance at once (in-flight executor calls are aborted) and
   * resolves when it has stopped. The run document is left as it is; used when a run is deleted.
   */
  async abort(runId: string, reason: string): Promise<void> {
    const current = this.active.get(runId);
    if (!current) return;
    current.controller.abort(new Aborted(reason));
    await current.done;
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
    if (this.recoveryTimer) clearInterval(this.recoveryTimer);
    for (const { controller } of this.active.values()) controller.abort(new Shutdown('engine is shutting down'));
    await this.idle();
  }

  private async execute(runId: string, controller: AbortController): Promise<void> {
    const { repos, logger } = this.options;
    const claimedAt = this.clock.now();
    let run = await repos.runs.claim(runId, this.owner, this.leaseMs, claimedAt);
    if (!run) return;
    logger.info({ runId, workflowId: run.workflowDefinitionId, claimsSinceProgress: run.claimsSinceProgress }, 'run claimed');
    if ((run.claimsSinceProgress ?? 0) > MAX_CLAIMS_WITHOUT_PROGRESS) return await this.failPoisonRun(run);
    // How long the lease is known to hold. An owner whose renewals fail stops itself before the
    // lease can pass to another instance, so that no step runs twice in parallel.
    const lease = { validUntil: claimedAt.getTime() + this.leaseMs };
    const heartbeat = setInterval(() => {
      const now = this.clock.now();
      if (now.getTime() >= lease.validUntil) controller.abort(new LeaseLost('lease could not be renewed in time'));
      repos.runs
        .renewLease(runId, this.owner, this.leaseMs, now)
        .then((held) => (held ? (lease.validUntil = now.getTime() + this.leaseMs) : controller.abort(new LeaseLost('lease lost to another instance'))))
        .catch((error: unknown) => logger.warn({ err: error, runId }, 'heartbeat failed'));
    }, this.heartbeatMs);
    heartbeat.unref();
    try {
      for (let pass = 1; ; pass++) {
        const history = await repos.nodeRuns.listByRun(runId);
        const ledger = new RunLedger(repos, run, this.clock, history, this.owner, lease);
        if (pass === 1) await ledger.event(history.length === 0 ? 'run.started' : 'run.resumed', { owner: this.owner });
        const outcome = await this.traverse(ledger, controller);
        if (outcome === 'stopped') return;
        if (outcome !== 'blocked') return await this.finish(ledger, outcome);
        // Every branch is done or waits at a gate: park, unless a decision came in meanwhile.
        await this.options.hooks?.beforePark?.(runId);
        const parked = await repos.runs.park(runId, this.owner, run.wakeSeq, this.clock.now());
        if (parked) {
          await repos.runs.startTimeouts(parked, this.clock.now());
          await ledger.event('run.awaiting_approval', {});
          logger.info({ runId }, 'run awaiting approval');
          return;
        }
        const current = await repos.runs.get(runId);
        if (!current || current.leaseOwner !== this.owner || current.status !== 'running') return;
        run = current; // a decision arrived during the traversal: walk again to consume it
      }
    } catch (error) {
      if (controller.signal.aborted) return this.stopped(run, controller.signal.reason);
      await this.internalFailure(run, error);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * One traversal: the run's outcome, `blocked` at gates, or `stopped` when aborted. Anything
   * else that is thrown (a store error, a bug) is no outcome of the workflow: it propagates.
   */
  private async traverse(ledger: RunLedger, controller: AbortController): Promise<RunOutcome | 'blocked' | 'stopped'> {
    try {
      const interpreter = new Interpreter({
        ledger,
        executors: this.options.executors,
        cel: this.options.cel,
        clock: this.clock,
        signal: controller.signal,
        parallelLimit: ledger.run.parallelLimit ?? this.parallelLimit,
        random: this.options.random,
        maxOutputBytes: this.options.maxOutputBytes,
      });
      return { status: 'completed', finalOutput: await interpreter.run() };
    } catch (error) {
      if (error instanceof LeaseExpired) controller.abort(new LeaseLost(error.message));
      if (controller.signal.aborted) {
        await this.stopped(ledger.run, controller.signal.reason);
        return 'stopped';
      }
      if (error instanceof GateBlocked) return 'blocked';
      if (error instanceof RunCancelled) return { status: 'cancelled', errorSummary: error.message };
      if (error instanceof NodeFailedError) return { status: 'failed', errorSummary: error.message };
      throw error;
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

  private async stopped(run: RunRecord, reason: unknown): Promise<void> {
    if (reason instanceof Shutdown) {
      await this.options.repos.runs.release(run.id, this.owner, this.clock.now());
      this.options.logger.info({ runId: run.id }, 'run released at shutdown; it continues on the next claim');
    } else {
      this.options.logger.warn({ runId: run.id, reason: String(reason) }, 'run stopped');
    }
  }
}
