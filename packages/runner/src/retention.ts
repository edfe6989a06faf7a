/**
 * Run history retention (issue "Reliability" item 7): ended runs are deleted with their node runs
 * and run events, one at a time through {@link deleteEndedRun} (also behind
 * `DELETE .../runs/{run_id}`), and the {@link RetentionSweeper} applies the configured policy
 * now and then on either backend: runs that ended more than `retentionDays` ago, and a
 * workflow's ended runs beyond its `keepPerWorkflow` newest. Runs that have not ended are never
 * deleted. Each pass also purges expired idempotency keys of triggers and events past their retention (`events`). After a pass that deleted anything, the store is compacted (the embedded store
 * rewrites its snapshot, so its files shrink too).
 */
import { isTerminalRunStatus } from '@switchyard/domain';
import type { DocumentStore, Repositories } from '@switchyard/store';
import { systemClock, type Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { PeriodicLoop, type LoopStatus } from './loop-status.ts';

/** Outcome of {@link deleteEndedRun}. */
export type RunDeletion = 'deleted' | 'not_found' | 'not_ended';

/**
 * Deletes an ended run of `workflowId` with its node runs and events. Node runs and events go
 * first, the run document last, so an interrupted deletion leaves a visible run that can be
 * deleted again, never invisible leftovers. The run's owner may still be appending its final
 * event just after the run ended: events are deleted once more after the run document, and the
 * engine deletes an event it wrote for a run that is gone by then (see `RunEngine`). Throws
 * store errors.
 */
export async function deleteEndedRun(repos: Repositories, workflowId: string, runId: string): Promise<RunDeletion> {
  const run = await repos.runs.getInWorkflow(workflowId, runId);
  if (!run) return 'not_found';
  if (!isTerminalRunStatus(run.status)) return 'not_ended';
  await repos.nodeRuns.deleteByRun(runId);
  await repos.events.deleteByRun(runId);
  if (!(await repos.runs.deleteEnded(runId))) return (await repos.runs.exists(runId)) ? 'not_ended' : 'not_found';
  await repos.events.deleteByRun(runId);
  return 'deleted';
}

/** Options of {@link RetentionSweeper}. */
export interface RetentionSweeperOptions {
  repos: Repositories;
  store: DocumentStore;
  logger: Logger;
  clock?: Clock;
  /** Delete runs that ended more than this many days ago; null keeps them (`SWITCHYARD_RUN_RETENTION_DAYS`). */
  retentionDays: number | null;
  /** Keep at most this many ended runs per workflow, the newest; null keeps all (`SWITCHYARD_RUNS_KEPT_PER_WORKFLOW`). */
  keepPerWorkflow: number | null;
  /** Pass period, milliseconds (default 3,600,000: hourly). */
  intervalMs?: number;
  /** Told how many runs a pass deleted, when more than none (the metrics' sweeper actions). Must not throw. */
  onDeleted?: (runs: number) => void;
}

/** Runs deleted per query of a pass (a pass repeats until nothing is left). */
const BATCH = 200;

/** A pass ends early because the sweeper is stopping. */
class RetentionStopped extends Error {
  override readonly name = 'RetentionStopped';
}

/**
 * Applies the retention policy now and then (see the module comment). One instance per process;
 * any number of instances may sweep the same store (each deletion is a compare-and-set).
 */
export class RetentionSweeper {
  private stopping = false;
  private readonly clock: Clock;
  private readonly loop: PeriodicLoop;

  constructor(private readonly options: RetentionSweeperOptions) {
    this.clock = options.clock ?? systemClock;
    this.loop = new PeriodicLoop({
      clock: this.clock,
      intervalMs: options.intervalMs ?? 3_600_000,
      pass: () => this.sweep(),
      onError: (error) => options.logger.error({ err: error }, 'retention sweep failed'),
      passAtStart: true,
    });
  }

  /** The pass loop's state (loop-status.ts): `lastRunAt` is when the last pass finished without an error (sweeper clock). */
  loopStatus(): LoopStatus {
    return this.loop.status;
  }

  /** True when a run retention policy is configured (expired idempotency keys are purged either way). */
  get enabled(): boolean {
    return this.options.retentionDays !== null || this.options.keepPerWorkflow !== null;
  }

  /**
   * One pass of the policy; resolves with how many runs it deleted. Compacts the store when that
   * is more than none. A pass interrupted by {@link stop} resolves with what it deleted so far.
   */
  async sweep(): Promise<number> {
    const counter = { deleted: 0 };
    try {
      await this.pass(counter);
    } catch (error) {
      if (!(error instanceof RetentionStopped)) throw error;
    }
    if (counter.deleted > 0) {
      this.options.onDeleted?.(counter.deleted);
      await this.options.store.compact();
      this.options.logger.info({ deleted: counter.deleted, retentionDays: this.options.retentionDays, keepPerWorkflow: this.options.keepPerWorkflow }, 'retention deleted ended runs');
    }
    return counter.deleted;
  }

  /** The deletions of one pass, counted in `counter`. */
  private async pass(counter: { deleted: number }): Promise<void> {
    const { repos, retentionDays, keepPerWorkflow } = this.options;
    await repos.idempotencyKeys.purgeExpired(this.clock.now());
    await repos.inboundEvents.purgeExpired(this.clock.now());
    if (retentionDays !== null) {
      const cutoff = new Date(this.clock.now().getTime() - retentionDays * 86_400_000);
      for (let runs = await repos.runs.listEndedBefore(cutoff, BATCH); runs.length > 0; runs = await repos.runs.listEndedBefore(cutoff, BATCH)) {
        const before = counter.deleted;
        for (const { runId, workflowId } of runs) await this.delete(workflowId, runId, counter);
        if (counter.deleted === before) break; // nothing could go (deleted elsewhere meanwhile): no busy loop
      }
    }
    if (keepPerWorkflow !== null) {
      for (let workflows = await repos.definitions.listIdsAfter(null, BATCH); workflows.length > 0; workflows = await repos.definitions.listIdsAfter(workflows.at(-1)!, BATCH)) {
        for (const workflowId of workflows) {
          for (let ids = await repos.runs.listEndedBeyond(workflowId, keepPerWorkflow, BATCH); ids.length > 0; ids = await repos.runs.listEndedBeyond(workflowId, keepPerWorkflow, BATCH)) {
            const before = counter.deleted;
            for (const runId of ids) await this.delete(workflowId, runId, counter);
            if (counter.deleted === before) break;
          }
        }
      }
    }
  }

  /** Sweeps now and then every `intervalMs` until {@link stop}. */
  start(): void {
    this.stopping = false; // a start after stop() deletes runs again
    this.loop.start();
  }

  /** Stops; a pass in progress ends after the deletion it is at; resolves once it has. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
  }

  /** Deletes one ended run, counting it in `counter` when it went. Throws {@link RetentionStopped} once {@link stop} was called. */
  private async delete(workflowId: string, runId: string, counter: { deleted: number }): Promise<void> {
    if (this.stopping) throw new RetentionStopped();
    if ((await deleteEndedRun(this.options.repos, workflowId, runId)) === 'deleted') counter.deleted += 1;
  }
}
