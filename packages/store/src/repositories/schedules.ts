/**
 * `schedules` repository (issue #21 item 1; domain schedule-spec.ts, runner schedule-loop.ts): one
 * document per schedule of a workflow. Fields (snake_case): `workflow_definition_id` (ObjectId),
 * `name` (unique per workflow), the spec (`cron`, `interval_seconds`, `offset_seconds`,
 * `timezone`, `start_at`, `end_at`, `jitter_seconds`), `input` (user data, keys escaped),
 * `overlap_policy`, `catchup_window_seconds`, `paused`, `note`, `remaining_runs` (null =
 * unlimited), `next_fire_at` (the next nominal tick; null when none is left), `due_at`
 * (`next_fire_at` + the tick's jitter: when the loop takes it), `recent_runs` (the last
 * {@link MAX_RECENT_RUNS} outcomes, oldest first), `buffered_ticks` (ticks waiting for the
 * schedule's running run to end, overlap policies `buffer_one`/`buffer_all`, oldest first),
 * `created_by`, `updated_by` (user ids of who created and last changed it), `changed_by` (every
 * user who created it or changed its settings by a PUT, at most {@link MAX_SCHEDULE_CHANGERS}: they
 * all count as triggers of its runs for four-eyes; a pause or resume does not add to it),
 * `created_at`, `updated_at`, `version` (+1 on every change a client makes; the loop's writes leave
 * it alone).
 *
 * Exactly once per tick: {@link Schedules.claimTick} is a compare-and-set on `next_fire_at` (a
 * single-document atomic update on both backends), so of any number of loops that read the same
 * due tick exactly one moves it on and fires it.
 */
import { DuplicateEntryError, fromStoredUserData, toStoredUserData } from '@switchyard/domain';
import type { OverlapPolicy, ScheduleSpec } from '@switchyard/domain/schedule-spec';
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { hexId, newId, oid } from './documents.ts';

export const SCHEDULES = 'schedules';

/** Most distinct users `changed_by` holds; a further one's change is refused (see {@link Schedules.update}). */
export const MAX_SCHEDULE_CHANGERS = 100;

/** How many outcomes a schedule keeps in `recent_runs`. */
export const MAX_RECENT_RUNS = 10;

/** One outcome of a tick: a run started for it, or why none was. */
export type RecentScheduleRun =
  | { scheduledAt: Date; startedAt: Date; runId: string; status: string }
  | { scheduledAt: Date; status: 'skipped'; reason: string };

/** The next tick of a schedule: its nominal instant and when the loop takes it (with jitter). */
export interface NextTick {
  fireAt: Date;
  dueAt: Date;
}

/** A stored schedule (camelCase). */
export interface ScheduleRecord {
  id: string;
  workflowDefinitionId: string;
  name: string;
  spec: ScheduleSpec;
  input: Record<string, unknown>;
  overlapPolicy: OverlapPolicy;
  catchupWindowSeconds: number;
  paused: boolean;
  note: string | null;
  remainingRuns: number | null;
  nextFireAt: Date | null;
  dueAt: Date | null;
  recentRuns: RecentScheduleRun[];
  /** Ticks waiting for the schedule's running run to end (buffer_one / buffer_all), oldest first. */
  bufferedTicks: Date[];
  /** Those of {@link bufferedTicks} whose claim took one of `remainingRuns` (the loop's; not a trigger's or backfill's): given back if skipped. */
  bufferedTookRun: Date[];
  /** User id of who created the schedule (null: unknown). */
  createdBy: string | null;
  /** User id of who last changed it (null: unknown). */
  updatedBy: string | null;
  /** Everyone who created it or changed its settings (four-eyes: triggers of its runs); at most {@link MAX_SCHEDULE_CHANGERS}. */
  changedBy: string[];
  createdAt: Date;
  updatedAt: Date;
  version: number;
}

/**
 * What a new schedule needs: everything its creator decides, including its first tick (null:
 * none). `id` may be chosen beforehand (`newId()`), since the first tick's jitter depends on it.
 */
export type NewSchedule = Omit<ScheduleRecord, 'id' | 'nextFireAt' | 'dueAt' | 'recentRuns' | 'bufferedTicks' | 'bufferedTookRun' | 'createdBy' | 'updatedBy' | 'changedBy' | 'createdAt' | 'updatedAt' | 'version'> & {
  id?: string;
  next: NextTick | null;
  /** User id of the creator (also its first `updatedBy`). */
  createdBy?: string | null;
};

/**
 * Changes a client makes (each field optional); `next` when the spec, pause state or remaining
 * runs moved the next tick; `changer`, a user id to add to `changedBy` (a change of settings).
 */
export type ScheduleChanges = Partial<Pick<ScheduleRecord, 'name' | 'spec' | 'input' | 'overlapPolicy' | 'catchupWindowSeconds' | 'paused' | 'note' | 'remainingRuns' | 'updatedBy'>> & {
  next?: NextTick | null;
  changer?: string;
};

/** Filter of {@link Schedules.listAll}: only the schedules of these workflows (e.g. those a caller may see). */
export interface ScheduleListFilter {
  workflowIds?: readonly string[];
}

export class Schedules {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(SCHEDULES);
  }

  /** Stores a new schedule (version 1). Throws {@link DuplicateEntryError} when its workflow has one of that name. */
  async create(schedule: NewSchedule, now: Date): Promise<ScheduleRecord> {
    const { id = newId(), next, createdBy = null, ...rest } = schedule;
    const doc = {
      _id: oid(id),
      ...changesToDocument({ ...rest, next }),
      workflow_definition_id: oid(schedule.workflowDefinitionId),
      recent_runs: [],
      buffered_ticks: [],
      created_by: createdBy,
      updated_by: createdBy,
      changed_by: createdBy === null ? [] : [createdBy],
      created_at: now,
      updated_at: now,
      version: 1,
    };
    await this.guardName(schedule.name, () => this.collection.insertOne(doc));
    return toRecord(doc);
  }

  /** The schedule, or null. */
  async get(id: string): Promise<ScheduleRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(id) });
    return doc ? toRecord(doc) : null;
  }

  /** One page of a workflow's schedules, newest first, and their total. `page` is 1-based; callers bound `perPage`. */
  async list(workflowId: string, page: number, perPage: number): Promise<{ items: ScheduleRecord[]; total: number }> {
    return this.page({ workflow_definition_id: oid(workflowId) }, page, perPage);
  }

  /** One page of the schedules across workflows (or of `filter.workflowIds`), newest first, and their total. */
  async listAll(filter: ScheduleListFilter, page: number, perPage: number): Promise<{ items: ScheduleRecord[]; total: number }> {
    return this.page(filter.workflowIds ? { workflow_definition_id: { $in: filter.workflowIds.map(oid) } } : {}, page, perPage);
  }

  /**
   * Applies `changes` and adds 1 to `version`; with `expectedVersion`, only if the schedule still
   * has that version (a compare-and-set for read-modify-write clients). With `changes.changer`,
   * adds that user to `changedBy`, only if listed already or fewer than {@link MAX_SCHEDULE_CHANGERS}
   * are. Returns the schedule after, or null when it does not exist (or has another version, or
   * has no room for the changer). Throws {@link DuplicateEntryError} on a name clash.
   */
  async update(id: string, changes: ScheduleChanges, now: Date, expectedVersion?: number): Promise<ScheduleRecord | null> {
    const filter: Document = { _id: oid(id) };
    if (expectedVersion !== undefined) filter.version = expectedVersion;
    const update: Document = { $set: { ...changesToDocument(changes), updated_at: now }, $inc: { version: 1 } };
    if (changes.changer !== undefined) {
      // A changer already listed, or room for one more: never more than MAX_SCHEDULE_CHANGERS.
      filter.$or = [{ changed_by: changes.changer }, { [`changed_by.${MAX_SCHEDULE_CHANGERS - 1}`]: { $exists: false } }];
      update.$addToSet = { changed_by: changes.changer };
    }
    const doc = await this.guardName(changes.name, () => this.collection.findOneAndUpdate(filter, update));
    return doc ? toRecord(doc) : null;
  }

  /** Deletes the schedule; false when there was none. */
  async delete(id: string): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: oid(id) })).deletedCount === 1;
  }

  /** Deletes every schedule of a workflow (with the workflow); returns how many. */
  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.collection.deleteMany({ workflow_definition_id: oid(workflowId) })).deletedCount;
  }

  /**
   * Up to `limit` schedules whose next tick is due (`due_at` ≤ `now`), not paused and with runs
   * left, the longest-due first.
   */
  async listDue(now: Date, limit: number): Promise<ScheduleRecord[]> {
    const docs = await this.collection.find({ paused: false, due_at: { $lte: now }, remaining_runs: { $ne: 0 } }, { sort: { due_at: 1 }, limit });
    return docs.map(toRecord);
  }

  /**
   * The tick claim: moves the schedule's next tick from `expectedNextFireAt` to `next` (null: no
   * tick left) if it is still `expectedNextFireAt` and the schedule is not paused — a
   * compare-and-set, so one caller wins a tick. With `consumeFrom` (the `remainingRuns` the caller
   * read, ≥ 1) it also takes one of the remaining runs, in the same write and only if that count
   * is unchanged; without it `remaining_runs` is left alone (a skipped tick, or unlimited runs).
   * Returns the schedule after the claim, or null when another caller (or a client's change) came
   * first. `version` is not changed.
   */
  async claimTick(
    scheduleId: string,
    expectedNextFireAt: Date,
    next: NextTick | null,
    now: Date,
    consumeFrom: number | null = null,
    firing = false,
  ): Promise<ScheduleRecord | null> {
    const filter: Document = { _id: oid(scheduleId), next_fire_at: expectedNextFireAt, paused: false };
    const set: Document = { next_fire_at: next?.fireAt ?? null, due_at: next?.dueAt ?? null, last_claimed_at: now };
    if (consumeFrom !== null) {
      filter.remaining_runs = consumeFrom;
      set.remaining_runs = consumeFrom - 1;
    }
    // A tick to fire is in flight until settleTick: should this process die before, another loop fires it again.
    const update: Document = firing ? { $set: set, $push: { firing: { scheduled_at: expectedNextFireAt, claimed_at: now, took_run: consumeFrom !== null } } } : { $set: set };
    const doc = await this.collection.findOneAndUpdate(filter, update);
    return doc ? toRecord(doc) : null;
  }

  /**
   * Settles the in-flight tick `scheduledAt` (claimed with `firing`): removes it from `firing` and
   * records `outcome` in `recent_runs` (none for a buffered tick) in one write, only while the tick
   * is still in flight, so of several loops settling it (a slow one and the one that took it over)
   * exactly one records it; with `refund`, that one then gives the tick's run back
   * ({@link refundRun}: a no-op if the client made the schedule unlimited meanwhile). True for
   * that one.
   */
  async settleTick(scheduleId: string, scheduledAt: Date, outcome: RecentScheduleRun | null, refund: boolean): Promise<boolean> {
    const update: Document = { $pull: { firing: { scheduled_at: scheduledAt } } };
    if (outcome) update.$push = { recent_runs: { $each: [recentDocument(outcome)], $slice: -MAX_RECENT_RUNS } };
    const { matchedCount } = await this.collection.updateOne({ _id: oid(scheduleId), 'firing.scheduled_at': scheduledAt }, update);
    if (matchedCount === 1 && refund) await this.refundRun(scheduleId);
    return matchedCount === 1;
  }

  /**
   * Up to `limit` schedules with a tick in flight since before `claimedBefore` (its loop died, or is
   * very slow, between claim and settle), with those ticks: for another loop to fire them again
   * (run creation is idempotent per tick). Oldest claims are not sorted first: every pass takes
   * the next batch.
   */
  async listStaleFiring(claimedBefore: Date, limit: number): Promise<Array<{ schedule: ScheduleRecord; ticks: Array<{ scheduledAt: Date; tookRun: boolean }> }>> {
    const docs = await this.collection.find({ 'firing.claimed_at': { $lt: claimedBefore } }, { limit });
    return docs.map((doc) => ({
      schedule: toRecord(doc),
      ticks: ((doc.firing as Document[] | undefined) ?? [])
        .filter((entry) => (entry.claimed_at as Date) < claimedBefore)
        .map((entry) => ({ scheduledAt: entry.scheduled_at as Date, tookRun: entry.took_run === true })),
    }));
  }

  /** Gives back a run taken by {@link claimTick} whose tick ended up not starting one (a disabled workflow, an overlap skip). No-op for unlimited schedules. */
  async refundRun(scheduleId: string): Promise<void> {
    await this.collection.updateOne({ _id: oid(scheduleId), remaining_runs: { $ne: null } }, { $inc: { remaining_runs: 1 } });
  }

  /** Appends one outcome to `recent_runs`, keeping the last {@link MAX_RECENT_RUNS} (`$push` with `$each`/`$slice`, on both backends). */
  async recordRecent(scheduleId: string, outcome: RecentScheduleRun): Promise<void> {
    const push: Document = { recent_runs: { $each: [recentDocument(outcome)], $slice: -MAX_RECENT_RUNS } };
    await this.collection.updateOne({ _id: oid(scheduleId) }, { $push: push });
  }

  /**
   * Puts `tick` at the end of the schedule's buffer unless it already holds `max` ticks or this
   * tick (a conditional `$push`, atomic); `tookRun`: its claim took one of `remainingRuns`
   * (`buffered_took_run`, so a skip gives it back). True when it was buffered.
   */
  async bufferTick(scheduleId: string, tick: Date, max: number, tookRun = false): Promise<boolean> {
    // Not twice the same tick (a tick fired again after its loop died).
    const filter: Document = { _id: oid(scheduleId), [`buffered_ticks.${Math.max(0, max - 1)}`]: { $exists: false }, buffered_ticks: { $ne: tick } };
    const push: Document = tookRun ? { buffered_ticks: tick, buffered_took_run: tick } : { buffered_ticks: tick };
    return (await this.collection.updateOne(filter, { $push: push })).matchedCount === 1;
  }

  /**
   * Up to `limit` unpaused schedules with buffered ticks (any ≤ `now`, i.e. any at all), after the
   * first `skip` of them, for the loop to start when their runs end (pages, so that schedules still
   * blocked do not hide the others).
   */
  async listBuffered(now: Date, limit: number, skip = 0): Promise<ScheduleRecord[]> {
    const docs = await this.collection.find({ paused: false, buffered_ticks: { $lte: now } }, { skip, limit });
    return docs.map(toRecord);
  }

  /** Removes the first buffered tick if it is still `head` (a compare-and-set: of several callers one wins). True for the winner. */
  async popBuffered(scheduleId: string, head: Date): Promise<boolean> {
    const update: Document = { $pop: { buffered_ticks: -1 }, $pull: { buffered_took_run: head } };
    return (await this.collection.updateOne({ _id: oid(scheduleId), 'buffered_ticks.0': head }, update)).matchedCount === 1;
  }


  private async page(filter: Document, page: number, perPage: number): Promise<{ items: ScheduleRecord[]; total: number }> {
    const [docs, total] = await Promise.all([
      this.collection.find(filter, { sort: { created_at: -1, _id: -1 }, skip: (page - 1) * perPage, limit: perPage }),
      this.collection.countDocuments(filter),
    ]);
    return { items: docs.map(toRecord), total };
  }

  private async guardName<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new DuplicateEntryError(`This workflow already has a schedule named '${name}'`);
      throw error;
    }
  }
}

/** The document fields of `changes` (those given). */
function changesToDocument(changes: ScheduleChanges): Document {
  const doc: Document = {};
  if (changes.name !== undefined) doc.name = changes.name;
  if (changes.spec !== undefined) {
    const { spec } = changes;
    Object.assign(doc, {
      cron: spec.cron, interval_seconds: spec.intervalSeconds, offset_seconds: spec.offsetSeconds, timezone: spec.timezone,
      start_at: spec.startAt, end_at: spec.endAt, jitter_seconds: spec.jitterSeconds,
    });
  }
  if (changes.input !== undefined) doc.input = toStoredUserData(changes.input);
  if (changes.overlapPolicy !== undefined) doc.overlap_policy = changes.overlapPolicy;
  if (changes.catchupWindowSeconds !== undefined) doc.catchup_window_seconds = changes.catchupWindowSeconds;
  if (changes.paused !== undefined) doc.paused = changes.paused;
  if (changes.note !== undefined) doc.note = changes.note;
  if (changes.remainingRuns !== undefined) doc.remaining_runs = changes.remainingRuns;
  if (changes.updatedBy !== undefined) doc.updated_by = changes.updatedBy;
  if (changes.next !== undefined) Object.assign(doc, { next_fire_at: changes.next?.fireAt ?? null, due_at: changes.next?.dueAt ?? null });
  return doc;
}

/** The stored form of one `recent_runs` entry. */
function recentDocument(outcome: RecentScheduleRun): Document {
  const entry: Document = { scheduled_at: outcome.scheduledAt, status: outcome.status };
  if ('runId' in outcome) Object.assign(entry, { started_at: outcome.startedAt, run_id: oid(outcome.runId) });
  else entry.reason = outcome.reason;
  return entry;
}

function toRecent(entry: Document): RecentScheduleRun {
  if (entry.status === 'skipped') return { scheduledAt: entry.scheduled_at as Date, status: 'skipped', reason: entry.reason as string };
  return { scheduledAt: entry.scheduled_at as Date, startedAt: entry.started_at as Date, runId: (entry.run_id as { toHexString(): string }).toHexString(), status: entry.status as string };
}

function toRecord(doc: Document): ScheduleRecord {
  return {
    id: hexId(doc),
    workflowDefinitionId: (doc.workflow_definition_id as { toHexString(): string }).toHexString(),
    name: doc.name as string,
    spec: {
      cron: (doc.cron as string | null) ?? null,
      intervalSeconds: (doc.interval_seconds as number | null) ?? null,
      offsetSeconds: (doc.offset_seconds as number | undefined) ?? 0,
      timezone: (doc.timezone as string | undefined) ?? 'UTC',
      startAt: (doc.start_at as Date | null) ?? null,
      endAt: (doc.end_at as Date | null) ?? null,
      jitterSeconds: (doc.jitter_seconds as number | undefined) ?? 0,
    },
    input: (fromStoredUserData(doc.input) ?? {}) as Record<string, unknown>,
    overlapPolicy: doc.overlap_policy as OverlapPolicy,
    catchupWindowSeconds: doc.catchup_window_seconds as number,
    paused: doc.paused === true,
    note: (doc.note as string | null) ?? null,
    remainingRuns: (doc.remaining_runs as number | null) ?? null,
    nextFireAt: (doc.next_fire_at as Date | null) ?? null,
    dueAt: (doc.due_at as Date | null) ?? null,
    recentRuns: ((doc.recent_runs as Document[] | undefined) ?? []).map(toRecent),
    bufferedTicks: (doc.buffered_ticks as Date[] | undefined) ?? [],
    bufferedTookRun: (doc.buffered_took_run as Date[] | undefined) ?? [],
    createdBy: (doc.created_by as string | null | undefined) ?? null,
    updatedBy: (doc.updated_by as string | null | undefined) ?? null,
    changedBy: Array.isArray(doc.changed_by) ? (doc.changed_by as string[]) : [doc.created_by, doc.updated_by].filter((by): by is string => typeof by === 'string'),
    createdAt: doc.created_at as Date,
    updatedAt: doc.updated_at as Date,
    version: doc.version as number,
  };
}
