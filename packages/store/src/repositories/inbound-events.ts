/**
 * `events` repository (issue #21 item 2, docs/guide/event-triggers.md): the events clients post to
 * `POST /api/v1/events`, with the runs each started and the problems met on the way. Fields
 * (snake_case): `_id` (the event id, a new ObjectId), `name`, `data` (user data, keys escaped),
 * `source_id` (the client's `id`, or null), `sender_id` (who posted it: the caller's principal),
 * `body_hash` (of its name and data), `dedupe_key`, `dedupe_until`, `received_at`,
 * `expires_at` (retention: MongoDB's TTL index deletes the event then, the retention sweep does
 * on the embedded store), `state` (`starting` while its runs are being started, then `done`),
 * `claimed_at` (when the current starter took it), `runs` (`[{ workflow_id, run_id }]`),
 * `problems` (`[{ workflow_id, trigger, error }]`), `workflow_ids` (the workflows named in either,
 * for visibility filters).
 *
 * Deduplication by the client's id, per sender: `dedupe_key` is unique (index `dedupe_unique`) and
 * holds `id:["<sender>","<client id>"]` (JSON, so no sender and id can run together) while the
 * dedupe window lasts (`dedupe_until`), so of one sender's concurrent first posts exactly one
 * insert wins, on either backend, and another sender's same id is another event. A later post of the same id finds the holder; once
 * the window passed, it moves the holder's key aside (`expired:<event id>`, a compare-and-set)
 * and inserts anew. An event without a client id holds `event:<event id>`, unique by itself.
 */
import { fromStoredUserData, toStoredUserData } from '@switchyard/domain';
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { hexId, newId, oid } from './documents.ts';

export const INBOUND_EVENTS = 'events';

/** One run an event started. */
export interface EventRun {
  workflowId: string;
  runId: string;
}

/** Why an event started no run of a workflow: `trigger` is the index of the trigger concerned (null when none in particular). */
export interface EventProblem {
  workflowId: string;
  trigger: number | null;
  error: string;
}

/** A stored event (camelCase). */
export interface InboundEventRecord {
  id: string;
  name: string;
  data: Record<string, unknown>;
  /** The client's `id`, when it gave one. */
  sourceId: string | null;
  /** Who posted it (the caller's principal, e.g. `user:billing`); its `id` is deduplicated among its own events only. */
  senderId: string;
  /** Hash of what was posted (name and data, services/idempotency.ts `hashBody`): a repeat of the `id` with another is refused. */
  bodyHash: string;
  receivedAt: Date;
  expiresAt: Date;
  /** `starting` while its runs are being started; `done` once {@link InboundEvents.complete} recorded them. */
  state: 'starting' | 'done';
  /** When the current starter took the event (a starter that stalls past a grace is replaced). */
  claimedAt: Date;
  runs: EventRun[];
  problems: EventProblem[];
}

/** What a new event needs. */
export interface NewInboundEvent {
  name: string;
  data: Record<string, unknown>;
  sourceId: string | null;
  senderId: string;
  bodyHash: string;
  now: Date;
  /** How long the event is kept, ms. */
  retentionMs: number;
  /** How long a repeat of `sourceId` by `senderId` is answered from this event, ms. */
  dedupeMs: number;
}

/** Outcome of {@link InboundEvents.receive}: a new event, or the one the sender's id already names. */
export type EventReceipt = { readonly won: true; readonly event: InboundEventRecord } | { readonly won: false; readonly existing: InboundEventRecord };

/** Filters of {@link InboundEvents.list}; absent fields do not filter. */
export interface EventListFilter {
  name?: string;
  /** Only events that started runs of (or recorded problems for) one of these workflows. */
  workflowIds?: readonly string[];
}

/** Attempts of {@link InboundEvents.receive} against a holder that vanishes or expires meanwhile. */
const MAX_RECEIVE_ATTEMPTS = 5;

export class InboundEvents {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(INBOUND_EVENTS);
  }

  /**
   * Stores a new event in state `starting`, unless `sourceId` names an event of the same
   * `senderId` still within its dedupe window: then returns that one (`won: false`, whatever its
   * body: the caller compares `bodyHash`). A holder past its window gives its key
   * up (compare-and-set) and the insert is tried again.
   */
  async receive(event: NewInboundEvent): Promise<EventReceipt> {
    for (let attempt = 1; ; attempt += 1) {
      const id = newId();
      const dedupeKey = event.sourceId === null ? `event:${id}` : `id:${JSON.stringify([event.senderId, event.sourceId])}`;
      const record: InboundEventRecord = {
        id,
        name: event.name,
        data: event.data,
        sourceId: event.sourceId,
        senderId: event.senderId,
        bodyHash: event.bodyHash,
        receivedAt: event.now,
        expiresAt: new Date(event.now.getTime() + event.retentionMs),
        state: 'starting',
        claimedAt: event.now,
        runs: [],
        problems: [],
      };
      try {
        await this.collection.insertOne({
          _id: oid(id),
          name: record.name,
          data: toStoredUserData(record.data),
          source_id: record.sourceId,
          sender_id: record.senderId,
          body_hash: record.bodyHash,
          dedupe_key: dedupeKey,
          dedupe_until: new Date(event.now.getTime() + event.dedupeMs),
          received_at: record.receivedAt,
          expires_at: record.expiresAt,
          state: record.state,
          claimed_at: record.claimedAt,
          runs: [],
          problems: [],
          workflow_ids: [],
        });
        return { won: true, event: record };
      } catch (error) {
        if (!isDuplicateKeyError(error) || attempt >= MAX_RECEIVE_ATTEMPTS) throw error;
      }
      const holder = await this.collection.findOne({ dedupe_key: dedupeKey });
      if (!holder) continue; // deleted meanwhile: try again
      if ((holder.dedupe_until as Date).getTime() > event.now.getTime()) return { won: false, existing: toRecord(holder) };
      // Past its window: the holder keeps its record and gives the key up (one mover wins; either way, try again).
      await this.collection.updateOne({ _id: holder._id, dedupe_key: dedupeKey }, { $set: { dedupe_key: `expired:${hexId(holder)}` } });
    }
  }

  /** The event, or null. */
  async get(id: string): Promise<InboundEventRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(id) });
    return doc ? toRecord(doc) : null;
  }

  /**
   * Makes the caller the starter of event `id`, still `starting`, whose starter took it at
   * `claimedAt` (and stalled), when the caller is its sender `senderId` (nobody starts another
   * sender's event): a compare-and-set, so one of several takers wins. False when it lost, the
   * event is done, gone or another sender's.
   */
  async takeOver(id: string, senderId: string, claimedAt: Date, now: Date): Promise<boolean> {
    const doc = await this.collection.findOneAndUpdate({ _id: oid(id), sender_id: senderId, state: 'starting', claimed_at: claimedAt }, { $set: { claimed_at: now } });
    return doc !== null;
  }

  /** Lets the next taker of event `id` start at once (its starter failed): its claim is dated to the epoch. */
  async abandon(id: string): Promise<void> {
    await this.collection.updateOne({ _id: oid(id), state: 'starting' }, { $set: { claimed_at: new Date(0) } });
  }

  /** Records the runs event `id` started and its problems; the event is `done`. */
  async complete(id: string, runs: readonly EventRun[], problems: readonly EventProblem[]): Promise<void> {
    const workflowIds = [...new Set([...runs.map((run) => run.workflowId), ...problems.map((problem) => problem.workflowId)])];
    await this.collection.updateOne(
      { _id: oid(id) },
      {
        $set: {
          state: 'done',
          runs: runs.map((run) => ({ workflow_id: oid(run.workflowId), run_id: oid(run.runId) })),
          problems: problems.map((problem) => ({ workflow_id: oid(problem.workflowId), trigger: problem.trigger, error: problem.error })),
          workflow_ids: workflowIds.map(oid),
        },
      },
    );
  }

  /** One page of events matching `filter`, newest first (`page` 1-based), and how many match. */
  async list(filter: EventListFilter, page: number, perPage: number): Promise<{ items: InboundEventRecord[]; total: number }> {
    const query: Document = {};
    if (filter.name !== undefined) query.name = filter.name;
    if (filter.workflowIds !== undefined) query.workflow_ids = { $in: filter.workflowIds.map(oid) };
    const [docs, total] = await Promise.all([
      this.collection.find(query, { sort: { received_at: -1, _id: -1 }, skip: (page - 1) * perPage, limit: perPage }),
      this.collection.countDocuments(query),
    ]);
    return { items: docs.map(toRecord), total };
  }

  /** Deletes events whose retention ended before `now` (MongoDB's TTL index does it too); returns how many. */
  async purgeExpired(now: Date): Promise<number> {
    return (await this.collection.deleteMany({ expires_at: { $lt: now } })).deletedCount;
  }
}

function toRecord(doc: Document): InboundEventRecord {
  const hex = (value: unknown): string => (value as { toHexString(): string }).toHexString();
  return {
    id: hexId(doc),
    name: doc.name as string,
    data: fromStoredUserData(doc.data) as Record<string, unknown>,
    sourceId: (doc.source_id as string | null) ?? null,
    senderId: (doc.sender_id as string | undefined) ?? '',
    bodyHash: (doc.body_hash as string | undefined) ?? '',
    receivedAt: doc.received_at as Date,
    expiresAt: doc.expires_at as Date,
    state: doc.state === 'done' ? 'done' : 'starting',
    claimedAt: doc.claimed_at as Date,
    runs: ((doc.runs ?? []) as Document[]).map((run) => ({ workflowId: hex(run.workflow_id), runId: hex(run.run_id) })),
    problems: ((doc.problems ?? []) as Document[]).map((problem) => ({
      workflowId: hex(problem.workflow_id),
      trigger: (problem.trigger as number | null) ?? null,
      error: problem.error as string,
    })),
  };
}
