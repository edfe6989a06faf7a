/**
 * The schedule loop (issue #21 item 1): every `intervalMs`, takes the schedules whose next tick
 * is due (`Schedules.listDue`) and, for each due tick in order:
 * - claims it with `Schedules.claimTick`, a compare-and-set on `next_fire_at` that moves it to the
 *   following tick, so of any number of loops (engines) sharing a store exactly one takes a tick;
 * - if the tick is due by more than the schedule's `catchupWindowSeconds` (the loop was down or
 *   behind), does not fire it: one claim skips every tick before the window and records one
 *   `skipped` outcome naming them;
 * - else fires it through the injected {@link ScheduleLoopOptions.fire} (the API creates the run,
 *   idempotently keyed by `(scheduleId, scheduledAt)`, applying the overlap policy and the
 *   workflow's enabled flag) and records the outcome in `recent_runs`.
 * `remainingRuns` is taken in the claim of a tick to fire (never for a skipped one) and given back
 * when `fire` reports the tick skipped or fails. Time comes from the injected `Clock` only.
 *
 * A tick claimed to fire is in flight (the schedule's `firing`) until its outcome is settled
 * (`Schedules.settleTick`, a compare-and-set on that entry: one loop records it). A loop that dies
 * in between leaves it there; after `staleFiringMs` any loop fires it again (`fire` is
 * idempotent per tick: `fireScheduleTick` first looks for the tick's run), so a crash between
 * claim and run creation loses no tick.
 */
import { jitterMs, nextTicks, type ScheduleSpec } from '@switchyard/domain/schedule-spec';
import type { NextTick, ScheduleRecord, Schedules } from '@switchyard/store';
import { systemClock, type Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { PeriodicLoop, type LoopStatus } from './loop-status.ts';

/**
 * What {@link ScheduleLoopOptions.fire} did with a tick: started a run; skipped it (overlap policy,
 * disabled workflow) and why; or buffered it (`buffer_one`/`buffer_all`: it starts when the running
 * run ends, through {@link ScheduleLoopOptions.startBuffered}; its outcome is recorded then, and the
 * run it took from `remainingRuns` stays taken).
 */
export type FireOutcome =
  | { started: true; runId: string; runStatus: string; startedAt: Date }
  | { started: false; reason: string }
  | { started: false; buffered: true };

/**
 * Starts the run of one tick. `schedule` is the schedule as claimed (its `nextFireAt` already the
 * following tick; `overlapPolicy`, `input`, `workflowDefinitionId` as stored); `scheduledAt` the
 * tick's nominal instant; `tick.tookRun`, whether its claim took one of `remainingRuns` (a buffered
 * tick keeps it, and gives it back if it is skipped later). Must be idempotent per `(schedule.id,
 * scheduledAt)`. A throw is logged, recorded as a skipped tick and gives the run back.
 */
export type FireTick = (schedule: ScheduleRecord, scheduledAt: Date, tick: { tookRun: boolean }) => Promise<FireOutcome>;

export interface ScheduleLoopOptions {
  schedules: Schedules;
  fire: FireTick;
  logger: Logger;
  clock?: Clock;
  /** Pass period, milliseconds (default 1,000). */
  intervalMs?: number;
  /** Schedules one listing of a pass takes (default 100); a full listing is followed by the next, up to 10 per pass. */
  batchSize?: number;
  /**
   * How long a claimed tick may stay in flight (claimed, its run not yet recorded) before another
   * loop fires it again, ms (default 60,000): the claiming process died in between. Run creation
   * is idempotent per tick, so a slow loop and the one taking over make one run.
   */
  staleFiringMs?: number;
  /** Most ticks of one schedule one pass fires (default 100: a catch-up of many ticks is spread over passes). */
  maxTicksPerSchedule?: number;
  /**
   * Called at the start of every pass with its `now`: starts the buffered ticks whose blocking run
   * has ended (also when it ended on another instance). Resolves to how many runs it started.
   * Default: none (nothing is ever buffered without it).
   */
  startBuffered?: (now: Date) => Promise<number>;
}

/** The tick after `after` of a schedule with id `scheduleId`, with its jittered due time; null when the spec has none left. */
export function nextTickAfter(scheduleId: string, spec: ScheduleSpec, after: Date): NextTick | null {
  const [fireAt] = nextTicks(spec, after, 1);
  return fireAt ? { fireAt, dueAt: new Date(fireAt.getTime() + jitterMs(spec, scheduleId, fireAt)) } : null;
}

/** Most batches of due schedules one pass takes (a full batch: the next one at once). */
const MAX_BATCHES_PER_PASS = 10;

/** Schedules whose ticks one pass fires at once (each schedule's own ticks stay in order). */
const FIRE_CONCURRENCY = 4;

export class ScheduleLoop {
  private readonly clock: Clock;
  private readonly loop: PeriodicLoop;

  constructor(private readonly options: ScheduleLoopOptions) {
    this.clock = options.clock ?? systemClock;
    this.loop = new PeriodicLoop({
      clock: this.clock,
      intervalMs: options.intervalMs ?? 1_000,
      pass: () => this.pass(),
      onError: (error) => options.logger.error({ err: error }, 'schedule pass failed'),
    });
  }

  /** The loop's state (loop-status.ts): `lastRunAt` is when the last pass finished without an error. */
  loopStatus(): LoopStatus {
    return this.loop.status;
  }

  /** One pass over the due schedules (see the module comment). Resolves to how many ticks it fired (started a run for). Rejects with store errors. */
  async pass(): Promise<number> {
    const now = this.clock.now();
    let fired = 0;
    if (this.options.startBuffered) {
      try {
        fired += await this.options.startBuffered(now);
      } catch (error) {
        this.options.logger.error({ err: error }, 'buffered schedule ticks not started');
      }
    }
    try {
      fired += await this.refireStale(now);
    } catch (error) {
      this.options.logger.error({ err: error }, 'stale schedule ticks not fired again');
    }
    const batchSize = this.options.batchSize ?? 100;
    // A full batch means more schedules are due: take the next one in this pass (bounded), not a
    // period later. A schedule is handled once a pass (still due after maxTicksPerSchedule ticks, or
    // after an error, it waits for the next pass), so a listing skips the ones handled.
    const handled = new Set<string>();
    for (let batch = 0; batch < MAX_BATCHES_PER_PASS; batch++) {
      const limit = batchSize + handled.size;
      const listed = await this.options.schedules.listDue(now, limit);
      const due = listed.filter((schedule) => !handled.has(schedule.id));
      for (const schedule of due) handled.add(schedule.id);
      const count = await this.fireSchedules(due, now);
      fired += count;
      if (listed.length < limit || due.length === 0) break;
    }
    return fired;
  }

  /** Handles the due ticks of `due`, up to {@link FIRE_CONCURRENCY} schedules at once (each schedule's ticks in order). */
  private async fireSchedules(due: readonly ScheduleRecord[], now: Date): Promise<number> {
    let fired = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < due.length) {
        const schedule = due[next++]!;
        try {
          // Not `fired += await …`: that reads `fired` before the await, losing the other workers' counts.
          const count = await this.runDueTicks(schedule, now);
          fired += count;
        } catch (error) {
          this.options.logger.error({ err: error, scheduleId: schedule.id }, 'schedule tick failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FIRE_CONCURRENCY, due.length) }, worker));
    return fired;
  }

  /** Claims and handles the due ticks of one schedule, in order, until none is due, another loop wins one, or the per-pass bound. */
  private async runDueTicks(schedule: ScheduleRecord, now: Date): Promise<number> {
    const { schedules, logger } = this.options;
    const windowStart = new Date(now.getTime() - schedule.catchupWindowSeconds * 1000);
    let current: ScheduleRecord | null = schedule;
    let fired = 0;
    for (let n = 0; n < (this.options.maxTicksPerSchedule ?? 100); n++) {
      if (!current || current.paused || !current.nextFireAt || !current.dueAt || current.dueAt > now || current.remainingRuns === 0) break;
      const tick: Date = current.nextFireAt;
      if (current.dueAt < windowStart) {
        // Too late: skip this tick and every other one before the window, in one claim.
        const next = nextTickAfter(current.id, current.spec, new Date(windowStart.getTime() - 1));
        const claimed = await schedules.claimTick(current.id, tick, next, now);
        if (claimed) {
          const reason = `missed by more than the catch-up window (${current.catchupWindowSeconds} s): ticks from ${tick.toISOString()} to before ${next ? next.fireAt.toISOString() : 'the end'} skipped`;
          await schedules.recordRecent(current.id, { scheduledAt: tick, status: 'skipped', reason });
          logger.warn({ scheduleId: current.id, scheduledAt: tick, resumesAt: next?.fireAt ?? null }, 'schedule ticks skipped (outside the catch-up window)');
        }
        current = claimed;
        continue;
      }
      // Claimed now, not at the pass's start: another loop judges the claim stale by this time.
      const claimed = await schedules.claimTick(current.id, tick, nextTickAfter(current.id, current.spec, tick), this.clock.now(), current.remainingRuns, true);
      if (!claimed) break; // another loop took it (or a client changed the schedule): it goes on from there
      if (await this.fireTick(claimed, tick, current.remainingRuns !== null)) fired += 1;
      current = claimed;
    }
    return fired;
  }

  /**
   * Fires again the ticks claimed more than `staleFiringMs` ago and never settled (their loop died
   * between the claim and recording the run; the crash gap of a claim-then-create). Resolves to
   * how many runs started.
   */
  private async refireStale(now: Date): Promise<number> {
    const staleBefore = new Date(now.getTime() - (this.options.staleFiringMs ?? 60_000));
    let fired = 0;
    for (const { schedule, ticks } of await this.options.schedules.listStaleFiring(staleBefore, this.options.batchSize ?? 100)) {
      for (const { scheduledAt, tookRun } of ticks) {
        this.options.logger.warn({ scheduleId: schedule.id, scheduledAt }, 'schedule tick left in flight by a loop that stopped: firing it again');
        if (await this.fireTick(schedule, scheduledAt, tookRun)) fired += 1;
      }
    }
    return fired;
  }

  /**
   * Fires one claimed tick and settles it (Schedules.settleTick: records its outcome, gives the run
   * back unless one started or the tick was buffered). True when a run started and this loop
   * recorded it.
   */
  private async fireTick(schedule: ScheduleRecord, scheduledAt: Date, tookRun: boolean): Promise<boolean> {
    const { schedules, logger } = this.options;
    let outcome: FireOutcome;
    try {
      outcome = await this.options.fire(schedule, scheduledAt, { tookRun });
    } catch (error) {
      logger.error({ err: error, scheduleId: schedule.id, scheduledAt }, 'scheduled run not started');
      outcome = { started: false, reason: `the run could not be started: ${(error as Error)?.message ?? String(error)}` };
    }
    if ('buffered' in outcome) {
      await schedules.settleTick(schedule.id, scheduledAt, null, false);
      logger.info({ scheduleId: schedule.id, scheduledAt }, 'schedule tick buffered');
      return false;
    }
    if (outcome.started) {
      const recorded = await schedules.settleTick(schedule.id, scheduledAt, { scheduledAt, startedAt: outcome.startedAt, runId: outcome.runId, status: outcome.runStatus }, false);
      logger.info({ scheduleId: schedule.id, scheduledAt, runId: outcome.runId }, 'scheduled run started');
      return recorded;
    }
    await schedules.settleTick(schedule.id, scheduledAt, { scheduledAt, status: 'skipped', reason: outcome.reason }, tookRun);
    logger.info({ scheduleId: schedule.id, scheduledAt, reason: outcome.reason }, 'schedule tick skipped');
    return false;
  }

  /** Runs a pass every `intervalMs` until {@link stop}; a pass still running when the timer fires again is not overlapped. */
  start(): void {
    this.loop.start();
  }

  /** Stops the loop; resolves once a pass in progress has finished. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
