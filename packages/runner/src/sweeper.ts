/**
 * The HITL timeout sweeper (DESIGN.md "HITL v2"): now and then, decides every undecided
 * requirement whose `timeoutAt` has passed according to its `onTimeout`, through the very same
 * compare-and-set as a human decision, so a human and a timeout racing on one gate produce
 * exactly one winner. Timeouts come from the stored `timeout_at`, so they survive restarts; any
 * number of instances may sweep at once.
 *
 * It also enforces run timeouts (the trigger's `timeoutSeconds`): a run not ended by its
 * `deadline_at` gets a `timeout` directive, carried out like a cancel (directives.ts) and ending the
 * run `failed`. The deadline is stored, so it holds across restarts.
 */
import { TIMEOUT_ACTOR, timeoutDecision, undecidedRequirements } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import { recordDecision } from './decisions.ts';
import { requestDirective } from './directives.ts';
import type { RunEngine } from './engine.ts';
import type { Logger } from './logger.ts';
import { PeriodicLoop, type LoopStatus } from './loop-status.ts';

export interface TimeoutSweeperOptions {
  repos: Repositories;
  /** Continues a run after a timeout decided one of its gates (the engine's `start`). */
  wake: (runId: string) => unknown;
  /** This instance's engine, to stop a timed-out run it executes at once (else its owner's heartbeat brings the directive). */
  engine?: Pick<RunEngine, 'signal' | 'start'>;
  logger: Logger;
  clock?: Clock;
  /** Sweep period, milliseconds (default 1,000). */
  intervalMs?: number;
}

export class TimeoutSweeper {
  private readonly clock: Clock;
  private readonly loop: PeriodicLoop;

  constructor(private readonly options: TimeoutSweeperOptions) {
    this.clock = options.clock ?? systemClock;
    this.loop = new PeriodicLoop({
      clock: this.clock,
      intervalMs: options.intervalMs ?? 1_000,
      pass: () => this.sweep(),
      onError: (error) => options.logger.error({ err: error }, 'timeout sweep failed'),
    });
  }

  /** The sweep loop's state (loop-status.ts): `lastRunAt` is when the last sweep finished without an error (sweeper clock). */
  loopStatus(): LoopStatus {
    return this.loop.status;
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
    await this.stopOverdueRuns(now);
    return decided;
  }

  /** Issues the `timeout` directive to every run past its deadline. Returns how many it stopped or asked to stop. */
  async stopOverdueRuns(now: Date): Promise<number> {
    const { repos, logger } = this.options;
    const engine = this.options.engine ?? { signal: () => null, start: async (runId: string) => void this.options.wake(runId) };
    let stopped = 0;
    for (const run of await repos.runs.listOverdue(now, 100)) {
      try {
        const result = await requestDirective({ repos, clock: this.clock, engine, logger }, run.id, { directive: 'timeout', requestedBy: TIMEOUT_ACTOR });
        if (result?.changed) {
          stopped += 1;
          logger.info({ runId: run.id, timeoutSeconds: run.timeoutSeconds }, 'run timed out');
        }
      } catch (error) {
        logger.warn({ err: error, runId: run.id }, 'run timeout not applied (the run ended meanwhile?)');
      }
    }
    return stopped;
  }

  /** Sweeps every `intervalMs` until {@link stop} (a sweep still running when the timer fires again is not overlapped). */
  start(): void {
    this.loop.start();
  }

  /** Stops sweeping; resolves once a sweep in progress has finished. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
