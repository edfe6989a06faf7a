/**
 * `run_events` repository: an append-only log per run, `seq` 1, 2, 3, ... unique with the run id
 * (index `run_seq`). Types are dotted names such as `run.started`, `node.completed`.
 *
 * Sequence numbers are taken optimistically: the writer proposes the next number it expects
 * (usually the owner of the run, which knows its last one) and the unique index arbitrates; on a
 * clash it reads the current last number and tries again. No counter document is written per
 * event.
 */
import type { RunEventRecord } from '@switchyard/domain';
import { toStoredUserData, fromStoredUserData } from '@switchyard/domain';
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { newId, oid } from './documents.ts';

export const RUN_EVENTS = 'run_events';

export class RunEvents {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(RUN_EVENTS);
  }

  /** Creates the indexes this repository relies on. Idempotent. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ run_id: 1, seq: 1 }, { unique: true, name: 'run_seq' });
    await this.collection.createIndex({ workflow_definition_id: 1 }, { name: 'workflow' });
  }

  /**
   * Appends one event with the next sequence number and returns that number. `expectedSeq` is the
   * caller's guess (its last seq + 1); without it, or when taken, the last stored seq + 1 is used.
   * `payload` is user-visible JSON (its keys are stored as given). Throws after 20 clashes in a row.
   */
  async append(
    event: { runId: string; workflowDefinitionId: string; type: string; payload: Record<string, unknown> },
    now: Date,
    expectedSeq?: number,
  ): Promise<number> {
    let seq = expectedSeq ?? (await this.lastSeq(event.runId)) + 1;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.collection.insertOne({
          _id: oid(newId()),
          run_id: oid(event.runId),
          workflow_definition_id: oid(event.workflowDefinitionId),
          seq,
          type: event.type,
          payload: toStoredUserData(event.payload),
          created_at: now,
        });
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

  /** A run's events in order. */
  async listByRun(runId: string): Promise<RunEventRecord[]> {
    const docs = await this.collection.find({ run_id: oid(runId) }, { sort: { seq: 1 } });
    return docs.map(toRecord);
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
