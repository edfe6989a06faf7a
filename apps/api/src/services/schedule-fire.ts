/**
 * What a schedule's tick does (issue #21 item 1; docs/guide/schedules.md): the `fire` callback of
 * the runner's ScheduleLoop, also used by `/trigger` and `/backfill`, and the start of buffered
 * ticks once the run that blocked them has ended.
 *
 * A tick loads the workflow (deleted or disabled: skipped with the reason), checks the schedule's
 * input against the workflow's declared inputs (`checkedRunInput`), applies the overlap policy
 * to the schedule's unfinished runs (`RunReads.listUnfinishedBySchedule`), and creates the run
 * through the one run factory (`createRun`, by `startLiveRunOnce`) inside the one idempotency mechanism (`onceForKey`,
 * key `schedule:<scheduleId>:<scheduledAt ISO>`), so a tick fired twice makes one run.
 */
import { InvalidRequestError, MAX_BUFFERED_TICKS, type Actor, type RunRecord, type WorkflowRecord } from '@switchyard/domain';
import type { OverlapPolicy } from '@switchyard/domain/schedule-spec';
import type { ScheduleRecord } from '@switchyard/store';
import { requestDirective, type FireOutcome } from '@switchyard/runner';
import type { TriggeringIdentity } from '../auth/identity.ts';
import { startLiveRunOnce } from './run-service.ts';
import { checkedRunInput } from './workflow-service.ts';
import type { AppServices } from './app-services.ts';

/** Most unfinished runs of a schedule one tick looks at (cancel_other cancels at most these; the rest on later ticks). */
const MAX_OVERLAP_RUNS = 100;

/** Schedules with buffered ticks one listing looks at. */
const BUFFERED_BATCH = 100;

/** Listings of schedules with buffered ticks one loop pass makes (at most 1,000 schedules). */
const MAX_BUFFERED_PAGES = 10;

/** The `triggerSource` of every run a schedule starts. */
export const SCHEDULE_TRIGGER_SOURCE = 'schedule';

/**
 * Who a loop-fired run says triggered it: user id `schedule:<id>`, username `schedule:<name>`,
 * `via: system`, no scopes (executors mint downstream tokens without any).
 */
export function scheduleIdentity(schedule: Pick<ScheduleRecord, 'id' | 'name'>): TriggeringIdentity {
  return { ...scheduleActor(schedule), scopes: [] };
}

/** The schedule as an actor (the `cancelledBy` of a run it cancels; its runs' `triggeredBy`). */
function scheduleActor(schedule: Pick<ScheduleRecord, 'id' | 'name'>): Actor & { via: 'system' } {
  return { userId: `schedule:${schedule.id}`, username: `schedule:${schedule.name}`, via: 'system' };
}

/** How one tick should be fired. */
export interface FireOptions {
  /** Overrides the schedule's policy (a backfill's `overlapPolicy`). */
  overlapPolicy?: OverlapPolicy;
  /** Who triggers (a caller's `/trigger`); default {@link scheduleIdentity}. */
  identity?: TriggeringIdentity;
  /** The loop's claim of this tick took one of `remainingRuns` (a buffered tick keeps it; given back if skipped later). Default false: `/trigger`, `/backfill`. */
  tookRun?: boolean;
}

/**
 * What a tick of `schedule` starts its run with: the workflow and the schedule's input checked
 * against its declared inputs (defaults applied); or why it cannot start one now (`gone`: the
 * workflow no longer exists; else it is disabled, or the input does not fit).
 */
async function tickStart(services: AppServices, schedule: ScheduleRecord): Promise<{ workflow: WorkflowRecord; input: Record<string, unknown> } | { reason: string; gone: boolean }> {
  const workflow = await services.repos.definitions.get(schedule.workflowDefinitionId);
  if (!workflow) return { reason: 'the workflow no longer exists', gone: true };
  if (!workflow.enabled) return { reason: 'the workflow is disabled', gone: false };
  try {
    return { workflow, input: checkedRunInput(workflow, schedule.input) };
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    const problems = error.problems?.length ? `: ${error.problems.slice(0, 5).join('; ')}` : '';
    return { reason: `the schedule's input does not match the workflow's inputSchema${problems}`, gone: false };
  }
}

/**
 * Fires one tick of `schedule` at `scheduledAt` (the ScheduleLoop's `fire`): started, skipped
 * with a reason, or buffered. Throws store errors (the loop records them as skipped).
 */
export async function fireScheduleTick(services: AppServices, schedule: ScheduleRecord, scheduledAt: Date, options: FireOptions = {}): Promise<FireOutcome> {
  // Fired before (by a loop that died before recording it): the run exists; the policy must not judge it against itself.
  const existing = await services.repos.runs.findByScheduleTick(schedule.id, scheduledAt);
  if (existing) return { started: true, runId: existing.id, runStatus: existing.status, startedAt: existing.startedAt };
  const start = await tickStart(services, schedule);
  if ('reason' in start) {
    // Created while its workflow was being deleted (the delete removed the schedules it saw): it goes too.
    if (start.gone) await services.repos.schedules.delete(schedule.id);
    return { started: false, reason: start.reason };
  }
  const { workflow, input } = start;
  const policy = options.overlapPolicy ?? schedule.overlapPolicy;
  // Fired again after its loop stopped: a tick already buffered stays buffered (it starts when the run ends).
  if (schedule.bufferedTicks.some((tick) => tick.getTime() === scheduledAt.getTime())) return { started: false, buffered: true };
  if (policy !== 'allow_all') {
    const running = await services.repos.runs.listUnfinishedBySchedule(schedule.id, MAX_OVERLAP_RUNS);
    // This tick's own run (made meanwhile by a loop firing it too) is not an overlap: it is the answer.
    const own = running.find((run) => run.scheduledAt?.getTime() === scheduledAt.getTime());
    if (own) return { started: true, runId: own.id, runStatus: own.status, startedAt: own.startedAt };
    const waiting = schedule.bufferedTicks.length > 0;
    switch (policy) {
      case 'skip':
        if (running.length > 0) return { started: false, reason: `run ${running[0]!.id} of this schedule is still ${running[0]!.status} (overlapPolicy skip)` };
        break;
      case 'buffer_one':
      case 'buffer_all':
        if (running.length > 0 || waiting) {
          const max = policy === 'buffer_one' ? 1 : MAX_BUFFERED_TICKS;
          if (await services.repos.schedules.bufferTick(schedule.id, scheduledAt, max, options.tookRun === true)) return { started: false, buffered: true };
          const already = schedule.bufferedTicks.some((tick) => tick.getTime() === scheduledAt.getTime());
          return {
            started: false,
            reason: already
              ? 'this tick already waits for the running run'
              : policy === 'buffer_one'
                ? 'a tick already waits for the running run (overlapPolicy buffer_one)'
                : `${MAX_BUFFERED_TICKS} ticks already wait (overlapPolicy buffer_all)`,
          };
        }
        break;
      case 'cancel_other':
        for (const run of running) {
          const reason = `cancelled by schedule '${schedule.name}' (overlapPolicy cancel_other) for its tick at ${scheduledAt.toISOString()}`;
          await requestDirective({ repos: services.repos, clock: services.clock, engine: services.engine, logger: services.logger }, run.id, {
            directive: 'cancel',
            requestedBy: scheduleActor(schedule),
            reason,
          }).catch((error: unknown) => services.logger?.warn({ err: error, runId: run.id, scheduleId: schedule.id }, 'cancel_other: run not cancelled'));
        }
        break;
    }
  }
  const run = await startScheduledRun(services, workflow, schedule, scheduledAt, input, options.identity);
  return { started: true, runId: run.id, runStatus: run.status, startedAt: run.startedAt };
}

/**
 * Creates the run of one tick, at most once per `(schedule, scheduledAt)`: `onceForKey` with key
 * `schedule:<id>:<ISO>` (a second call returns the first run). The run has `triggerSource:
 * "schedule"`, `scheduleId`, `scheduledAt`, the schedule's input; its trigger lineage holds the
 * schedule's creator and everyone who changed its settings (`changedBy`), so four-eyes keeps them
 * from approving its gates.
 */
async function startScheduledRun(
  services: AppServices,
  workflow: WorkflowRecord,
  schedule: ScheduleRecord,
  scheduledAt: Date,
  input: Record<string, unknown>,
  identity: TriggeringIdentity = scheduleIdentity(schedule),
): Promise<RunRecord> {
  const key = `schedule:${schedule.id}:${scheduledAt.toISOString()}`;
  const editors = [...new Set([schedule.createdBy, ...schedule.changedBy].filter((id): id is string => id !== null))];
  return startLiveRunOnce(services, workflow, key, { scheduleId: schedule.id, scheduledAt: scheduledAt.toISOString() }, {
    triggerSource: SCHEDULE_TRIGGER_SOURCE,
    initialInput: input,
    identity,
    source: { triggeringUserId: null, triggerLineage: editors },
    origin: { scheduleId: schedule.id, scheduledAt },
  });
}

/**
 * Starts the first buffered tick of every schedule whose runs have all ended (the ScheduleLoop's
 * `startBuffered`, each pass; the run may have ended on any instance). The run is created first
 * (idempotently), then the tick leaves the buffer by a compare-and-set on the buffer's head, so of
 * several instances one records it. A tick of a deleted or disabled workflow leaves the buffer as
 * skipped. Resolves to how many runs started.
 */
export async function startBufferedTicks(services: AppServices, now: Date): Promise<number> {
  let started = 0;
  // Page by page (bounded): schedules whose run still goes must not hide the others.
  for (let page = 0; page < MAX_BUFFERED_PAGES; page++) {
    const batch = await services.repos.schedules.listBuffered(now, BUFFERED_BATCH, page * BUFFERED_BATCH);
    for (const schedule of batch) {
      const count = await startBufferedTick(services, schedule);
      started += count;
    }
    if (batch.length < BUFFERED_BATCH) break;
  }
  return started;
}

/** Starts the head of `schedule`'s buffer if its runs have all ended (see {@link startBufferedTicks}); 1 when a run started. */
async function startBufferedTick(services: AppServices, schedule: ScheduleRecord): Promise<number> {
  const { schedules, runs } = services.repos;
  const head = schedule.bufferedTicks[0];
  if (!head) return 0;
  try {
    if ((await runs.listUnfinishedBySchedule(schedule.id, 1)).length > 0) return 0;
    const start = await tickStart(services, schedule);
    if ('reason' in start) {
      if (await schedules.popBuffered(schedule.id, head)) {
        // Only a run the loop's claim took comes back (a trigger's or backfill's took none).
        if (schedule.bufferedTookRun.some((tick) => tick.getTime() === head.getTime())) await schedules.refundRun(schedule.id);
        await schedules.recordRecent(schedule.id, { scheduledAt: head, status: 'skipped', reason: start.reason });
      }
      return 0;
    }
    const run = await startScheduledRun(services, start.workflow, schedule, head, start.input);
    if (!(await schedules.popBuffered(schedule.id, head))) return 0;
    await schedules.recordRecent(schedule.id, { scheduledAt: head, startedAt: run.startedAt, runId: run.id, status: run.status });
    services.logger?.info({ scheduleId: schedule.id, scheduledAt: head, runId: run.id }, 'buffered scheduled run started');
    return 1;
  } catch (error) {
    services.logger?.error({ err: error, scheduleId: schedule.id, scheduledAt: head }, 'buffered schedule tick not started');
    return 0;
  }
}
