/**
 * When a schedule fires (issue #21 item 1; Temporal Schedules is the anchor): a cron expression in
 * an IANA time zone, or a fixed interval counted from the Unix epoch plus an offset, bounded by
 * `startAt` (inclusive) and `endAt` (exclusive). Pure: no clock, no store.
 *
 * - Cron: the 5-field (minute) and 6-field (second) forms, parsed and stepped by `croner` (no
 *   hand-written cron). Across DST a *fixed-time* expression (no wildcard or step in its second,
 *   minute and hour fields, e.g. `30 2 * * *`) fires at the first valid instant after a local time
 *   that does not exist (Europe/Berlin 2026-03-29 02:30 → 03:00 CEST = 01:00Z) and once for a
 *   local time that occurs twice (2026-10-25 02:30 → the first one, 00:30Z); other expressions
 *   (`*\/30 * * * *`) fire at every real instant they match (croner's `fixedTimeRule: 'no-wildcard'`).
 * - Interval: ticks at `k * intervalSeconds + offsetSeconds` seconds since the epoch (UTC; the
 *   time zone does not matter), as Temporal's interval specs.
 * - Jitter: each tick may be delayed by up to `jitterSeconds`, by an amount derived from the
 *   schedule id and the tick ({@link jitterMs}) so every engine computes the same delay; the
 *   tick's `scheduledAt` stays the nominal instant.
 *
 * {@link scheduleProblems} checks the settings of a schedule and returns `/path: message` strings,
 * the `problems` of a 400 `invalid_request`. Import from `@switchyard/domain/schedule-spec` (not the
 * package index, so code without schedules does not load croner).
 */
import { Cron } from 'croner';

/** The overlap policies (Temporal's names, snake_case): what a tick does while an earlier run of the schedule is still going. */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** Smallest interval, seconds. */
export const MIN_INTERVAL_SECONDS = 1;
/** Largest interval, seconds (about 10 years; keeps tick arithmetic far from Date's range). */
export const MAX_INTERVAL_SECONDS = 10 * 366 * 24 * 3600;
/** Largest jitter, seconds (one day; it must also stay below the interval). */
export const MAX_JITTER_SECONDS = 24 * 3600;
/** Smallest catch-up window, seconds. */
export const MIN_CATCHUP_WINDOW_SECONDS = 10;
/** Default catch-up window, seconds. */
export const DEFAULT_CATCHUP_WINDOW_SECONDS = 60;
/** Largest catch-up window, seconds (one year). */
export const MAX_CATCHUP_WINDOW_SECONDS = 366 * 24 * 3600;
/** Most ticks one backfill (or one {@link ticksBetween} call) may produce. */
export const MAX_BACKFILL_TICKS = 1_000;
/** Longest cron expression accepted, characters. */
export const MAX_CRON_LENGTH = 256;

/** A schedule's spec with its defaults applied. Exactly one of `cron` and `intervalSeconds` is set. */
export interface ScheduleSpec {
  /** 5 fields (minute precision) or 6 (the first is seconds); null for an interval spec. */
  readonly cron: string | null;
  /** Seconds between ticks, ≥ 1; null for a cron spec. */
  readonly intervalSeconds: number | null;
  /** Seconds added to every interval tick, 0 ≤ offset < interval (ignored by cron). */
  readonly offsetSeconds: number;
  /** IANA time zone the cron is read in (default `UTC`). */
  readonly timezone: string;
  /** No tick before this instant (inclusive); null: none. */
  readonly startAt: Date | null;
  /** No tick at or after this instant (exclusive); null: none. */
  readonly endAt: Date | null;
  /** Each tick fires up to this many seconds late (see {@link jitterMs}); 0: exactly on time. */
  readonly jitterSeconds: number;
}

/** The spec fields as a client sends them (camelCase; omitted = default). */
export interface ScheduleSpecInput {
  cron?: string | null;
  intervalSeconds?: number | null;
  offsetSeconds?: number;
  timezone?: string;
  startAt?: Date | null;
  endAt?: Date | null;
  jitterSeconds?: number;
}

/** The policy fields of a schedule as a client sends them. */
export interface SchedulePolicyInput {
  overlapPolicy?: string;
  catchupWindowSeconds?: number;
  /** null or omitted: unlimited. */
  remainingRuns?: number | null;
}

/** More ticks than the caller allowed ({@link ticksBetween}); the API answers 400. */
export class TooManyTicksError extends RangeError {
  override readonly name = 'TooManyTicksError';
  constructor(readonly max: number) {
    super(`the range holds more than ${max} ticks`);
  }
}

/** True when `timezone` is an IANA zone name `Intl` knows (e.g. `Europe/Berlin`, `UTC`). */
export function isValidTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone.length > 0;
  } catch {
    return false;
  }
}

function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function validDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

/** How many ticks of a cron {@link cronProblem} looks at for its shortest gap. */
const CRON_GAP_SAMPLE = 20;

/**
 * `cron` checked: `problem`, why it is refused (not 5 or 6 fields, counted here; croner refuses
 * it; it never fires, `0 0 30 2 *`; two of its next ticks, from 2026-01-01 in UTC, are less than
 * `minGapSeconds` apart), else null with `gapSeconds`, the shortest gap between those ticks.
 */
function checkCron(cron: string, minGapSeconds: number): { problem: string } | { problem: null; gapSeconds: number } {
  if (cron.length > MAX_CRON_LENGTH) return { problem: `is longer than ${MAX_CRON_LENGTH} characters` };
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { problem: `has ${fields} fields; expected 5 (minute hour day month weekday) or 6 (second first)` };
  let ticks: Date[];
  try {
    ticks = cronOf(cron, 'UTC').nextRuns(CRON_GAP_SAMPLE, new Date(Date.UTC(2026, 0, 1)));
  } catch (error) {
    return { problem: `is not a valid cron expression (${(error as Error).message})` };
  }
  if (ticks.length === 0) return { problem: 'never fires (no date matches it)' };
  let gapSeconds = Number.POSITIVE_INFINITY;
  for (let i = 1; i < ticks.length; i++) gapSeconds = Math.min(gapSeconds, (ticks[i]!.getTime() - ticks[i - 1]!.getTime()) / 1000);
  if (gapSeconds < minGapSeconds) return { problem: `fires more often than every ${minGapSeconds} s (the service's SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS)` };
  return { problem: null, gapSeconds };
}

/**
 * The problems of a schedule's settings, each `/field: message` (empty when valid): exactly one
 * of `cron` / `intervalSeconds`; `intervalSeconds` an integer in [1, 10 years]; `offsetSeconds` an
 * integer in [0, interval); a known IANA `timezone`; `startAt` < `endAt`; `jitterSeconds` an
 * integer in [0, 86,400] and below the interval, or below the shortest gap between two ticks of
 * the cron (a tick delayed past the next would leave it behind); `catchupWindowSeconds` an integer ≥ 10;
 * `overlapPolicy` one of {@link OVERLAP_POLICIES}; `remainingRuns` null or an integer ≥ 1. With
 * `minIntervalSeconds` (the service's floor, default {@link MIN_INTERVAL_SECONDS}) an interval
 * below it, or a cron firing more often, is a problem; so is a cron that never fires.
 * Throws nothing.
 */
export function scheduleProblems(input: ScheduleSpecInput & SchedulePolicyInput, minIntervalSeconds: number = MIN_INTERVAL_SECONDS): string[] {
  const problems: string[] = [];
  const hasCron = input.cron !== undefined && input.cron !== null;
  const hasInterval = input.intervalSeconds !== undefined && input.intervalSeconds !== null;
  let cronGapSeconds: number | null = null;
  if (hasCron === hasInterval) problems.push('/cron: exactly one of cron and intervalSeconds is required');
  if (hasCron) {
    const checked = typeof input.cron === 'string' ? checkCron(input.cron, minIntervalSeconds) : { problem: 'must be a string' };
    if (checked.problem !== null) problems.push(`/cron: ${checked.problem}`);
    else cronGapSeconds = checked.gapSeconds;
  }
  const interval = input.intervalSeconds;
  const floor = Math.max(MIN_INTERVAL_SECONDS, minIntervalSeconds);
  if (hasInterval && !isInteger(interval, floor, MAX_INTERVAL_SECONDS)) {
    problems.push(`/intervalSeconds: must be an integer from ${floor} to ${MAX_INTERVAL_SECONDS}`);
  }
  if (input.offsetSeconds !== undefined) {
    if (!hasInterval) {
      if (input.offsetSeconds !== 0) problems.push('/offsetSeconds: applies to intervalSeconds only');
    } else if (!isInteger(input.offsetSeconds, 0, Math.max(0, (typeof interval === 'number' ? interval : 1) - 1))) {
      problems.push('/offsetSeconds: must be an integer from 0 to intervalSeconds - 1');
    }
  }
  if (input.timezone !== undefined && (typeof input.timezone !== 'string' || !isValidTimezone(input.timezone))) {
    problems.push('/timezone: is not a known IANA time zone (e.g. Europe/Berlin)');
  }
  for (const key of ['startAt', 'endAt'] as const) {
    const value = input[key];
    if (value !== undefined && value !== null && !validDate(value)) problems.push(`/${key}: must be a date-time`);
  }
  if (validDate(input.startAt) && validDate(input.endAt) && input.startAt >= input.endAt) problems.push('/endAt: must be after startAt');
  if (input.jitterSeconds !== undefined) {
    if (!isInteger(input.jitterSeconds, 0, MAX_JITTER_SECONDS)) problems.push(`/jitterSeconds: must be an integer from 0 to ${MAX_JITTER_SECONDS}`);
    else if (hasInterval && typeof interval === 'number' && input.jitterSeconds > 0 && input.jitterSeconds >= interval) {
      problems.push('/jitterSeconds: must be less than intervalSeconds');
    } else if (cronGapSeconds !== null && input.jitterSeconds > 0 && input.jitterSeconds >= cronGapSeconds) {
      // A tick delayed past the next one would leave that one behind, skipped as missed.
      problems.push(`/jitterSeconds: must be less than the shortest gap between two ticks of cron (${cronGapSeconds} s)`);
    }
  }
  if (input.catchupWindowSeconds !== undefined && !isInteger(input.catchupWindowSeconds, MIN_CATCHUP_WINDOW_SECONDS, MAX_CATCHUP_WINDOW_SECONDS)) {
    problems.push(`/catchupWindowSeconds: must be an integer from ${MIN_CATCHUP_WINDOW_SECONDS} to ${MAX_CATCHUP_WINDOW_SECONDS}`);
  }
  if (input.overlapPolicy !== undefined && !(OVERLAP_POLICIES as readonly string[]).includes(input.overlapPolicy)) {
    problems.push(`/overlapPolicy: must be one of ${OVERLAP_POLICIES.join(', ')}`);
  }
  if (input.remainingRuns !== undefined && input.remainingRuns !== null && !isInteger(input.remainingRuns, 1, Number.MAX_SAFE_INTEGER)) {
    problems.push('/remainingRuns: must be null (unlimited) or an integer ≥ 1');
  }
  return problems;
}

/**
 * The spec of `input` with its defaults (`offsetSeconds` 0, `timezone` UTC, no bounds, no
 * jitter). Throws a RangeError listing the problems when {@link scheduleProblems} finds any in the
 * spec fields (callers validate first and answer 400).
 */
export function toScheduleSpec(input: ScheduleSpecInput): ScheduleSpec {
  const problems = scheduleProblems(input);
  if (problems.length > 0) throw new RangeError(`invalid schedule spec: ${problems.join('; ')}`);
  return {
    cron: input.cron ?? null,
    intervalSeconds: input.intervalSeconds ?? null,
    offsetSeconds: input.offsetSeconds ?? 0,
    timezone: input.timezone ?? 'UTC',
    startAt: input.startAt ?? null,
    endAt: input.endAt ?? null,
    jitterSeconds: input.jitterSeconds ?? 0,
  };
}

function cronOf(pattern: string, timezone: string): Cron {
  // paused + no callback: croner only computes times, it schedules nothing.
  return new Cron(pattern, { timezone, paused: true, mode: '5-or-6-parts', fixedTimeRule: 'no-wildcard' });
}

/**
 * The next `count` ticks strictly after `after`, in order, within `startAt`/`endAt` (fewer when
 * `endAt` comes first; none for `count` ≤ 0). Nominal instants (no jitter). Throws when the spec
 * is invalid (croner's error for a cron it refuses).
 */
export function nextTicks(spec: ScheduleSpec, after: Date, count: number): Date[] {
  if (count <= 0) return [];
  // Ticks ≥ startAt: start from just before it.
  const from = spec.startAt && spec.startAt.getTime() - 1 > after.getTime() ? spec.startAt.getTime() - 1 : after.getTime();
  const ticks: Date[] = [];
  if (spec.intervalSeconds !== null) {
    const periodMs = spec.intervalSeconds * 1000;
    const offsetMs = spec.offsetSeconds * 1000;
    let at = (Math.floor((from - offsetMs) / periodMs) + 1) * periodMs + offsetMs;
    for (; ticks.length < count; at += periodMs) {
      if (spec.endAt && at >= spec.endAt.getTime()) break;
      ticks.push(new Date(at));
    }
    return ticks;
  }
  const runs = cronOf(spec.cron!, spec.timezone).nextRuns(count, new Date(from));
  for (const run of runs) {
    if (spec.endAt && run.getTime() >= spec.endAt.getTime()) break;
    ticks.push(run);
  }
  return ticks;
}

/**
 * Every tick in `[from, to)` in order, for a backfill. Throws {@link TooManyTicksError} when there
 * are more than `max` (at most {@link MAX_BACKFILL_TICKS}; a larger `max` is capped there).
 */
export function ticksBetween(spec: ScheduleSpec, from: Date, to: Date, max: number = MAX_BACKFILL_TICKS): Date[] {
  const limit = Math.min(max, MAX_BACKFILL_TICKS);
  if (to <= from) return [];
  const ticks = nextTicks(spec, new Date(from.getTime() - 1), limit + 1).filter((tick) => tick < to);
  if (ticks.length > limit) throw new TooManyTicksError(limit);
  return ticks;
}

/**
 * How late (ms) the tick at `scheduledAt` of schedule `scheduleId` fires: in `[0, jitterSeconds *
 * 1000)`, the same on every engine (FNV-1a of the id and the instant, not a random draw), 0 without
 * jitter.
 */
export function jitterMs(spec: Pick<ScheduleSpec, 'jitterSeconds'>, scheduleId: string, scheduledAt: Date): number {
  if (spec.jitterSeconds <= 0) return 0;
  let hash = 0x811c9dc5;
  for (const char of `${scheduleId}@${scheduledAt.getTime()}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % (spec.jitterSeconds * 1000);
}
