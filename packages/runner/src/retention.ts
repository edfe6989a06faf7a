/**
 * Run history retention (issue "Reliability" item 7): ended runs are deleted with their node runs
 * and run events, one at a time through {@link deleteEndedRun} (also behind
 * `DELETE .../runs/{run_id}`), and the {@link RetentionSweeper} applies the configured policy
 * now and then on either backend: runs that ended more than `retentionDays` ago, and a
 * workflow's ended runs beyond its `keepPerWorkflow` newest. Runs that have not ended are never
 * deleted. After a pass that deleted anything, the store is compacted (the embedded store
 * rewrites its snapshot, so its files shrink too).
 */
import { isTerminalRunStatus } from '@switchyard/domain';
import type { DocumentStore, Repositories } from '@switchyard/store';
import { systemClock, type Clock } from './clock.ts';
import type { Logger } from './logger.ts';

/** Outcome of {@link deleteEndedRun}. */
export type RunDeletion = 'deleted' | 'not_found' | 'not_ended';

/**
 * Deletes an ended run of `workflowId` with its node runs and events. Node runs and events go
 * first, the run document last, so an interrupted deletion leaves a visible run that can be
 * deleted again, never invisible leftovers. Throws store errors.
 */
export async function deleteEndedRun(repos: Repositories, workflowId: string, runId: string): Promise<RunDeletion> {
  const run = await repos.runs.getInWorkflow(workflowId, runId);
  if (!run) return 'not_found';
  if (!isTerminalRunStatus(run.status)) return 'not_ended';
  await repos.nodeRuns.deleteByRun(runId);
  await repos.events.deleteByRun(runId);
  return (await repos.runs.deleteEnded(runId)) ? 'deleted' : 'not_ended';
}

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
}

/** Runs deleted per query of a pass (a pass repeats until nothing is left). */
const BATCH = 200;

export class RetentionSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private readonly clock: Clock;

  constructor(private readonly options: RetentionSweeperOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** True when a policy is configured (otherwise {@link start} does nothing). */
  get enabled(): boolean {
    return this.options.retentionDays !== null || this.options.keepPerWorkflow !== null;
  }

  /** One pass of the policy; resolves with how many runs it deleted. Compacts the store when that is more than none. */
  async sweep(): Promise<number> {
    const { repos, retentionDays, keepPerWorkflow } = this.options;
    let deleted = 0;
    if (retentionDays !== null) {
      const cutoff = new Date(this.clock.now().getTime() - retentionDays * 86_400_000);
      for (let runs = await repos.runs.listEndedBefore(cutoff, BATCH); runs.length > 0; runs = await repos.runs.listEndedBefore(cutoff, BATCH)) {
        let batch = 0;
        for (const { runId, workflowId } of runs) batch += await this.delete(workflowId, runId);
        deleted += batch;
        if (batch === 0) break; // nothing could go (deleted elsewhere meanwhile): no busy loop
      }
    }
    if (keepPerWorkflow !== null) {
      for (let workflows = await repos.definitions.listIdsAfter(null, BATCH); workflows.length > 0; workflows = await repos.definitions.listIdsAfter(workflows.at(-1)!, BATCH)) {
        for (const workflowId of workflows) {
          for (let ids = await repos.runs.listEndedBeyond(workflowId, keepPerWorkflow, BATCH); ids.length > 0; ids = await repos.runs.listEndedBeyond(workflowId, keepPerWorkflow, BATCH)) {
            let batch = 0;
            for (const runId of ids) batch += await this.delete(workflowId, runId);
            deleted += batch;
            if (batch === 0) break;
          }
        }
      }
    }
    if (deleted > 0) {
      await this.options.store.compact();
      this.options.logger.info({ deleted, retentionDays, keepPerWorkflow }, 'retention deleted ended runs');
    }
    return deleted;
  }

  /** Sweeps now and then every `intervalMs` until {@link stop}, when a policy is configured. */
  start(): void {
    if (this.timer || !this.enabled) return;
    const tick = () => {
      this.running = this.sweep().catch((error: unknown) => this.options.logger.error({ err: error }, 'retention sweep failed'));
    };
    tick();
    this.timer = setInterval(tick, this.options.intervalMs ?? 3_600_000);
    this.timer.unref();
  }

  /** Stops; resolves once a pass in progress has finished. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Deletes one ended run; 1 when it went, else 0. */
  private async delete(workflowId: string, runId: string): Promise<number> {
    return (await deleteEndedRun(this.options.repos, workflowId, runId)) === 'deleted' ? 1 : 0;
  }
}
