/**
 * `run_events` repository: an append-only log per run, `seq` 1, 2, 3, ... unique with the run id
 * (index `run_seq`). Types are dotted names such as `run.started`, `node.completed`.
 *
 * Sequence numbers are taken optimistically: the writer proposes the next number it expects
 * (usually the owner of the run, which knows its last one) and the unique index arbitrates; on a
 * clash it reads the current last number and tries again. No counter document is written per
 * event.
 *
 * This is the one writer of run events: listeners registered with {@link RunEvents.onAppend}
 * learn of every event this process appends (the live stream pushes them; other processes' events
 * are found by polling on `seq`).
 */
import type { RunEventRecord, RunEventType, TypedRunEvent } from '@switchyard/domain';
import { toStoredUserData, fromStoredUserData } from '@switchyard/domain';
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { newId, oid } from './documents.ts';

export const RUN_EVENTS = 'run_events';

/** An event as {@link RunEvents.onAppend} listeners receive it: the record plus the run's workflow id. */
export interface AppendedRunEvent extends RunEventRecord {
  /** The workflow the event's run belongs to. */
  workflowDefinitionId: string;
}

/**
 * Receives each event this process appended, after it is stored. Must not throw. This is the
 * run-event seam: the live event stream and the Prometheus metrics (apps/api metrics/) listen here.
 */
export type RunEventListener = (event: AppendedRunEvent) => void;

/** Filters of {@link RunEvents.list}. */
export interface RunEventFilter {
  /** Only events with a higher `seq` (default 0: from the first). */
  afterSeq?: number;
  /** At most this many (default 100). */
  limit?: number;
  /** Only these types. */
  types?: readonly RunEventType[];
  /** Only events about this node (`payload.nodeId`). */
  nodeId?: string;
}

export class RunEvents {
  private readonly collection: DocumentCollection;
  private readonly listeners = new Set<RunEventListener>();
  constructor(store: DocumentStore) {
    this.collection = store.collection(RUN_EVENTS);
  }

  /**
   * Appends one event with the next sequence number and returns that number. `expectedSeq` is the
   * caller's guess (its last seq + 1); without it, or when taken, the last stored seq + 1 is used.
   * `payload` is user-visible JSON (its keys are stored as given). Throws after 20 clashes in a row.
   */
  async append(
    event: { runId: string; workflowDefinitionId: string } & TypedRunEvent,
    now: Date,
    expectedSeq?: number,
  ): Promise<number> {
    let seq = expectedSeq ?? (await this.lastSeq(event.runId)) + 1;
    for (let attempt = 1; ; attempt++) {
      try {
        const id = newId();
        await this.collection.insertOne({
          _id: oid(id),
          run_id: oid(event.runId),
          workflow_definition_id: oid(event.workflowDefinitionId),
          seq,
          type: event.type,
          payload: toStoredUserData(event.payload),
          created_at: now,
        });
        this.notify({ id, runId: event.runId, workflowDefinitionId: event.workflowDefinitionId, seq, type: event.type, payload: event.payload, createdAt: now });
        return seq;
      } catch (error) {
        if (!isDuplicateKeyError(error) || attempt >= 20) throw error;
        seq = (await this.lastSeq(event.runId)) + 1;
      }
    }
  }

  /** The highest `seq` of a run's events, 0 when it has none. */
  async lastSeq(runId: string): Promise<number> {
    const [last] = await this.collection.find({ run_id: oid(runId) }, { sort: { seq: -1 }, limit: 1, projection: { seq: 1 } });
    return last ? (last.seq as number) : 0;
  }

  /**
   * Registers `listener` for every event this process appends from now on; returns the function
   * that unregisters it.
   */
  onAppend(listener: RunEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A run's events in `seq` order, filtered (see {@link RunEventFilter}). */
  async list(runId: string, filter: RunEventFilter = {}): Promise<RunEventRecord[]> {
    const query: Document = { run_id: oid(runId), seq: { $gt: filter.afterSeq ?? 0 } };
    if (filter.types) query.type = { $in: [...filter.types] };
    if (filter.nodeId !== undefined) query['payload.nodeId'] = filter.nodeId;
    const docs = await this.collection.find(query, { sort: { seq: 1 }, limit: filter.limit ?? 100 });
    return docs.map(toRecord);
  }

  /** A run's events in order. */
  async listByRun(runId: string): Promise<RunEventRecord[]> {
    const docs = await this.collection.find({ run_id: oid(runId) }, { sort: { seq: 1 } });
    return docs.map(toRecord);
  }

  private notify(event: AppendedRunEvent): void {
    if (this.listeners.size > 0) notifyAll(this.listeners, event);
  }

  /** Deletes every event of a run; returns how many. */
  async deleteByRun(runId: string): Promise<number> {
    return (await this.collection.deleteMany({ run_id: oid(runId) })).deletedCount;
  }

  /** Deletes every event of a workflow's runs; returns how many. */
  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.collection.deleteMany({ workflow_definition_id: oid(workflowId) })).deletedCount;
  }
}

/** Tells every listener; a listener that throws is a bug, but must not fail the write. */
function notifyAll(listeners: ReadonlySet<RunEventListener>, event: AppendedRunEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // ignored: the event is stored, and listeners only speed up readers that also poll
    }
  }
}

function toRecord(doc: Document): RunEventRecord {
  return {
    id: (doc._id as { toHexString(): string }).toHexString(),
    runId: (doc.run_id as { toHexString(): string }).toHexString(),
    seq: doc.seq as number,
    type: doc.type as string,
    payload: fromStoredUserData(doc.payload) as Record<string, unknown>,
    createdAt: doc.created_at as Date,
  };
}
