/**
 * `node_runs` repository: one document per (run, node id, iteration path), unique
 * (index `run_node_iteration`). A retry is a new attempt on the same document.
 */
import type { NodeRunRecord, NodeRunStatus, NodeRunTally, NodeType, PoolAttempt, SnapshotField } from '@switchyard/domain';
import { JSON_NULL_BYTES, OPEN_NODE_RUN_STATUSES, boundedText, fromStoredUserData, jsonByteLength, tallyNodeRuns, toStoredUserData } from '@switchyard/domain';
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
import { documentToRecord, hexId, newId, oid, recordToDocument } from './documents.ts';

export const NODE_RUNS = 'node_runs';
const REFS = ['workflowRunId', 'workflowDefinitionId'] as const;
const COPY_REFS = [...REFS, 'reusedFromNodeRunId'] as const;

/** Identifies a node run: the node and the loop iterations around it. */
export interface NodeRunKey {
  runId: string;
  nodeId: string;
  iterationPath: string;
}

/** What the runner knows about the node when it starts an attempt. */
export interface NodeRunStart extends NodeRunKey {
  workflowDefinitionId: string;
  nodeName: string;
  nodeType: NodeType;
  inputSnapshot: unknown;
  /** Bytes of `inputSnapshot` as JSON, when the caller measured it already. */
  inputBytes?: number;
}

/** How an attempt or a node ended (`awaiting_approval`: executed, its output awaits review). */
export interface NodeRunEnd {
  status: Extract<NodeRunStatus, 'completed' | 'failed' | 'skipped' | 'cancelled' | 'awaiting_approval'>;
  outputSnapshot?: unknown;
  /** The executor's output when a reviewer replaced it. */
  originalOutputSnapshot?: unknown;
  /** Bytes of `outputSnapshot` as JSON, when the caller measured it already. */
  outputBytes?: number;
  error?: string | null;
  /** Which registry key served the attempt (see `NodeRunRecord.executorKey`); left as it is when undefined. */
  executorKey?: string | null;
  /** The `a2aPool` members that failed the attempt (see `NodeRunRecord.poolAttempts`); left as it is when undefined. */
  poolAttempts?: PoolAttempt[] | null;
}

/** Document field of each snapshot field. */
const SNAPSHOT_DOCUMENT_FIELDS: Record<SnapshotField, string> = {
  inputSnapshot: 'input_snapshot',
  outputSnapshot: 'output_snapshot',
  originalOutputSnapshot: 'original_output_snapshot',
};

/**
 * Projection that leaves every snapshot out: for lists, and for writes that return the node run
 * (snapshots can be megabytes, and the writer holds them already).
 */
const WITHOUT_SNAPSHOTS = { input_snapshot: 0, output_snapshot: 0, original_output_snapshot: 0 };


export class NodeRuns {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(NODE_RUNS);
  }

  /** Every node run of a run, by start time (ties by creation order). */
  async listByRun(runId: string): Promise<NodeRunRecord[]> {
    const docs = await this.collection.find({ workflow_run_id: oid(runId) }, { sort: { started_at: 1, _id: 1 } });
    return docs.map(toRecord);
  }

  /**
   * One page of a run's node runs by start time, without snapshots (`snapshotBytes` tells their
   * sizes): `skip` and `limit` count node runs. Load the snapshots worth showing with
   * {@link snapshotsOf}.
   */
  async listHeads(runId: string, skip: number, limit: number): Promise<NodeRunRecord[]> {
    const docs = await this.collection.find({ workflow_run_id: oid(runId) }, { sort: { started_at: 1, _id: 1 }, skip, limit, projection: WITHOUT_SNAPSHOTS });
    return docs.map(toRecord);
  }

  /** How many node runs a run has. */
  async countByRun(runId: string): Promise<number> {
    return this.collection.countDocuments({ workflow_run_id: oid(runId) });
  }

  /**
   * How the node runs of each run of `runIds` stand (counts by status, active node ids; see
   * `tallyNodeRuns`), by run id, every run of `runIds` included: one read over all of them,
   * of `workflow_run_id`, `node_id` and `status` only.
   */
  async tallyByRuns(runIds: readonly string[]): Promise<Map<string, NodeRunTally>> {
    const ids = [...new Set(runIds)];
    const byRun = new Map<string, Array<{ nodeId: string; status: NodeRunStatus }>>(ids.map((id) => [id, []]));
    if (ids.length > 0) {
      const docs = await this.collection.find(
        { workflow_run_id: ids.length === 1 ? oid(ids[0]!) : { $in: ids.map(oid) } },
        { projection: { _id: 0, workflow_run_id: 1, node_id: 1, status: 1 } },
      );
      for (const doc of docs) {
        byRun.get((doc.workflow_run_id as { toHexString(): string }).toHexString())?.push({ nodeId: doc.node_id as string, status: doc.status as NodeRunStatus });
      }
    }
    return new Map([...byRun].map(([runId, nodeRuns]) => [runId, tallyNodeRuns(nodeRuns)]));
  }

  /**
   * The `fields` snapshots of each node run in `nodeRunIds`, by node run id, each as
   * `{ [field]: value }` (only those fields are read, in one query).
   */
  async snapshotsOf(nodeRunIds: readonly string[], fields: readonly SnapshotField[]): Promise<Map<string, Partial<Record<SnapshotField, unknown>>>> {
    const found = new Map<string, Partial<Record<SnapshotField, unknown>>>();
    if (nodeRunIds.length === 0 || fields.length === 0) return found;
    const projection = Object.fromEntries(fields.map((field) => [SNAPSHOT_DOCUMENT_FIELDS[field], 1]));
    const docs = await this.collection.find({ _id: nodeRunIds.length === 1 ? oid(nodeRunIds[0]!) : { $in: nodeRunIds.map(oid) } }, { projection });
    for (const doc of docs) {
      const values: Partial<Record<SnapshotField, unknown>> = {};
      for (const field of fields) values[field] = fromStoredUserData(doc[SNAPSHOT_DOCUMENT_FIELDS[field]] ?? null);
      found.set(hexId(doc), values);
    }
    return found;
  }

  /**
   * Measures the snapshot sizes of a node run stored before sizes were recorded (or with only
   * some of them) and records them, best effort: the sizes are a cache, so a write that fails
   * (e.g. the store refuses writes for now) does not fail the read. Returns the node run with its
   * snapshots and sizes, or null when it is gone.
   */
  async backfillSnapshotBytes(nodeRunId: string): Promise<NodeRunRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(nodeRunId) });
    if (!doc) return null;
    const record = toRecord(doc);
    const snapshotBytes = { input: jsonByteLength(record.inputSnapshot), output: jsonByteLength(record.outputSnapshot), originalOutput: jsonByteLength(record.originalOutputSnapshot) };
    try {
      await this.collection.updateOne({ _id: oid(nodeRunId) }, { $set: { snapshot_bytes: { input: snapshotBytes.input, output: snapshotBytes.output, original_output: snapshotBytes.originalOutput } } });
    } catch {
      // Measured again on the next read.
    }
    return { ...record, snapshotBytes };
  }

  /** One node run of a run, or null. */
  async get(runId: string, nodeRunId: string): Promise<NodeRunRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(nodeRunId), workflow_run_id: oid(runId) });
    return doc ? toRecord(doc) : null;
  }

  /**
   * Starts the next attempt of a node run (creating it on the first): status `running`,
   * `attempt` + 1, the input snapshot of this attempt, previous error cleared. `started_at` is
   * the first attempt's start. The snapshots are not read back: the record carries the input
   * snapshot given (an attempt's output snapshots are null).
   */
  async startAttempt(start: NodeRunStart, now: Date): Promise<NodeRunRecord> {
    return this.recordAttempt(start, now);
  }

  /**
   * Records an attempt that started and already ended, in one write: what {@link startAttempt}
   * then {@link end} record (a step whose executor answered within the engine's turn).
   */
  async recordEndedAttempt(start: NodeRunStart, end: NodeRunEnd, now: Date): Promise<NodeRunRecord> {
    return this.recordAttempt(start, now, end);
  }

  /** The next attempt of a node run (see {@link startAttempt}), ended as `end` says when given. */
  private async recordAttempt(start: NodeRunStart, now: Date, end?: NodeRunEnd): Promise<NodeRunRecord> {
    const doc = await this.collection.findOneAndUpdate(
      keyFilter(start),
      {
        $setOnInsert: identityFields(start, now),
        // The first attempt's start; absent while a node waits at a gate before executing.
        $min: { started_at: now },
        $set: {
          status: 'running',
          input_snapshot: toStoredUserData(start.inputSnapshot ?? null),
          output_snapshot: null,
          // An earlier attempt's original output (before a review edit) is not this attempt's.
          original_output_snapshot: null,
          'snapshot_bytes.input': start.inputBytes ?? jsonByteLength(start.inputSnapshot),
          'snapshot_bytes.output': JSON_NULL_BYTES,
          'snapshot_bytes.original_output': JSON_NULL_BYTES,
          error: null,
          // Who serves this attempt is recorded when it ends.
          executor_key: null,
          pool_attempts: null,
          finished_at: null,
          updated_at: now,
          ...(end ? endFields(end, now) : {}),
        },
        $inc: { attempt: 1 },
      },
      { upsert: true, projection: WITHOUT_SNAPSHOTS },
    );
    return { ...toRecord(doc!), inputSnapshot: start.inputSnapshot ?? null, outputSnapshot: end?.outputSnapshot ?? null, originalOutputSnapshot: end?.originalOutputSnapshot ?? null };
  }

  /**
   * Marks a node run as held at a HITL gate before it executes (creating it with attempt 0 when it
   * does not exist yet).
   */
  async markAwaiting(start: Omit<NodeRunStart, 'inputSnapshot'>, now: Date): Promise<NodeRunRecord> {
    const doc = await this.collection.findOneAndUpdate(
      keyFilter(start),
      {
        $setOnInsert: {
          ...identityFields(start, now),
          attempt: 0,
          input_snapshot: null,
          snapshot_bytes: { input: JSON_NULL_BYTES, output: JSON_NULL_BYTES, original_output: JSON_NULL_BYTES },
          error: null,
          finished_at: null,
          created_at: now,
        },
        // Reached now: node runs list in the order nodes were reached, gated ones included.
        $min: { started_at: now },
        // No output while held before executing (a former attempt's output is not this round's).
        $set: { status: 'awaiting_approval', output_snapshot: null, updated_at: now },
      },
      { upsert: true },
    );
    return toRecord(doc!);
  }

  /** Sets the status of an unfinished node run (a container resumed by re-traversal). */
  async setStatus(nodeRunId: string, status: 'running' | 'awaiting_approval', now: Date): Promise<NodeRunRecord | null> {
    const doc = await this.collection.findOneAndUpdate({ _id: oid(nodeRunId) }, { $set: { status, updated_at: now } });
    return doc ? toRecord(doc) : null;
  }

  /**
   * Records how the current attempt (or the node) ended. Returns the updated node run (null when
   * it does not exist); its snapshots are not read back: the output snapshots are those of `end`,
   * the input snapshot is `inputSnapshot`, the one the caller holds.
   */
  async end(nodeRunId: string, end: NodeRunEnd, now: Date, inputSnapshot: unknown): Promise<NodeRunRecord | null> {
    const doc = await this.collection.findOneAndUpdate(
      { _id: oid(nodeRunId) },
      { $set: endFields(end, now) },
      { projection: WITHOUT_SNAPSHOTS },
    );
    if (!doc) return null;
    return { ...toRecord(doc), inputSnapshot, outputSnapshot: end.outputSnapshot ?? null, originalOutputSnapshot: end.originalOutputSnapshot ?? null };
  }

  /**
   * Copies a settled node run of another run into `runId` (same node, iteration path, snapshots
   * and status), marking where it came from. Re-traversal of `runId` then reuses its output
   * instead of executing the node (retry with `reuse_previous_output`).
   */
  async copyToRun(source: NodeRunRecord, runId: string, now: Date): Promise<NodeRunRecord> {
    const copy: NodeRunRecord = { ...source, id: newId(), workflowRunId: runId, reusedFromNodeRunId: source.id, createdAt: now, updatedAt: now };
    await this.collection.insertOne(recordToDocument(copy, COPY_REFS));
    return copy;
  }

  /**
   * Closes the node runs of an ended run that are still open (running, or held at a gate in a
   * branch the run never came back to): status `cancelled` with `reason` as error.
   */
  async cancelUnfinished(runId: string, reason: string, now: Date): Promise<number> {
    const result = await this.collection.updateMany(
      { workflow_run_id: oid(runId), status: { $in: [...OPEN_NODE_RUN_STATUSES] } },
      { $set: { status: 'cancelled', error: reason, finished_at: now, updated_at: now } },
    );
    return result.modifiedCount;
  }

  /** How many step node runs of the run completed (each loop iteration counts; cancel's `stepsCompleted`). */
  async countCompletedSteps(runId: string): Promise<number> {
    return this.collection.countDocuments({ workflow_run_id: oid(runId), node_type: 'step', status: 'completed' });
  }

  /** Deletes every node run of a run; returns how many. */
  async deleteByRun(runId: string): Promise<number> {
    return (await this.collection.deleteMany({ workflow_run_id: oid(runId) })).deletedCount;
  }

  /** Deletes every node run of a workflow's runs; returns how many. */
  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.collection.deleteMany({ workflow_definition_id: oid(workflowId) })).deletedCount;
  }
}



/** The fields a node run document gets when it is created, besides its key. */
function identityFields(start: Omit<NodeRunStart, 'inputSnapshot'>, now: Date): Document {
  return { workflow_definition_id: oid(start.workflowDefinitionId), node_name: start.nodeName, node_type: start.nodeType, created_at: now };
}

/** The fields an attempt's end sets (status, output snapshots and sizes, error, who served it, end time). */
function endFields(end: NodeRunEnd, now: Date): Document {
  return {
    status: end.status,
    output_snapshot: toStoredUserData(end.outputSnapshot ?? null),
    original_output_snapshot: toStoredUserData(end.originalOutputSnapshot ?? null),
    'snapshot_bytes.output': end.outputBytes ?? jsonByteLength(end.outputSnapshot),
    'snapshot_bytes.original_output': jsonByteLength(end.originalOutputSnapshot),
    error: end.error ? boundedText(end.error) : null,
    ...servedFields(end),
    finished_at: end.status === 'awaiting_approval' ? null : now,
    updated_at: now,
  };
}

/** The document fields of {@link NodeRunEnd.executorKey} and `poolAttempts`, those given only (an end after a review keeps the attempt's). */
function servedFields(end: NodeRunEnd): Document {
  const fields: Document = {};
  if (end.executorKey !== undefined) fields.executor_key = end.executorKey;
  if (end.poolAttempts !== undefined) {
    fields.pool_attempts = end.poolAttempts?.map(({ executorKey, error }) => ({ executor_key: executorKey, error: boundedText(error) })) ?? null;
  }
  return fields;
}

function keyFilter(key: NodeRunKey): Document {
  return { workflow_run_id: oid(key.runId), node_id: key.nodeId, iteration_path: key.iterationPath };
}

function toRecord(doc: Document): NodeRunRecord {
  return documentToRecord<NodeRunRecord>(doc, COPY_REFS);
}
