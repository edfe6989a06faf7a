/**
 * `workflow_runs` repository. Every status change is a compare-and-set (DESIGN.md "Run
 * lifecycle"): the filter names the statuses the run may come from and, for a runner, the lease it
 * must hold. Callers append the matching `run_events` entry.
 */
import { RUN_TRANSITIONS, toDocument, type RunRecord, type RunStatus } from '@switchyard/domain';
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
import { documentToRecord, newId, oid, recordToDocument } from './documents.ts';

export const WORKFLOW_RUNS = 'workflow_runs';
const REFS = ['workflowDefinitionId', 'parentRunId'] as const;

/** What the trigger endpoint provides for a new run. */
export type NewRun = Pick<
  RunRecord,
  | 'workflowDefinitionId'
  | 'workflowVersion'
  | 'triggerSource'
  | 'initialInput'
  | 'definitionSnapshot'
  | 'parentRunId'
  | 'resolvedDependencies'
  | 'triggeringUserId'
  | 'triggeringUsername'
  | 'triggeringScopes'
>;

/** How a runner ends a run it owns. */
export type RunOutcome =
  | { status: 'completed'; finalOutput: unknown }
  | { status: 'failed'; errorSummary: string }
  | { status: 'cancelled'; errorSummary: string | null };

export class WorkflowRuns {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(WORKFLOW_RUNS);
  }

  /** Creates the indexes this repository relies on. Idempotent. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ workflow_definition_id: 1, started_at: -1 }, { name: 'workflow_started' });
    await this.collection.createIndex({ status: 1, lease_expires_at: 1 }, { name: 'status_lease' });
    await this.collection.createIndex({ parent_run_id: 1, started_at: -1 }, { name: 'parent_started' });
  }

  /** Inserts a `pending` run with no owner. */
  async create(fields: NewRun, now: Date): Promise<RunRecord> {
    const record: RunRecord = {
      id: newId(),
      ...fields,
      status: 'pending',
      finalOutput: null,
      errorSummary: null,
      pendingRequirements: [],
      pendingDirective: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      heartbeatAt: null,
      wakeSeq: 0,
      startedAt: now,
      finishedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.collection.insertOne(recordToDocument(record, REFS));
    return record;
  }

  /** The run, or null. */
  async get(id: string): Promise<RunRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(id) });
    return doc ? toRecord(doc) : null;
  }

  /** The run when it belongs to `workflowId`, else null. */
  async getInWorkflow(workflowId: string, runId: string): Promise<RunRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(runId), workflow_definition_id: oid(workflowId) });
    return doc ? toRecord(doc) : null;
  }

  /** One page of a workflow's runs, newest first, optionally of one status. */
  async list(workflowId: string, status: RunStatus | undefined, page: number, perPage: number): Promise<{ items: RunRecord[]; total: number }> {
    const filter: Document = { workflow_definition_id: oid(workflowId), ...(status ? { status } : {}) };
    const [docs, total] = await Promise.all([
      this.collection.find(filter, { sort: { started_at: -1, _id: -1 }, skip: (page - 1) * perPage, limit: perPage, projection: { definition_snapshot: 0 } }),
      this.collection.countDocuments(filter),
    ]);
    return { items: docs.map(toRecord), total };
  }

  /**
   * Claims the run for `owner` for `leaseMs` milliseconds: succeeds when the run is pending or
   * running and nobody holds a live lease (a crashed owner's expired lease counts as none).
   * Moves it to `running`. Returns the claimed run, or null when someone else has it or it ended.
   */
  async claim(runId: string, owner: string, leaseMs: number, now: Date): Promise<RunRecord | null> {
    return this.cas(
      { _id: oid(runId), status: { $in: ['pending', 'running'] }, $or: [{ lease_expires_at: null }, { lease_expires_at: { $lt: now } }] },
      { status: 'running', leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), heartbeatAt: now },
      now,
    );
  }

  /** Extends `owner`'s lease (the heartbeat). False when the lease was lost. */
  async renewLease(runId: string, owner: string, leaseMs: number, now: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: oid(runId), lease_owner: owner },
      { $set: { lease_expires_at: new Date(now.getTime() + leaseMs), heartbeat_at: now, updated_at: now } },
    );
    return result.matchedCount === 1;
  }

  /**
   * Ends a run that `owner` holds: sets the terminal status, output or error, clears the lease.
   * Null when the run is no longer owned by `owner` (lease lost) or not in a state that allows it.
   */
  async finish(runId: string, owner: string, outcome: RunOutcome, now: Date): Promise<RunRecord | null> {
    return this.cas(
      { _id: oid(runId), lease_owner: owner, status: { $in: RUN_TRANSITIONS[outcome.status] } },
      {
        status: outcome.status,
        finalOutput: outcome.status === 'completed' ? outcome.finalOutput : null,
        errorSummary: outcome.status === 'completed' ? null : outcome.errorSummary,
        finishedAt: now,
        leaseOwner: null,
        leaseExpiresAt: null,
      },
      now,
    );
  }

  /** Drops `owner`'s lease without changing the status (shutdown): another instance may claim it. */
  async release(runId: string, owner: string, now: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: oid(runId), lease_owner: owner },
      { $set: { lease_owner: null, lease_expires_at: null, updated_at: now } },
    );
    return result.matchedCount === 1;
  }

  /**
   * Ids of runs that need an owner: pending or running with no live lease (crashed owners,
   * restarts). Oldest first, at most `limit`.
   */
  async listClaimable(now: Date, limit: number): Promise<string[]> {
    const docs = await this.collection.find(
      { status: { $in: ['pending', 'running'] }, $or: [{ lease_expires_at: null }, { lease_expires_at: { $lt: now } }] },
      { sort: { started_at: 1, _id: 1 }, limit, projection: { _id: 1 } },
    );
    return docs.map((d) => (d._id as { toHexString(): string }).toHexString());
  }

  /** Deletes every run of a workflow; returns how many. */
  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.collection.deleteMany({ workflow_definition_id: oid(workflowId) })).deletedCount;
  }

  private async cas(filter: Document, changes: Partial<RunRecord>, now: Date): Promise<RunRecord | null> {
    const set = toDocument<Document>({ ...changes, updatedAt: now });
    const doc = await this.collection.findOneAndUpdate(filter, { $set: set });
    return doc ? toRecord(doc) : null;
  }
}

function toRecord(doc: Document): RunRecord {
  return documentToRecord<RunRecord>(doc, REFS);
}
