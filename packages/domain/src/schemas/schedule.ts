/**
 * Schedules (issue #21 item 1; docs/guide/schedules.md): the request bodies and answers of
 * `/api/v1/workflows/{workflow_id}/schedules[...]` and `GET /api/v1/schedules`. The tick rules
 * (cron, interval, validation, limits) live in `schedule-spec.ts`; these schemas bound sizes and
 * shapes only, the service answers the rest with a 400 naming the path.
 */
import Type, { type Static } from 'typebox';
import { CLOSED, JsonObject, PageQuery, Pagination, Timestamp, nullable, objectIdString } from './common.ts';

/** Longest schedule name, characters. */
export const MAX_SCHEDULE_NAME_LENGTH = 200;
/** Longest note of a schedule (set on create, update, pause, resume), characters. */
export const MAX_SCHEDULE_NOTE_LENGTH = 1_000;
/** Largest `input` of a schedule, bytes of JSON text. */
export const MAX_SCHEDULE_INPUT_BYTES = 64 * 1024;
/** Most schedules one workflow may have (one more is a 409). */
export const MAX_SCHEDULES_PER_WORKFLOW = 100;
/** Most ticks `buffer_all` keeps waiting; one more is recorded as skipped. */
export const MAX_BUFFERED_TICKS = 1_000;
/** How many future ticks a schedule document shows (`nextRunTimes`). */
export const NEXT_RUN_TIMES = 5;

const OverlapPolicy = Type.Enum(['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'], {
  description:
    'What a tick does while an earlier run of this schedule has not ended: skip (default: record it skipped), buffer_one (at most one tick waits and ' +
    'starts when the run ends; later ones are skipped), buffer_all (every tick waits, started one after the other), cancel_other (cancel the ' +
    'running run, start the new one), allow_all (start it anyway)',
});

const Note = Type.String({ maxLength: MAX_SCHEDULE_NOTE_LENGTH, description: `Free text, at most ${MAX_SCHEDULE_NOTE_LENGTH} characters; the latest note replaces the earlier one` });

/** The settings a client sends (every field of an update is optional). */
const scheduleSettings = {
  cron: Type.Optional(
    nullable(Type.String({ minLength: 1, maxLength: 256, description: 'Cron, 5 fields (minute hour day month weekday) or 6 (seconds first), read in `timezone`; exactly one of cron and intervalSeconds' })),
  ),
  intervalSeconds: Type.Optional(nullable(Type.Integer({ description: 'Seconds between ticks, counted from the Unix epoch plus offsetSeconds; exactly one of cron and intervalSeconds' }))),
  offsetSeconds: Type.Optional(Type.Integer({ description: 'Seconds added to every interval tick, 0 ≤ offset < intervalSeconds (default 0)' })),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA time zone the cron is read in (default UTC)' })),
  startAt: Type.Optional(nullable(Timestamp)),
  endAt: Type.Optional(nullable(Timestamp)),
  jitterSeconds: Type.Optional(Type.Integer({ description: 'Each tick may start up to this many seconds late (default 0); its scheduledAt stays the nominal instant' })),
  input: Type.Optional(JsonObject),
  overlapPolicy: Type.Optional(OverlapPolicy),
  catchupWindowSeconds: Type.Optional(Type.Integer({ description: 'A tick missed by more than this (the service was down) is skipped, not fired (default 60, at least 10)' })),
  paused: Type.Optional(Type.Boolean()),
  note: Type.Optional(nullable(Note)),
  remainingRuns: Type.Optional(nullable(Type.Integer({ description: 'Ticks left to start runs; null: unlimited. At 0 the schedule stops firing' }))),
};

/** POST body of `/workflows/{workflow_id}/schedules`. */
export const ScheduleCreateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: MAX_SCHEDULE_NAME_LENGTH, description: 'Unique per workflow' }), ...scheduleSettings },
  { ...CLOSED, title: 'ScheduleCreateBody' },
);
export type ScheduleCreateBody = Static<typeof ScheduleCreateBody>;

/** PUT body: the fields to change. Giving `cron` or `intervalSeconds` replaces the spec's kind (the other becomes null). */
export const ScheduleUpdateBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SCHEDULE_NAME_LENGTH })), ...scheduleSettings },
  { ...CLOSED, title: 'ScheduleUpdateBody' },
);
export type ScheduleUpdateBody = Static<typeof ScheduleUpdateBody>;

/** Body of `/pause` and `/resume` (optional). */
export const ScheduleNoteBody = Type.Object({ note: Type.Optional(nullable(Note)) }, CLOSED);
export type ScheduleNoteBody = Static<typeof ScheduleNoteBody>;

/** Body of `/backfill`. */
export const ScheduleBackfillBody = Type.Object(
  {
    startAt: Timestamp,
    endAt: Timestamp,
    overlapPolicy: Type.Optional(OverlapPolicy),
  },
  { ...CLOSED, description: 'Every tick in [startAt, endAt), in order, at most 1,000; overlapPolicy default: the schedule\'s' },
);
export type ScheduleBackfillBody = Static<typeof ScheduleBackfillBody>;

/** One outcome in `recentRuns`: a run started for a tick, or why none was. */
export const RecentScheduleRunView = Type.Object({
  scheduledAt: Timestamp,
  startedAt: Type.Optional(Timestamp),
  runId: Type.Optional(Type.String()),
  status: Type.String({ description: 'The run\'s status when it was started, or `skipped`' }),
  reason: Type.Optional(Type.String({ description: 'Why a skipped tick started no run' })),
});

/** A schedule as the API shows it. */
export const ScheduleView = Type.Object(
  {
    id: Type.String(),
    workflowId: Type.String(),
    name: Type.String(),
    cron: nullable(Type.String()),
    intervalSeconds: nullable(Type.Integer()),
    offsetSeconds: Type.Integer(),
    timezone: Type.String(),
    startAt: nullable(Timestamp),
    endAt: nullable(Timestamp),
    jitterSeconds: Type.Integer(),
    input: JsonObject,
    overlapPolicy: OverlapPolicy,
    catchupWindowSeconds: Type.Integer(),
    paused: Type.Boolean(),
    note: nullable(Type.String()),
    remainingRuns: nullable(Type.Integer()),
    nextRunTimes: Type.Array(Timestamp, { description: `The next ${NEXT_RUN_TIMES} ticks (fewer when endAt or remainingRuns comes first)` }),
    recentRuns: Type.Array(RecentScheduleRunView, { description: 'The last 10 outcomes, oldest first' }),
    bufferedTicks: Type.Array(Timestamp, { description: 'Ticks waiting for the running run to end (buffer_one, buffer_all), oldest first' }),
    createdBy: nullable(Type.String()),
    updatedBy: nullable(Type.String()),
    changedBy: Type.Array(Type.String(), { maxItems: 100, description: 'Everyone who created the schedule or changed its settings (not a pause or resume): four-eyes counts them as triggers of its runs' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer(),
  },
  { title: 'Schedule' },
);
export type ScheduleView = Static<typeof ScheduleView>;

/** Query of `GET /workflows/{workflow_id}/schedules`. */
export const ScheduleListQuery = PageQuery;

/** Query of `GET /api/v1/schedules`. */
export const AllSchedulesQuery = Type.Object({
  ...PageQuery.properties,
  workflowId: Type.Optional(objectIdString('Only the schedules of this workflow')),
});
export type AllSchedulesQuery = Static<typeof AllSchedulesQuery>;

export const ScheduleListResponse = Type.Object({ schedules: Type.Array(ScheduleView), pagination: Pagination });
export type ScheduleListResponse = Static<typeof ScheduleListResponse>;

/** What became of one tick of a trigger or backfill. */
export const ScheduleTickOutcome = Type.Object({
  scheduledAt: Timestamp,
  outcome: Type.Enum(['started', 'skipped', 'buffered']),
  runId: nullable(Type.String()),
  runStatus: nullable(Type.String()),
  reason: nullable(Type.String()),
});
export type ScheduleTickOutcome = Static<typeof ScheduleTickOutcome>;

/** Answer of `/backfill`. */
export const ScheduleBackfillResponse = Type.Object({
  ticks: Type.Integer({ description: 'How many ticks the range held' }),
  started: Type.Integer(),
  outcomes: Type.Array(ScheduleTickOutcome, { description: 'One per tick, in order' }),
});
export type ScheduleBackfillResponse = Static<typeof ScheduleBackfillResponse>;
