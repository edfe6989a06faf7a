/**
 * Run ownership and lifecycle (DESIGN.md "Ownership"): claims a run with a compare-and-set on
 * (status, lease), renews the lease with a heartbeat while the interpreter walks the tree, ends
 * the run with a CAS that requires the lease, and releases the lease on shutdown. Runs whose owner
 * died (lease expired) are claimed again by the recovery loop of any instance and continue by
 * re-traversal: settled node runs are reused, the rest executes.
 *
 * Capacity (issue #20 item 5): an instance executes at most `maxActiveRuns` runs at once. A run
 * started beyond that is not claimed: it stays claimable in the store (`pending`, or a woken parked
 * run) and is claimed when a slot frees, oldest trigger first ({@link RunEngine.recoverOrphans}).
 * Graceful shutdown (item 4): {@link RunEngine.close} stops claiming, lets executing nodes finish
 * within a grace, aborts the rest and releases every lease.
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

/** Default of {@link RunEngineOptions.maxActiveRuns} (`SWITCHYARD_MAX_ACTIVE_RUNS`). */
export const DEFAULT_MAX_ACTIVE_RUNS = 64;

/** Claimable run ids read per page of the waiting runs (kept for the next slots that free). */
const FILL_PAGE = 100;

/** Pages one fill reads at most (a bound: the next run end or recovery tick fills again). */
const FILL_MAX_PAGES = 20;

/** How long {@link RunEngine.close} waits for aborted executions to let go before it releases their leases itself, ms. */
const ABORT_SETTLE_MS = 2_000;

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
  /**
   * Most runs this instance executes at once (default {@link DEFAULT_MAX_ACTIVE_RUNS};
   * `SWITCHYARD_MAX_ACTIVE_RUNS`). Runs started beyond it wait in the store and are claimed, oldest
   * trigger first, as executions end.
   */
  maxActiveRuns?: number;
  /**
   * How long {@link RunEngine.close} lets executing nodes finish before it aborts them, ms (default
   * 0: abort at once; `SWITCHYARD_SHUTDOWN_GRACE_MS`).
   */
  shutdownGraceMs?: number;
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
  private readonly maxActiveRuns: number;
  private readonly shutdownGraceMs: number;
  /** Runs this instance executes; `rerun` asks for one more claim once the current execution ends. */
  private readonly active = new Map<string, { control: ExecutionControl; done: Promise<void>; rerun: boolean }>();
  private stopRecovery: (() => void) | null = null;
  private readonly recoveryLoop: LoopClock;
  /** False once {@link close} began: nothing is claimed any more. */
  private claiming = true;
  private closing: Promise<void> | null = null;
  /**
   * True while runs may wait in the store for a slot of this instance (a start was deferred at the
   * cap, or recovery has not read the store yet): then starts go through {@link fill}, which claims
   * in trigger order, instead of claiming at once; cleared when a fill finds every claimable run.
   */
  private backlog = false;
  /** The fill under way, and whether another was asked for meanwhile (it reads the store again). */
  private filling: Promise<number> | null = null;
  /**
   * Claimable runs of the last page read, in trigger order, not started yet (at most
   * {@link FILL_PAGE}). Dropped whenever a run may have become claimable since the read (a start
   * deferred at the cap, a recovery scan): such a run may be older than the page (a woken parked
   * run, a resumed or orphaned one), so the next slot reads the store afresh.
   */
  private waiting: string[] = [];
  private fillAgain = false;
  /** Counts starts deferred to the store: a page read while one was deferred may not list it, so it cannot end the backlog. */
  private deferrals = 0;
  /** Runs whose lease release at shutdown failed: {@link close} tries them once more. */
  private readonly unreleased = new Set<string>();

  constructor(private readonly options: RunEngineOptions) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.clock = options.clock ?? systemClock;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.floor(this.leaseMs / 3);
    this.parallelLimit = options.parallelLimit ?? 8;
    this.recoveryIntervalMs = options.recoveryIntervalMs ?? 15_000;
    this.maxActiveRuns = Math.max(1, options.maxActiveRuns ?? DEFAULT_MAX_ACTIVE_RUNS);
    this.shutdownGraceMs = Math.max(0, options.shutdownGraceMs ?? 0);
    this.recoveryLoop = new LoopClock(() => this.clock.now(), this.recoveryIntervalMs);
  }

  /**
   * Starts executing `runId` in the background. When this instance already executes it, asks for
   * one more claim after the current execution ends: a wake-up (e.g. a decision) that arrives
   * after that execution parked the run, but before it let go, is not lost. At the cap
   * (`maxActiveRuns`), or while runs wait for a slot, the run is not claimed here: it stays
   * claimable in the store and a free slot takes the oldest waiting run first (see
   * {@link recoverOrphans}). The returned promise (which never rejects) settles when this instance
   * stops working on the run: finished, parked, claimed elsewhere or shut down; for a run left
   * waiting, at once. Callers may ignore it. After {@link close} began, does nothing.
   */
  start(runId: string): Promise<void> {
    const current = this.active.get(runId);
    if (current) {
      current.rerun = true;
      return current.done;
    }
    if (!this.claiming) return Promise.resolve();
    if (this.backlog || this.active.size >= this.maxActiveRuns) {
      this.backlog = true;
      this.deferrals++;
      this.waiting = [];
      this.fillInBackground();
      return Promise.resolve();
    }
    return this.launch(runId);
  }

  /** Claims and executes `runId` now, whatever the cap (the caller made room). */
  private launch(runId: string): Promise<void> {
    const control = new ExecutionControl();
    const entry = { control, done: Promise.resolve(), rerun: false };
    let crashed = false;
    entry.done = this.execute(runId, control, entry)
      .catch((error: unknown) => {
        crashed = true;
        this.options.logger.error({ err: error, runId }, 'run execution crashed');
      })
      .then(() => {
        this.active.delete(runId);
        if (!this.claiming) return;
        // The slot it frees goes to the same run when a wake-up came in meanwhile, else to the oldest waiting run.
        if (entry.rerun) return this.launch(runId);
        // Not after a crash (the store failed the claim): refilling at once would claim the same run
        // again and again while the store keeps failing; the recovery tick fills the slot instead.
        if (this.backlog && !crashed) this.fillInBackground();
      });
    this.active.set(runId, entry);
    return entry.done;
  }

  /**
   * Claims runs that need an owner (pending runs waiting for a slot, woken parked runs, runs whose
   * owner crashed or released them) into this instance's free slots, oldest trigger first
   * (`created_at`, then id). Returns how many it started. Used by the recovery loop; a slot that
   * frees while runs wait is filled the same way. Rejects when the store cannot be read.
   */
  async recoverOrphans(): Promise<number> {
    // Read the store afresh: older runs (orphans whose lease ran out, woken parked runs) go first.
    this.waiting = [];
    const started = await this.fill();
    if (started > 0) this.options.logger.info({ count: started, executing: this.active.size }, 'claimed runs without a live owner');
    return started;
  }

  /** One fill at a time: a fill asked for during one makes it read the store again before it ends. */
  private fill(): Promise<number> {
    if (this.filling) {
      this.fillAgain = true;
      return this.filling;
    }
    const run = async (): Promise<number> => {
      let started = 0;
      try {
        do {
          // Asked again during the last pass: a run may have become claimable since its read.
          if (this.fillAgain) this.waiting = [];
          this.fillAgain = false;
          started += await this.fillSlots();
        } while (this.fillAgain && this.claiming);
        return started;
      } finally {
        this.filling = null;
      }
    };
    this.filling = run();
    return this.filling;
  }

  /** {@link fill} for callers that do not wait: a store error is logged (the next run end or recovery tick tries again). */
  private fillInBackground(): void {
    this.fill().catch((error: unknown) => this.options.logger.error({ err: error }, 'claiming waiting runs failed'));
  }

  /**
   * Starts waiting runs in trigger order while slots are free: from {@link waiting} (the rest of the
   * last page read), else from a new page of claimable runs. One page serves up to
   * {@link FILL_PAGE} slot fills, so a long queue costs one sorted read per page, not one per run.
   * The page is dropped when a run may have become claimable since the read ({@link waiting}), so
   * the order holds.
   */
  private async fillSlots(): Promise<number> {
    let started = 0;
    let reads = 0;
    while (this.claiming && this.active.size < this.maxActiveRuns) {
      const next = this.waiting.shift();
      if (next !== undefined) {
        if (this.active.has(next)) continue;
        void this.launch(next);
        started++;
        continue;
      }
      if (reads++ >= FILL_MAX_PAGES) break;
      // Runs started here but not claimed yet are listed too: read past them.
      const asked = FILL_PAGE + this.active.size;
      const deferralsBefore = this.deferrals;
      const ids = await this.options.repos.runs.listClaimable(this.clock.now(), asked);
      if (!this.claiming) break;
      this.waiting = ids.filter((id) => !this.active.has(id));
      // A short page lists every claimable run — unless a start was deferred during the read (the
      // page may miss that run): once they all started, none waits any more.
      if (ids.length < asked && this.deferrals === deferralsBefore && this.waiting.length <= this.maxActiveRuns - this.active.size) this.backlog = false;
      if (this.waiting.length === 0) break;
    }
    return started;
  }

  /**
   * Runs {@link recoverOrphans} now and then every `recoveryIntervalMs`. Until the first scan has
   * read the store, runs started meanwhile queue behind the runs already waiting there.
   */
  startRecovery(): void {
    if (this.stopRecovery || !this.claiming) return;
    this.backlog = true;
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

  /** Resolves when no run is executing in this instance and no fill is under way (tests, graceful shutdown). Never rejects. */
  async idle(): Promise<void> {
    while (this.active.size > 0 || this.filling) {
      await Promise.all([...this.active.values()].map((a) => a.done));
      await this.filling?.catch(() => undefined);
    }
  }

  /** Number of runs executing in this instance right now (at most `maxActiveRuns`, but for a rerun taking its own slot). */
  get activeCount(): number {
    return this.active.size;
  }

  /** Stops claiming: no start, no fill, no recovery scan any more; executions under way go on. The first step of {@link close}. */
  stopClaiming(): void {
    this.claiming = false;
    this.stopRecovery?.();
    this.stopRecovery = null;
    this.recoveryLoop.stopped();
  }

  /**
   * Shuts the engine down (graceful shutdown, issue #20 item 4):
   * 1. stops claiming ({@link stopClaiming});
   * 2. asks every execution to stop at the next node boundary and lets executing nodes finish for
   *    `graceMs` (default: the engine's `shutdownGraceMs`; 0 skips this step). A node that finishes is recorded, so the
   *    next claim does not run it again;
   * 3. aborts what still executes (in-flight executor calls get an aborted signal) and waits a
   *    little for the executions to let go;
   * 4. releases the lease of every run it executed (each on its own: one failing release does not
   *    skip the others; one that fails is tried once more, and executions that ignored the abort
   *    have their leases released here), so that another instance, or this service restarted on
   *    the same data, continues the runs at once by re-traversal.
   * Idempotent: later calls return the first call's promise. Never rejects (failures are logged).
   */
  close(options: { graceMs?: number } = {}): Promise<void> {
    return (this.closing ??= this.shutDown(Math.max(0, options.graceMs ?? this.shutdownGraceMs)));
  }

  private async shutDown(graceMs: number): Promise<void> {
    const { logger } = this.options;
    // A fill under way launches nothing more (it checks `claiming`); it is not waited for: its store
    // read may hang (a failover) longer than the grace.
    this.stopClaiming();
    const executing = [...this.active.keys()];
    if (graceMs > 0 && executing.length > 0) {
      logger.info({ runs: executing.length, graceMs }, 'shutting down: executing nodes may finish, no node starts');
      for (const { control } of this.active.values()) control.stop({ kind: 'drain' });
      await this.settleWithin(this.idle(), graceMs);
    }
    if (this.active.size > 0) {
      logger.warn({ runs: this.active.size }, 'shutting down: aborting executions still under way');
      for (const { control } of this.active.values()) control.stop({ kind: 'shutdown' });
      await this.settleWithin(this.idle(), ABORT_SETTLE_MS);
    }
    // Executions that did not let go after the abort, and releases that failed: release them here.
    const stuck = [...this.active.keys()];
    if (stuck.length > 0) logger.error({ runIds: stuck }, 'executions did not stop after the abort; releasing their leases anyway');
    await this.releaseAll([...new Set([...this.unreleased, ...stuck])]);
  }

  /** Releases this owner's lease of each run, each on its own; logs the ones that fail. */
  private async releaseAll(runIds: readonly string[]): Promise<void> {
    const now = this.clock.now();
    const results = await Promise.allSettled(runIds.map((id) => this.options.repos.runs.release(id, this.owner, now)));
    results.forEach((result, i) => {
      if (result.status === 'rejected') this.options.logger.error({ err: result.reason, runId: runIds[i] }, 'could not release the lease at shutdown; the run continues once it expires');
    });
  }

  /** Waits for `done` at most `ms` milliseconds of the engine clock. */
  private async settleWithin(done: Promise<void>, ms: number): Promise<void> {
    const timer = new AbortController();
    try {
      await Promise.race([done, this.clock.sleep(ms, timer.signal).catch(() => undefined)]);
    } finally {
      timer.abort();
    }
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
        try {
          await repos.runs.release(runId, this.owner, this.clock.now());
          logger.info({ runId }, 'run released at shutdown; it continues on the next claim');
        } catch (error) {
          // close() tries once more after every execution let go.
          this.unreleased.add(runId);
          logger.error({ err: error, runId }, 'could not release the lease at shutdown; trying again before the engine closes');
        }
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
    if (outcome.status === 'completed') await ledger.event('run.completed', {});
    else await ledger.event(`run.${outcome.status}`, { errorSummary: outcome.errorSummary });
    // The run may have been deleted as soon as it ended (DELETE, retention): leave no orphan event.
    if (!(await repos.runs.exists(ledger.run.id))) await repos.events.deleteByRun(ledger.run.id);
    logger.info({ runId: ledger.run.id, status: outcome.status }, 'run finished');
  }
}
