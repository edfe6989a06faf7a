/**
 * Schedule use cases (issue #21 item 1; docs/guide/schedules.md): create, read, list, update,
 * delete, pause/resume with a note, trigger now and backfill. Validation: the tick rules of
 * domain `schedule-spec.ts` (`scheduleProblems`), the input's size and depth, and the workflow's
 * declared inputs (`checkedRunInput`), each failure a 400 with a problem per path. Ticks are fired
 * by `schedule-fire.ts`.
 */
import {
  ConflictError,
  InvalidRequestError,
  MAX_SCHEDULES_PER_WORKFLOW,
  MAX_SCHEDULE_INPUT_BYTES,
  MAX_USER_JSON_DEPTH,
  NEXT_RUN_TIMES,
  NotFoundError,
  jsonByteLength,
  jsonDepth,
  pagination,
  type ScheduleBackfillResponse,
  type ScheduleCreateBody,
  type ScheduleTickOutcome,
  type ScheduleUpdateBody,
  type ScheduleView,
  type Actor,
  type WorkflowRecord,
} from '@switchyard/domain';
import {
  DEFAULT_CATCHUP_WINDOW_SECONDS,
  TooManyTicksError,
  nextTicks,
  scheduleProblems,
  ticksBetween,
  toScheduleSpec,
  type OverlapPolicy,
  type ScheduleSpec,
  type ScheduleSpecInput,
} from '@switchyard/domain/schedule-spec';
import { MAX_SCHEDULE_CHANGERS, newId, type ScheduleChanges, type ScheduleRecord } from '@switchyard/store';

/** The floor of a schedule's period when the services do not say (the config default), seconds. */
const DEFAULT_MIN_INTERVAL_SECONDS = 10;
import { nextTickAfter, type FireOutcome } from '@switchyard/runner';
import type { TriggeringIdentity } from '../auth/identity.ts';
import { fireScheduleTick } from './schedule-fire.ts';
import { checkedRunInput, requireWorkflow } from './workflow-service.ts';
import { recordAudit } from './audit-trail.ts';
import type { AppServices } from './app-services.ts';

/** The schedule `scheduleId` of workflow `workflowId`, or 404 naming what is missing. */
export async function requireSchedule(services: AppServices, workflowId: string, scheduleId: string): Promise<ScheduleRecord> {
  const schedule = await services.repos.schedules.get(scheduleId);
  if (schedule && schedule.workflowDefinitionId === workflowId) return schedule;
  await requireWorkflow(services, workflowId);
  throw new NotFoundError('schedule');
}

/** Up to `count` ticks from the schedule's next one (inclusive), no more than its remaining runs. */
function upcoming(schedule: ScheduleRecord, count: number): Date[] {
  if (!schedule.nextFireAt) return [];
  const limit = Math.min(count, schedule.remainingRuns ?? count);
  if (limit <= 0) return [];
  return [schedule.nextFireAt, ...nextTicks(schedule.spec, schedule.nextFireAt, limit - 1)];
}

/** The API view of a schedule: settings, `nextRunTimes` (next 5), `recentRuns` (last 10), buffered ticks. */
export function scheduleView(schedule: ScheduleRecord): ScheduleView {
  const iso = (date: Date | null) => (date ? date.toISOString() : null);
  return {
    id: schedule.id,
    workflowId: schedule.workflowDefinitionId,
    name: schedule.name,
    cron: schedule.spec.cron,
    intervalSeconds: schedule.spec.intervalSeconds,
    offsetSeconds: schedule.spec.offsetSeconds,
    timezone: schedule.spec.timezone,
    startAt: iso(schedule.spec.startAt),
    endAt: iso(schedule.spec.endAt),
    jitterSeconds: schedule.spec.jitterSeconds,
    input: schedule.input,
    overlapPolicy: schedule.overlapPolicy,
    catchupWindowSeconds: schedule.catchupWindowSeconds,
    paused: schedule.paused,
    note: schedule.note,
    remainingRuns: schedule.remainingRuns,
    nextRunTimes: upcoming(schedule, NEXT_RUN_TIMES).map((date) => date.toISOString()),
    recentRuns: schedule.recentRuns.map((entry) =>
      'runId' in entry
        ? { scheduledAt: entry.scheduledAt.toISOString(), startedAt: entry.startedAt.toISOString(), runId: entry.runId, status: entry.status }
        : { scheduledAt: entry.scheduledAt.toISOString(), status: entry.status, reason: entry.reason },
    ),
    bufferedTicks: schedule.bufferedTicks.map((date) => date.toISOString()),
    createdBy: schedule.createdBy,
    updatedBy: schedule.updatedBy,
    changedBy: schedule.changedBy,
    createdAt: schedule.createdAt.toISOString(),
    updatedAt: schedule.updatedAt.toISOString(),
    version: schedule.version,
  };
}

/** A client's `startAt`/`endAt` text as a Date (an unparsable one stays an Invalid Date: scheduleProblems names it). */
function dateOf(value: string | null | undefined): Date | null | undefined {
  return value === undefined || value === null ? value : new Date(value);
}

/** The settings of a body as schedule-spec.ts reads them. */
function specInputOf(body: ScheduleUpdateBody): ScheduleSpecInput & { overlapPolicy?: string; catchupWindowSeconds?: number; remainingRuns?: number | null } {
  return {
    cron: body.cron,
    intervalSeconds: body.intervalSeconds,
    offsetSeconds: body.offsetSeconds,
    timezone: body.timezone,
    startAt: dateOf(body.startAt),
    endAt: dateOf(body.endAt),
    jitterSeconds: body.jitterSeconds,
    overlapPolicy: body.overlapPolicy,
    catchupWindowSeconds: body.catchupWindowSeconds,
    remainingRuns: body.remainingRuns,
  };
}

/**
 * `input` within bounds and matching the workflow's declared inputs (defaults applied). 400 with
 * problems under `/input` otherwise.
 */
function checkedScheduleInput(workflow: WorkflowRecord, input: Record<string, unknown>): Record<string, unknown> {
  const bytes = jsonByteLength(input);
  if (bytes > MAX_SCHEDULE_INPUT_BYTES) throw new InvalidRequestError(`input is ${bytes} bytes as JSON, more than the limit of ${MAX_SCHEDULE_INPUT_BYTES}`, [`/input: is larger than ${MAX_SCHEDULE_INPUT_BYTES} bytes`]);
  if (jsonDepth(input) > MAX_USER_JSON_DEPTH) throw new InvalidRequestError(`input nests deeper than ${MAX_USER_JSON_DEPTH} levels`, [`/input: nests deeper than ${MAX_USER_JSON_DEPTH} levels`]);
  try {
    checkedRunInput(workflow, input);
  } catch (error) {
    if (error instanceof InvalidRequestError) {
      throw new InvalidRequestError("input does not match the workflow's inputSchema", (error.problems ?? []).map((problem) => `/input${problem.startsWith('/') ? '' : ' '}${problem}`));
    }
    throw error;
  }
  // Stored as given: defaults are applied at each tick, so later schema defaults apply too.
  return input;
}

/** The shortest period a schedule may have, seconds (`SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS`). */
function minIntervalOf(services: AppServices): number {
  return services.scheduleMinIntervalSeconds ?? DEFAULT_MIN_INTERVAL_SECONDS;
}

/** 400 listing the problems, when there are any. */
function refuseProblems(problems: string[]): void {
  if (problems.length > 0) throw new InvalidRequestError('The schedule is not valid', problems);
}

/**
 * Creates a schedule of workflow `workflowId` by user `by` (its first tick computed from now).
 * 400 on invalid settings or input, 404 without the workflow, 409 on a taken name or when the
 * workflow has {@link MAX_SCHEDULES_PER_WORKFLOW} schedules.
 */
export async function createSchedule(services: AppServices, workflowId: string, body: ScheduleCreateBody, actor: Actor): Promise<ScheduleRecord> {
  const by = actor.userId;
  const workflow = await requireWorkflow(services, workflowId);
  const settings = specInputOf(body);
  refuseProblems(scheduleProblems(settings, minIntervalOf(services)));
  const input = checkedScheduleInput(workflow, (body.input ?? {}) as Record<string, unknown>);
  const full = () => new ConflictError(`A workflow has at most ${MAX_SCHEDULES_PER_WORKFLOW} schedules`, { limit: MAX_SCHEDULES_PER_WORKFLOW });
  if ((await services.repos.schedules.list(workflowId, 1, 1)).total >= MAX_SCHEDULES_PER_WORKFLOW) throw full();
  const spec = toScheduleSpec(settings);
  const now = services.clock.now();
  const id = newId();
  const created = await services.repos.schedules.create(
    {
      id,
      workflowDefinitionId: workflowId,
      name: body.name,
      spec,
      input,
      overlapPolicy: (body.overlapPolicy ?? 'skip') as OverlapPolicy,
      catchupWindowSeconds: body.catchupWindowSeconds ?? DEFAULT_CATCHUP_WINDOW_SECONDS,
      paused: body.paused ?? false,
      note: body.note ?? null,
      remainingRuns: body.remainingRuns ?? null,
      next: nextTickAfter(id, spec, now),
      createdBy: by,
    },
    now,
  );
  // Concurrent creates may each have counted 99: the one that finds more than the limit after its insert takes it back.
  if ((await services.repos.schedules.list(workflowId, 1, 1)).total > MAX_SCHEDULES_PER_WORKFLOW) {
    await services.repos.schedules.delete(created.id);
    throw full();
  }
  await recordAudit(services, workflowId, 'schedule.created', actor, { scheduleId: created.id, name: created.name });
  return created;
}

/** The spec after `body` changes `current` (giving `cron` or `intervalSeconds` replaces the kind). */
function mergedSpec(current: ScheduleSpec, body: ScheduleUpdateBody): ScheduleSpecInput {
  const kindGiven = body.cron !== undefined || body.intervalSeconds !== undefined;
  const interval = kindGiven ? (body.intervalSeconds ?? null) : current.intervalSeconds;
  return {
    cron: kindGiven ? (body.cron ?? null) : current.cron,
    intervalSeconds: interval,
    offsetSeconds: body.offsetSeconds ?? (interval === null ? 0 : current.offsetSeconds),
    timezone: body.timezone ?? current.timezone,
    startAt: body.startAt !== undefined ? dateOf(body.startAt) : current.startAt,
    endAt: body.endAt !== undefined ? dateOf(body.endAt) : current.endAt,
    jitterSeconds: body.jitterSeconds ?? current.jitterSeconds,
  };
}

/**
 * Applies a PUT by user `by`: the fields given change. A changed spec, a resume or new remaining
 * runs compute the next tick from now. 400 / 404 / 409 as {@link createSchedule}.
 */
export async function updateSchedule(services: AppServices, workflowId: string, scheduleId: string, body: ScheduleUpdateBody, actor: Actor): Promise<ScheduleRecord> {
  const by = actor.userId;
  const current = await requireSchedule(services, workflowId, scheduleId);
  const workflow = await requireWorkflow(services, workflowId);
  const specInput = mergedSpec(current.spec, body);
  const catchupWindowSeconds = body.catchupWindowSeconds ?? current.catchupWindowSeconds;
  refuseProblems(scheduleProblems({ ...specInput, overlapPolicy: body.overlapPolicy, catchupWindowSeconds, remainingRuns: body.remainingRuns }, minIntervalOf(services)));
  // Whoever sets what the runs do counts as a trigger of them (four-eyes); a pause or resume does not.
  const changes: ScheduleChanges = { updatedBy: by, ...(by === null ? {} : { changer: by }) };
  if (body.name !== undefined) changes.name = body.name;
  if (body.input !== undefined) changes.input = checkedScheduleInput(workflow, body.input as Record<string, unknown>);
  if (body.overlapPolicy !== undefined) changes.overlapPolicy = body.overlapPolicy as OverlapPolicy;
  if (body.catchupWindowSeconds !== undefined) changes.catchupWindowSeconds = body.catchupWindowSeconds;
  if (body.note !== undefined) changes.note = body.note;
  if (body.remainingRuns !== undefined) changes.remainingRuns = body.remainingRuns;
  if (body.paused !== undefined) changes.paused = body.paused;
  const spec = toScheduleSpec(specInput);
  const specChanged = JSON.stringify(spec) !== JSON.stringify(current.spec);
  const resumed = body.paused === false && current.paused;
  if (specChanged) changes.spec = spec;
  // New remaining runs for a schedule that had none left (its next tick stood still): from now on.
  const refilled = body.remainingRuns !== undefined && (current.nextFireAt === null || current.remainingRuns === 0);
  if (specChanged || resumed || refilled) changes.next = nextTickAfter(current.id, spec, services.clock.now());
  const updated = await services.repos.schedules.update(current.id, changes, services.clock.now());
  if (updated) {
    await recordAudit(services, workflowId, 'schedule.updated', actor, { scheduleId: updated.id, name: updated.name, fields: Object.keys(body).sort() });
    return updated;
  }
  await requireSchedule(services, workflowId, scheduleId);
  throw new ConflictError(`A schedule may be changed by at most ${MAX_SCHEDULE_CHANGERS} people (four-eyes counts them all as triggers of its runs): create a new schedule`, { limit: MAX_SCHEDULE_CHANGERS });
}

/** Deletes the schedule (buffered ticks go with it; runs it started stay). 404 when missing. */
export async function deleteSchedule(services: AppServices, workflowId: string, scheduleId: string, actor: Actor): Promise<void> {
  const { name } = await requireSchedule(services, workflowId, scheduleId);
  if (!(await services.repos.schedules.delete(scheduleId))) throw new NotFoundError('schedule');
  await recordAudit(services, workflowId, 'schedule.deleted', actor, { scheduleId, name });
}

/**
 * Pauses or resumes; `note` (when given) replaces the schedule's note. A resume computes the next
 * tick from now, so the ticks of the pause are neither fired nor recorded. Pausing a paused
 * schedule changes only its note.
 */
export async function setSchedulePaused(services: AppServices, workflowId: string, scheduleId: string, paused: boolean, note: string | null | undefined, actor: Actor): Promise<ScheduleRecord> {
  const by = actor.userId;
  const current = await requireSchedule(services, workflowId, scheduleId);
  const changes: ScheduleChanges = { paused, updatedBy: by };
  if (note !== undefined) changes.note = note;
  const now = services.clock.now();
  if (!paused && current.paused) changes.next = nextTickAfter(current.id, current.spec, now);
  const updated = await services.repos.schedules.update(current.id, changes, now);
  if (!updated) throw new NotFoundError('schedule');
  await recordAudit(services, workflowId, paused ? 'schedule.paused' : 'schedule.resumed', actor, { scheduleId: updated.id, name: updated.name, note: note ?? null });
  return updated;
}

/** The answer row of one fired tick. */
function outcomeView(scheduledAt: Date, outcome: FireOutcome): ScheduleTickOutcome {
  if (outcome.started) return { scheduledAt: scheduledAt.toISOString(), outcome: 'started', runId: outcome.runId, runStatus: outcome.runStatus, reason: null };
  if ('buffered' in outcome) return { scheduledAt: scheduledAt.toISOString(), outcome: 'buffered', runId: null, runStatus: null, reason: 'waits for the running run to end' };
  return { scheduledAt: scheduledAt.toISOString(), outcome: 'skipped', runId: null, runStatus: null, reason: outcome.reason };
}

/** Fires one tick outside the loop and records its outcome in `recentRuns` (a buffered one is recorded when it starts). */
async function fireAndRecord(services: AppServices, schedule: ScheduleRecord, scheduledAt: Date, overlapPolicy: OverlapPolicy | undefined, identity: TriggeringIdentity | undefined): Promise<FireOutcome> {
  const outcome = await fireScheduleTick(services, schedule, scheduledAt, { overlapPolicy, identity });
  const { schedules } = services.repos;
  if (outcome.started) await schedules.recordRecent(schedule.id, { scheduledAt, startedAt: outcome.startedAt, runId: outcome.runId, status: outcome.runStatus });
  else if (!('buffered' in outcome)) await schedules.recordRecent(schedule.id, { scheduledAt, status: 'skipped', reason: outcome.reason });
  return outcome;
}

/**
 * Runs the schedule now (`POST .../trigger`): a tick with `scheduledAt` = now, the overlap policy
 * applied, triggered by `identity` (the caller), `remainingRuns` not consumed; works while paused.
 */
export async function triggerSchedule(services: AppServices, workflowId: string, scheduleId: string, identity: TriggeringIdentity): Promise<ScheduleTickOutcome> {
  const schedule = await requireSchedule(services, workflowId, scheduleId);
  const now = services.clock.now();
  return outcomeView(now, await fireAndRecord(services, schedule, now, undefined, identity));
}

/**
 * Fires every tick of the schedule in `[startAt, endAt)` in order (`POST .../backfill`), with
 * `overlapPolicy` (default the schedule's); `remainingRuns` not consumed. 400 when the range is
 * empty or reversed, or holds more than 1,000 ticks (nothing fired then).
 */
export async function backfillSchedule(
  services: AppServices,
  workflowId: string,
  scheduleId: string,
  range: { startAt: string; endAt: string; overlapPolicy?: string },
  identity: TriggeringIdentity,
): Promise<ScheduleBackfillResponse> {
  const schedule = await requireSchedule(services, workflowId, scheduleId);
  const from = new Date(range.startAt);
  const to = new Date(range.endAt);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) throw new InvalidRequestError('startAt and endAt must be date-times', ['/startAt: must be a date-time']);
  if (from >= to) throw new InvalidRequestError('endAt must be after startAt', ['/endAt: must be after startAt']);
  // The past only: a future tick is the loop's to fire (a backfill would take it first).
  if (to > services.clock.now()) throw new InvalidRequestError('endAt must not be in the future: backfill fills ticks that have passed', ['/endAt: must not be after now']);
  let ticks: Date[];
  try {
    ticks = ticksBetween(schedule.spec, from, to);
  } catch (error) {
    if (error instanceof TooManyTicksError) throw new InvalidRequestError(`The range holds more than ${error.max} ticks; backfill it in parts`, [`/endAt: the range holds more than ${error.max} ticks`]);
    throw error;
  }
  const outcomes: ScheduleTickOutcome[] = [];
  for (const tick of ticks) {
    // Re-read: a tick buffered by the one before must be seen by the next.
    const current = (await services.repos.schedules.get(schedule.id)) ?? schedule;
    outcomes.push(outcomeView(tick, await fireAndRecord(services, current, tick, range.overlapPolicy as OverlapPolicy | undefined, identity)));
  }
  return { ticks: ticks.length, started: outcomes.filter((outcome) => outcome.outcome === 'started').length, outcomes };
}

/** One page of a workflow's schedules (404 without the workflow). */
export async function listSchedules(services: AppServices, workflowId: string, page: number, perPage: number) {
  await requireWorkflow(services, workflowId);
  const { items, total } = await services.repos.schedules.list(workflowId, page, perPage);
  return { schedules: items.map(scheduleView), pagination: pagination(total, page, perPage) };
}

/** One page of the schedules across the workflows of `workflowIds` (undefined: all), optionally of one workflow. */
export async function listAllSchedules(services: AppServices, workflowIds: string[] | undefined, workflowId: string | undefined, page: number, perPage: number) {
  let ids = workflowIds;
  if (workflowId !== undefined) ids = ids === undefined || ids.includes(workflowId) ? [workflowId] : [];
  const { items, total } = await services.repos.schedules.listAll(ids === undefined ? {} : { workflowIds: ids }, page, perPage);
  return { schedules: items.map(scheduleView), pagination: pagination(total, page, perPage) };
}
