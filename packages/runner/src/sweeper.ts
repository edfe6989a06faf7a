/**
 * The HITL timeout sweeper (DESIGN.md "HITL v2"): now and then, decides every undecided
 * requirement whose `timeoutAt` has passed according to its `onTimeout`, through the very same
 * compare-and-set as a human decision, so a human and a timeout racing on one gate produce
 * exactly one winner. Timeouts come from the stored `timeout_at`, so they survive restarts; any
 * number of instances may sweep at once.
 */
import { timeoutDecision, undecidedRequirements } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import { recordDecision } from './decisions.ts';
import type { Logger } from './logger.ts';

export interface TimeoutSweeperOptions {
  repos: Repositories;
  /** Continues a run after a timeout decided one of its gates (the engine's `start`). */
  wake: (runId: string) => unknown;
  logger: Logger;
  clock?: Clock;
  /** Sweep period, milliseconds (default 1,000). */
  intervalMs?: number;
}

export class TimeoutSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private readonly clock: Clock;

  constructor(private readonly options: TimeoutSweeperOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * One pass: decides every expired requirement it wins and wakes their runs. Returns how many
   * decisions it made (requirements decided by someone else first are not counted).
   */
  async sweep(): Promise<number> {
    const { repos, logger } = this.options;
    const now = this.clock.now();
    // Parked runs whose gates never got their clock (the owner died right after parking).
    for (const run of await repos.runs.listUntimedGates(100)) await repos.runs.startTimeouts(run, now);
    let decided = 0;
    for (const run of await repos.runs.listExpiredRequirements(now, 100)) {
      for (const requirement of undecidedRequirements(run)) {
        if (requirement.timeoutAt === null || requirement.timeoutAt > now) continue;
        const decision = timeoutDecision(requirement);
        if (!(await recordDecision(this.options, run, requirement, decision, now, now))) continue;
        decided += 1;
        logger.info({ runId: run.id, stepId: requirement.stepId, resolution: decision.resolution }, 'requirement timed out');
      }
    }
    return decided;
  }

  /** Sweeps every `intervalMs` until {@link stop}. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running = this.sweep().catch((error: unknown) => this.options.logger.error({ err: error }, 'timeout sweep failed'));
    }, this.options.intervalMs ?? 1_000);
    this.timer.unref();
  }

  /** Stops sweeping; resolves once a sweep in progress has finished. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
