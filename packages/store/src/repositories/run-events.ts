/**
 * `run_events` repository: an append-only log per run (`seq` from the run's `event_seq`,
 * unique with the run id in index `run_seq`). Types are dotted names such as `run.started`,
 * `node.completed`.
 */
import type { RunEventRecord } from '@switchyard/domain';
import { toStoredUserData, fromStoredUserData } from '@switchyard/domain';
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
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

  /** Appends one event. `payload` is user-visible JSON (its keys are stored as given). */
  async append(event: { runId: string; workflowDefinitionId: string; seq: number; type: string; payload: Record<string, unknown> }, now: Date): Promise<void> {
    await this.collection.insertOne({
      _id: oid(newId()),
      run_id: oid(event.runId),
      workflow_definition_id: oid(event.workflowDefinitionId),
      seq: event.seq,
      type: event.type,
      payload: toStoredUserData(event.payload),
      created_at: now,
    });
  }

  /** A run's events in order. */
  async listByRun(runId: string): Promise<RunEventRecord[]> {
    const docs = await this.collection.find({ run_id: oid(runId) }, { sort: { seq: 1 } });
    return docs.map(toRecord);
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
