/**
 * The reads and scans of the `workflow_runs` repository (issue #21 "Shape"): single runs, pages,
 * gates, and the scans the engine, sweepers and metrics make. They never change a run;
 * {@link WorkflowRuns} (workflow-runs.ts), the state machine's writes, extends this class, so
 * `repos.runs` offers both and a reader may be typed as `RunReads`.
 */
import { TERMINAL_RUN_STATUSES, type RequirementRecord, type RunRecord, type RunStatus, type RunViewRecord } from '@switchyard/domain';
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
import { hexId, oid } from './documents.ts';
import { CLAIMABLE, DECIDABLE, LIST_PROJECTION, LIVE, VIEW_PROJECTION, WORKFLOW_RUNS, inWorkflows, noLiveLease, runGate, toRecord, type RunGate, type RunListFilter } from './run-documents.ts';

export class RunReads {
  protected readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(WORKFLOW_RUNS);
  }

  /** The run, or null. */
  async get(id: string): Promise<RunRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(id) });
    return doc ? toRecord(doc) : null;
  }

  /** The run's status, or null when it does not exist (reads nothing else). */
  async statusOf(id: string): Promise<RunStatus | null> {
    const doc = await this.collection.findOne({ _id: oid(id) }, { projection: { status: 1 } });
    return doc ? (doc.status as RunStatus) : null;
  }

  /** True when the run exists (reads no field of it). */
  async exists(id: string): Promise<boolean> {
    return (await this.collection.countDocuments({ _id: oid(id) })) === 1;
  }

  /** The id of the run's workflow, or null when the run does not exist (reads nothing else). */
  async workflowIdOf(runId: string): Promise<string | null> {
    const doc = await this.collection.findOne({ _id: oid(runId) }, { projection: { workflow_definition_id: 1 } });
    return doc ? (doc.workflow_definition_id as { toHexString(): string }).toHexString() : null;
  }

  /** The run when it belongs to `workflowId`, else null. */
  async getInWorkflow(workflowId: string, runId: string): Promise<RunRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(runId), workflow_definition_id: oid(workflowId) });
    return doc ? toRecord(doc) : null;
  }

  /** What the run views show of the run (its `RUN_VIEW_FIELDS` only) when it belongs to `workflowId`, else null. */
  async getViewInWorkflow(workflowId: string, runId: string): Promise<RunViewRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(runId), workflow_definition_id: oid(workflowId) }, { projection: VIEW_PROJECTION });
    return doc ? toRecord(doc) : null;
  }

  /**
   * The run's status and one of its gates, reading nothing else: the undecided gate of step
   * `stepId` (a decision's target), or the gate `gateKey` (decided or not). `gate` is null when
   * the run has no such gate; the whole answer is null when the run does not exist (or, with
   * `workflowId`, belongs to another workflow).
   */
  async gateOf(runId: string, which: { stepId: string } | { gateKey: string }, workflowId?: string): Promise<RunGate | null> {
    const element = 'stepId' in which ? { step_id: which.stepId, decided_at: null } : { gate_key: which.gateKey };
    const filter: Document = { _id: oid(runId), ...(workflowId === undefined ? {} : { workflow_definition_id: oid(workflowId) }) };
    const doc = await this.collection.findOne(filter, { projection: { workflow_definition_id: 1, status: 1, triggering_user_id: 1, trigger_lineage: 1, pending_requirements: { $elemMatch: element } } });
    return doc ? runGate(doc, (gates) => gates[0]) : null;
  }

  /**
   * The run's status and the gate of step `stepId` raised last (what a 409 on a decided step
   * reports), or null when the step never had one. Reads the run's gates but maps only that one;
   * null when the run does not exist.
   */
  async latestGateOf(runId: string, stepId: string): Promise<RunGate | null> {
    const doc = await this.collection.findOne({ _id: oid(runId) }, { projection: { workflow_definition_id: 1, status: 1, pending_requirements: 1 } });
    if (!doc) return null;
    return runGate(doc, (gates) => gates.findLast((gate) => gate.step_id === stepId));
  }

  /**
   * One page of runs, newest first, matching `filter` (any of workflow, status, trigger source,
   * parent run); without their large fields (see LIST_PROJECTION), for list rows.
   */
  async list(filter: RunListFilter, page: number, perPage: number): Promise<{ items: RunRecord[]; total: number }> {
    let query: Document = {};
    if (filter.workflowId !== undefined) query.workflow_definition_id = oid(filter.workflowId);
    if (filter.parentRunId !== undefined) query.parent_run_id = oid(filter.parentRunId);
    if (filter.status !== undefined) query.status = filter.status;
    if (filter.triggerSource !== undefined) query.trigger_source = filter.triggerSource;
    query = inWorkflows(query, filter.workflowIds);
    const [docs, total] = await Promise.all([
      this.collection.find(query, { sort: { started_at: -1, _id: -1 }, skip: (page - 1) * perPage, limit: perPage, projection: LIST_PROJECTION }),
      this.collection.countDocuments(query),
    ]);
    return { items: docs.map(toRecord), total };
  }

  /**
   * Runs with at least one undecided requirement that can still be decided (running, awaiting
   * approval, paused), oldest first, at most `limit`, optionally of one run or workflow; with
   * their requirements (without `stepOutput`, `editedOutput`, `userInput`: see {@link requirementsOf}) but not their definition
   * snapshot, input or output.
   */
  async listWithUndecided(filter: { runId?: string; workflowId?: string; workflowIds?: readonly string[] }, limit: number): Promise<RunRecord[]> {
    const query: Document = { status: { $in: DECIDABLE }, pending_requirements: { $elemMatch: { decided_at: null } } };
    if (filter.runId !== undefined) query._id = oid(filter.runId);
    if (filter.workflowId !== undefined) query.workflow_definition_id = oid(filter.workflowId);
    const docs = await this.collection.find(inWorkflows(query, filter.workflowIds), {
      sort: { _id: 1 },
      limit,
      projection: {
        definition_snapshot: 0,
        initial_input: 0,
        final_output: 0,
        'pending_requirements.step_output': 0,
        'pending_requirements.edited_output': 0,
        'pending_requirements.user_input': 0,
      },
    });
    return docs.map(toRecord);
  }

  /** Every requirement the run raised, in full (with `stepOutput`); empty for an unknown run. */
  async requirementsOf(runId: string): Promise<RequirementRecord[]> {
    const doc = await this.collection.findOne({ _id: oid(runId) }, { projection: { pending_requirements: 1 } });
    return doc ? toRecord(doc).pendingRequirements : [];
  }

  /** Parked runs whose undecided gates have no timeout clock yet (a crash right after parking), at most `limit`. */
  async listUntimedGates(limit: number): Promise<RunRecord[]> {
    const docs = await this.collection.find(
      { status: 'awaiting_approval', pending_requirements: { $elemMatch: { decided_at: null, timeout_at: null, timeout_seconds: { $ne: null } } } },
      { limit, sort: { _id: 1 }, projection: { definition_snapshot: 0 } },
    );
    return docs.map(toRecord);
  }

  /** Runs with an undecided requirement whose timeout is at or before `now` (for the sweeper), at most `limit`. */
  async listExpiredRequirements(now: Date, limit: number): Promise<RunRecord[]> {
    const docs = await this.collection.find(
      { status: { $in: DECIDABLE }, pending_requirements: { $elemMatch: { decided_at: null, timeout_at: { $lte: now } } } },
      { limit, sort: { _id: 1 }, projection: { definition_snapshot: 0 } },
    );
    return docs.map(toRecord);
  }

  /** Runs not ended whose deadline passed, without a cancel or timeout pending yet, oldest deadline first, at most `limit`. */
  async listOverdue(now: Date, limit: number): Promise<RunRecord[]> {
    const docs = await this.collection.find(
      // The live statuses as points (not `$nin` of the ended ones): index `overdue` then yields deadline order.
      { deadline_at: { $lte: now }, status: { $in: LIVE }, pending_directive: { $nin: ['cancel', 'timeout'] } },
      { sort: { deadline_at: 1, _id: 1 }, limit, projection: { definition_snapshot: 0, initial_input: 0, final_output: 0, pending_requirements: 0 } },
    );
    return docs.map(toRecord);
  }

  /**
   * Ids of runs that need an owner: pending or running with no live lease (crashed owners,
   * restarts), or parked with an unconsumed decision, and not backing off (`recover_after` in the
   * future). In trigger order (`created_at`, then id: the order in which an instance at its
   * active-run cap claims waiting runs), at most `limit`.
   */
  async listClaimable(now: Date, limit: number): Promise<string[]> {
    const docs = await this.collection.find(
      { $and: [CLAIMABLE, noLiveLease(now), { $or: [{ recover_after: null }, { recover_after: { $lte: now } }] }] },
      { sort: { created_at: 1, _id: 1 }, limit, projection: { _id: 1 } },
    );
    return docs.map(hexId);
  }

  /** Ids of a workflow's runs that have not ended. */
  async listUnfinishedIds(workflowId: string): Promise<string[]> {
    const docs = await this.collection.find({ workflow_definition_id: oid(workflowId), status: { $nin: [...TERMINAL_RUN_STATUSES] } }, { projection: { _id: 1 } });
    return docs.map(hexId);
  }

  /**
   * How many runs of each workflow of `workflowIds` have not ended (pending, running, paused,
   * awaiting approval), by workflow id: one count per workflow (index `workflow_status_recent`), so
   * nothing is read into memory however many runs are queued.
   */
  async countUnfinishedByWorkflow(workflowIds: readonly string[]): Promise<Map<string, number>> {
    const ids = [...new Set(workflowIds)];
    const counts = await Promise.all(
      ids.map((id) => this.collection.countDocuments({ workflow_definition_id: oid(id), status: { $nin: [...TERMINAL_RUN_STATUSES] } })),
    );
    return new Map(ids.map((id, i) => [id, counts[i]!]));
  }

  /** How many runs have status `status` (one count, index `status_recent`; the metrics' queued-runs gauge counts `pending`). */
  async countByStatus(status: RunRecord['status']): Promise<number> {
    return this.collection.countDocuments({ status });
  }

  /**
   * How many requirements (gates and human requests) are undecided on runs that can still be
   * decided (running, awaiting approval, paused), counted over at most `maxRuns` such runs,
   * oldest first: reads only the `decided_at` of each run's requirements.
   */
  async countUndecidedRequirements(maxRuns: number): Promise<number> {
    const docs = await this.collection.find(
      { status: { $in: DECIDABLE }, pending_requirements: { $elemMatch: { decided_at: null } } },
      { sort: { _id: 1 }, limit: maxRuns, projection: { 'pending_requirements.decided_at': 1 } },
    );
    let undecided = 0;
    for (const doc of docs) {
      const requirements = Array.isArray(doc.pending_requirements) ? (doc.pending_requirements as Document[]) : [];
      for (const requirement of requirements) if (requirement.decided_at === null || requirement.decided_at === undefined) undecided += 1;
    }
    return undecided;
  }

  /** Ended runs (completed, failed, cancelled) that finished before `cutoff`, oldest first, at most `limit`: run and workflow ids. */
  async listEndedBefore(cutoff: Date, limit: number): Promise<Array<{ runId: string; workflowId: string }>> {
    const docs = await this.collection.find(
      { status: { $in: [...TERMINAL_RUN_STATUSES] }, finished_at: { $lt: cutoff } },
      { sort: { finished_at: 1, _id: 1 }, limit, projection: { _id: 1, workflow_definition_id: 1 } },
    );
    return docs.map((doc) => ({ runId: hexId(doc), workflowId: (doc.workflow_definition_id as { toHexString(): string }).toHexString() }));
  }

  /** Ids of a workflow's ended runs beyond its `keep` newest runs (by start), at most `limit`. */
  async listEndedBeyond(workflowId: string, keep: number, limit: number): Promise<string[]> {
    const docs = await this.collection.find(
      { workflow_definition_id: oid(workflowId), status: { $in: [...TERMINAL_RUN_STATUSES] } },
      { sort: { started_at: -1, _id: -1 }, skip: keep, limit, projection: { _id: 1 } },
    );
    return docs.map(hexId);
  }

  /**
   * The runs started by schedule `scheduleId` (top-level `schedule_id`) that have not ended, in no
   * particular order, at most `limit`: id, status, start and tick (index `schedule_status`). The
   * overlap policy of a schedule's next tick looks at these.
   */
  async listUnfinishedBySchedule(scheduleId: string, limit: number): Promise<Array<Pick<RunRecord, 'id' | 'status' | 'startedAt'> & { scheduledAt: Date | null }>> {
    const docs = await this.collection.find(
      { schedule_id: scheduleId, status: { $nin: [...TERMINAL_RUN_STATUSES] } },
      { limit, projection: { _id: 1, status: 1, started_at: 1, scheduled_at: 1 } },
    );
    return docs.map((doc) => ({ id: hexId(doc), status: doc.status as RunStatus, startedAt: doc.started_at as Date, scheduledAt: (doc.scheduled_at as Date | null | undefined) ?? null }));
  }


  /**
   * The run schedule `scheduleId` started for its tick `scheduledAt`, if any: id, status and
   * start (index `schedule_tick`). A tick fired again (its loop died after creating the run)
   * finds its run here instead of applying the overlap policy against it.
   */
  async findByScheduleTick(scheduleId: string, scheduledAt: Date): Promise<Pick<RunRecord, 'id' | 'status' | 'startedAt'> | null> {
    const doc = await this.collection.findOne({ schedule_id: scheduleId, scheduled_at: scheduledAt }, { projection: { _id: 1, status: 1, started_at: 1 } });
    return doc ? { id: hexId(doc), status: doc.status as RunStatus, startedAt: doc.started_at as Date } : null;
  }
}
