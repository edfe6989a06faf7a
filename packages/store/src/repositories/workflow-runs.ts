/**
 * `workflow_runs` repository: the run state machine's writes (create, claim, park, finish,
 * directives, decisions, leases). Every status change is a compare-and-set (DESIGN.md "Run
 * lifecycle"): the filter names the statuses the run may come from and, for a runner, the lease it
 * must hold. Callers append the matching `run_events` entry. The reads and scans are the base
 * class, {@link RunReads} (run-reads.ts); what both share is in run-documents.ts.
 */
import {
  RUN_TRANSITIONS,
  TERMINAL_RUN_STATUSES,
  boundedText,
  toDocument,
  type Actor,
  type Decision,
  type PendingDirective,
  type RequirementRecord,
  type RetryWait,
  type RunRecord,
  type RunStatus,
} from '@switchyard/domain';
import type { Document } from '../document-collection.ts';
import { newId, oid, recordToDocument } from './documents.ts';
import { CLAIMABLE, DECIDABLE, REFS, noLiveLease, toRecord } from './run-documents.ts';
import { RunReads } from './run-reads.ts';

export { WORKFLOW_RUNS, type RunGate, type RunListFilter } from './run-documents.ts';

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
> & {
  /** How the trigger was identified (issue #18); default unknown (null). */
  triggeringVia?: RunRecord['triggeringVia'];
  /** Who triggered the runs it was made from (four-eyes, issue #18); default none. */
  triggerLineage?: string[];
  /** Decided requirements carried over from a source run (a retry replays those decisions); default none. */
  pendingRequirements?: RequirementRecord[];
  /** Most children of one parallel node in flight at once for this run; default the engine's. */
  parallelLimit?: number | null;
  /** The run must end within this many seconds of its creation (`deadline_at`); default none. */
  timeoutSeconds?: number | null;
  /** A node rerun's target: the run ends right after it; default none. */
  stopAfter?: { nodeId: string; iterationPath: string } | null;
  /** Recovery leaves the new run alone until then (while its creator prepares it); default none. */
  recoverAfter?: Date | null;
  /** The trigger's W3C trace context (validated by the caller); default none. */
  traceParent?: string | null;
  traceState?: string | null;
  /** What started the run besides a caller (issue #21): a schedule's tick, or an event; default none. */
  scheduleId?: string | null;
  scheduledAt?: Date | null;
  eventId?: string | null;
};

/** What a heartbeat learns of the run it renewed: the directive pending on it, if any. */
export type LeaseRenewal = Pick<RunRecord, 'pendingDirective' | 'cancelReason' | 'cancelledBy' | 'timeoutSeconds'>;

/** What {@link WorkflowRuns.decideRequirement} reads back of the run it decided on. */
export type DecidedRun = Pick<RunRecord, 'id' | 'workflowDefinitionId' | 'status' | 'wakeSeq'>;

/** Who cancelled and why, stored with a cancel or timeout directive. */
export interface CancelRequest {
  cancelReason: string | null;
  cancelledBy: Actor;
}

/** How a runner ends a run it owns. */
export type RunOutcome =
  | { status: 'completed'; finalOutput: unknown }
  | { status: 'failed'; errorSummary: string }
  | { status: 'cancelled'; errorSummary: string | null };

/** A run as {@link WorkflowRuns.claim} returns it. */
export type ClaimedRun = RunRecord & {
  /** The owner whose lease had expired and was taken over by this claim (its process died or lost the store); null otherwise. */
  takenOverFrom: string | null;
};
export class WorkflowRuns extends RunReads {
  /** Inserts a `pending` run with no owner (with `id` when the caller prepared data under it first). */
  async create(fields: NewRun, now: Date, id: string = newId()): Promise<RunRecord> {
    const record: RunRecord = {
      id,
      ...fields,
      status: 'pending',
      finalOutput: null,
      errorSummary: null,
      pendingRequirements: fields.pendingRequirements ?? [],
      pendingDirective: null,
      pausedAt: null,
      cancelReason: null,
      cancelledBy: null,
      timeoutSeconds: fields.timeoutSeconds ?? null,
      stopAfter: fields.stopAfter ?? null,
      deadlineAt: fields.timeoutSeconds ? new Date(now.getTime() + fields.timeoutSeconds * 1000) : null,
      leaseOwner: null,
      leaseExpiresAt: null,
      heartbeatAt: null,
      wakeSeq: 0,
      wakePending: false,
      internalFailures: 0,
      claimsSinceProgress: 0,
      recoverAfter: fields.recoverAfter ?? null,
      traceParent: fields.traceParent ?? null,
      traceState: fields.traceState ?? null,
      scheduleId: fields.scheduleId ?? null,
      scheduledAt: fields.scheduledAt ?? null,
      eventId: fields.eventId ?? null,
      startedAt: now,
      finishedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.collection.insertOne(recordToDocument(record, REFS));
    return record;
  }

  /**
   * Claims the run for `owner` for `leaseMs` milliseconds: succeeds when nobody holds a live lease
   * (a crashed owner's expired lease counts as none) and the run is pending, running, or awaiting
   * approval with a decision not yet consumed (`wake_pending`). Moves it to `running`: for a parked
   * run this is the one continuation after a decision. Counts the claim in `claims_since_progress`
   * and sets `recover_after` to `now + recoveryBackoffMs(count)` (recovery scans skip the run until
   * then, should this execution die too). Returns the claimed run with `takenOverFrom` (whose
   * expired lease it took over, null when the run had no owner or was this owner's), or null when
   * someone else has it, it ended, or it has nothing to continue with.
   */
  async claim(runId: string, owner: string, leaseMs: number, now: Date): Promise<ClaimedRun | null> {
    const set = toDocument<Document>({ status: 'running', leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), heartbeatAt: now, wakePending: false, retryWaits: [], updatedAt: now });
    // The document before the claim tells whose expired lease (if any) was taken over; the one
    // after is that document with this update's top-level `$set` and `$inc` applied.
    const before = await this.collection.findOneAndUpdate(
      // An instance may also re-claim a run it still holds (its execution ended on an error).
      { _id: oid(runId), $and: [CLAIMABLE, { $or: [noLiveLease(now), { lease_owner: owner }] }] },
      { $set: set, $inc: { claims_since_progress: 1 } },
      { returnDocument: 'before' },
    );
    if (!before) return null;
    const previousOwner = typeof before.lease_owner === 'string' ? before.lease_owner : null;
    const claimsSinceProgress = (typeof before.claims_since_progress === 'number' ? before.claims_since_progress : 0) + 1;
    const run: ClaimedRun = {
      ...toRecord({ ...before, ...set, claims_since_progress: claimsSinceProgress }),
      takenOverFrom: previousOwner !== null && previousOwner !== owner ? previousOwner : null,
    };
    const backoffMs = recoveryBackoffMs(run.claimsSinceProgress ?? 1, leaseMs);
    if (backoffMs > 0) {
      try {
        await this.collection.updateOne({ _id: oid(runId), lease_owner: owner }, { $set: { recover_after: new Date(now.getTime() + leaseMs + backoffMs) } });
      } catch {
        // The backoff is advisory: the claim holds, and the run executes, without it.
      }
    }
    return run;
  }

  /**
   * Records that `owner`'s execution made progress (a node run ended): resets the claim count and
   * the recovery backoff. False when the lease was lost.
   */
  async markProgress(runId: string, owner: string): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: oid(runId), lease_owner: owner }, { $set: { claims_since_progress: 0, recover_after: null } });
    return result.matchedCount === 1;
  }

  /**
   * Stores the trace context later executions of the run continue (see `RunRecord.traceParent`),
   * unless the run has one already or `owner` no longer holds it. Resolves true when stored.
   */
  async setTraceContext(runId: string, owner: string, traceParent: string, traceState: string | null): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: oid(runId), lease_owner: owner, trace_parent: null },
      { $set: { trace_parent: traceParent, trace_state: traceState } },
    );
    return result.matchedCount === 1;
  }

  /**
   * Parks a run at its HITL gates: `running` -> `awaiting_approval`, lease released. Fails (null)
   * when a decision arrived since the traversal read the run (`wake_seq` moved): the caller must
   * traverse again instead of parking, or that decision would never be consumed (lost wake-up);
   * also when a directive is pending (it is honoured first).
   */
  async park(runId: string, owner: string, seenWakeSeq: number, now: Date): Promise<Pick<RunRecord, 'id' | 'pendingRequirements'> | null> {
    return this.cas(
      // A directive that came in during the traversal must be honoured first (the caller reads the run again).
      { _id: oid(runId), lease_owner: owner, status: 'running', wake_seq: seenWakeSeq, pending_directive: null },
      { status: 'awaiting_approval', leaseOwner: null, leaseExpiresAt: null, wakePending: false, internalFailures: 0, claimsSinceProgress: 0, recoverAfter: null },
      now,
      // What the caller does next (start the gates' timeout clocks) reads only the gates.
      { pending_requirements: 1 },
    );
  }

  /**
   * Starts the timeout clock of the run's undecided gates that have a `timeout_seconds` but no
   * `timeout_at` yet: `timeout_at = now + timeout_seconds`. Called when the run parks, i.e. when
   * its gates become visible (a gate raised in one branch while another still runs is not timed
   * before anyone can see it). Idempotent; returns how many clocks it started.
   */
  async startTimeouts(run: Pick<RunRecord, 'id' | 'pendingRequirements'>, now: Date): Promise<number> {
    let started = 0;
    for (const requirement of run.pendingRequirements) {
      if (requirement.decidedAt !== null || requirement.timeoutAt !== null || requirement.timeoutSeconds === null) continue;
      const result = await this.collection.updateOne(
        { _id: oid(run.id) },
        { $set: { 'pending_requirements.$[r].timeout_at': new Date(now.getTime() + requirement.timeoutSeconds * 1000) } },
        { arrayFilters: [{ 'r.gate_key': requirement.gateKey, 'r.timeout_at': null, 'r.decided_at': null }] },
      );
      started += result.modifiedCount;
    }
    return started;
  }

  /**
   * Gives up `owner`'s lease after an execution ended on an internal error, counting it. Returns
   * the new count of consecutive internal failures, or null when the lease was already gone.
   */
  async releaseAfterError(runId: string, owner: string, now: Date): Promise<number | null> {
    const doc = await this.collection.findOneAndUpdate(
      { _id: oid(runId), lease_owner: owner },
      { $set: { lease_owner: null, lease_expires_at: null, updated_at: now }, $inc: { internal_failures: 1 } },
      { projection: { internal_failures: 1 } },
    );
    return doc ? (doc.internal_failures as number) : null;
  }

  /**
   * Adds a requirement unless one with the same `gateKey` exists (re-traversal). Only the lease
   * holder adds. Returns false when the lease was lost.
   */
  async addRequirement(runId: string, owner: string, requirement: RequirementRecord, now: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: oid(runId), lease_owner: owner, 'pending_requirements.gate_key': { $ne: requirement.gateKey } },
      { $push: { pending_requirements: toDocument(requirement) }, $set: { updated_at: now } },
    );
    if (result.matchedCount === 1) return true;
    return (await this.collection.countDocuments({ _id: oid(runId), lease_owner: owner })) === 1;
  }

  /**
   * Adds a requirement raised by no traversal (a human request, phase `ask`) to a run that has not
   * ended, whoever executes it: no lease needed (the run's owner is busy executing the step that
   * asks). Unless one with the same `gateKey` exists. With `expectedCount`, only while the run
   * holds exactly that many requirements (a compare-and-set: the caller checked the run's bounds on
   * that state). The count stands for the state only because requirements are only ever appended:
   * a `$pull` on `pending_requirements` anywhere would let remove-one-add-one pass this check. Returns the run with it, or null when the
   * run does not exist, has ended, already has that key, or holds another number of requirements.
   */
  async addRequirementToLiveRun(runId: string, requirement: RequirementRecord, now: Date, expectedCount?: number): Promise<RunRecord | null> {
    const filter: Document = { _id: oid(runId), status: { $nin: [...TERMINAL_RUN_STATUSES] }, 'pending_requirements.gate_key': { $ne: requirement.gateKey } };
    if (expectedCount !== undefined) {
      filter[`pending_requirements.${expectedCount}`] = { $exists: false };
      if (expectedCount > 0) filter[`pending_requirements.${expectedCount - 1}`] = { $exists: true };
    }
    const doc = await this.collection.findOneAndUpdate(filter, { $push: { pending_requirements: toDocument(requirement) }, $set: { updated_at: now } });
    return doc ? toRecord(doc) : null;
  }

  /**
   * Records a decision on the requirement `gateKey` with one compare-and-set: the filter requires
   * that element to be undecided (`$[r]` + arrayFilters), so of concurrent deciders exactly one
   * gets the run back and every other gets null. `expiredAt` restricts it to a requirement whose
   * timeout passed (the sweeper). Bumps `wake_seq` and sets `wake_pending` unless `wakes` is false
   * (a decision no traversal consumes: a human request). Reads back only what a decider reports
   * (see {@link DecidedRun}).
   */
  async decideRequirement(runId: string, gateKey: string, decision: Decision, now: Date, expiredAt?: Date, wakes = true): Promise<DecidedRun | null> {
    const element: Record<string, unknown> = { gate_key: gateKey, decided_at: null, ...(expiredAt ? { timeout_at: { $lte: expiredAt } } : {}) };
    const set: Record<string, unknown> = { updated_at: now, ...(wakes ? { wake_pending: true } : {}) };
    const fields = { ...decision, decidedAt: now };
    for (const [key, value] of Object.entries(toDocument<Record<string, unknown>>(fields))) set[`pending_requirements.$[r].${key}`] = value;
    const doc = await this.collection.findOneAndUpdate(
      { _id: oid(runId), status: { $in: DECIDABLE }, pending_requirements: { $elemMatch: element } },
      { $set: set, ...(wakes ? { $inc: { wake_seq: 1 } } : {}) },
      { arrayFilters: [Object.fromEntries(Object.entries(element).map(([k, v]) => [`r.${k}`, v]))], projection: { workflow_definition_id: 1, status: 1, wake_seq: 1 } },
    );
    return doc ? toRecord(doc) : null;
  }

  /**
   * Extends `owner`'s lease (the heartbeat) by `leaseMs` from `now`. Returns what the runner must
   * learn from the run (a pending directive), or null when the lease was lost.
   */
  async renewLease(runId: string, owner: string, leaseMs: number, now: Date): Promise<LeaseRenewal | null> {
    const doc = await this.collection.findOneAndUpdate(
      { _id: oid(runId), lease_owner: owner },
      { $set: { lease_expires_at: new Date(now.getTime() + leaseMs), heartbeat_at: now, updated_at: now } },
      { projection: { pending_directive: 1, cancel_reason: 1, cancelled_by: 1, timeout_seconds: 1 } },
    );
    if (!doc) return null;
    const run = toRecord(doc);
    return { pendingDirective: run.pendingDirective ?? null, cancelReason: run.cancelReason ?? null, cancelledBy: run.cancelledBy ?? null, timeoutSeconds: run.timeoutSeconds ?? null };
  }

  /**
   * Ends a run that `owner` holds: sets the terminal status, output or error, clears the lease,
   * and closes every gate still undecided (`decided_by: 'run_ended'`), so that nothing stays
   * pending on an ended run. False when the run is no longer owned by `owner` (lease lost) or not
   * in a state that allows it (nothing is read back: the caller holds what it wrote).
   */
  async finish(runId: string, owner: string, outcome: RunOutcome, now: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: oid(runId), lease_owner: owner, status: { $in: RUN_TRANSITIONS[outcome.status] } },
      { $set: endFields(outcome, now) },
      { arrayFilters: [{ 'open.decided_at': null }] },
    );
    return result.matchedCount === 1;
  }

  /**
   * Ends a run nobody executes (a cancel or timeout directive on a run in status `from`: pending,
   * paused, parked), with the same fields as {@link finish}, and records who cancelled and why.
   * Null when its status is no longer `from` (compare-and-set).
   */
  async endUnowned(runId: string, from: RunStatus, outcome: Exclude<RunOutcome, { status: 'completed' }>, cancel: CancelRequest, now: Date): Promise<RunRecord | null> {
    const doc = await this.collection.findOneAndUpdate(
      { _id: oid(runId), status: from, lease_owner: null },
      { $set: { ...endFields(outcome, now), ...toDocument<Document>(cancel) } },
      { arrayFilters: [{ 'open.decided_at': null }] },
    );
    return doc ? toRecord(doc) : null;
  }

  /** Pauses a run nobody executes (`from`: pending or awaiting_approval): -> `paused`, `paused_at` now. Null when its status moved. */
  async pauseUnowned(runId: string, from: RunStatus, now: Date): Promise<RunRecord | null> {
    return this.cas({ _id: oid(runId), status: from, lease_owner: null }, { status: 'paused', pausedAt: now, pendingDirective: null }, now);
  }

  /**
   * Pauses a run `owner` executes once its pause directive is honoured (no node executes any more):
   * `running` -> `paused`, the directive and the lease cleared. Null when the lease was lost or the
   * directive is no longer a pause (withdrawn by a resume, or replaced by a cancel).
   */
  async pauseOwned(runId: string, owner: string, now: Date): Promise<RunRecord | null> {
    return this.cas(
      { _id: oid(runId), lease_owner: owner, status: 'running', pending_directive: 'pause' },
      { status: 'paused', pausedAt: now, pendingDirective: null, retryWaits: [], leaseOwner: null, leaseExpiresAt: null, internalFailures: 0, claimsSinceProgress: 0, recoverAfter: null },
      now,
    );
  }

  /** Resumes a paused run: `paused` -> `pending` (claimable: it continues by re-traversal). Null when it is not paused. */
  async resumePaused(runId: string, now: Date): Promise<RunRecord | null> {
    return this.cas({ _id: oid(runId), status: 'paused' }, { status: 'pending', pausedAt: null, pendingDirective: null }, now);
  }

  /**
   * Sets the directive pending on a `running` run from `expected` to `directive` (null withdraws
   * it), with who cancelled and why for a cancel or timeout. Null when the run is not running or
   * another directive came first (compare-and-set).
   */
  async setDirective(runId: string, expected: PendingDirective | null, directive: PendingDirective | null, now: Date, cancel?: CancelRequest): Promise<RunRecord | null> {
    return this.cas({ _id: oid(runId), status: 'running', pending_directive: expected }, { pendingDirective: directive, ...cancel }, now);
  }

  /** Lets recovery claim the run at once (its creator finished preparing it). */
  async clearRecoveryBackoff(runId: string): Promise<void> {
    await this.collection.updateOne({ _id: oid(runId) }, { $set: { recover_after: null } });
  }

  /** Deletes a run that never started (its creator could not prepare it); true when it did. */
  async deleteUnstarted(runId: string): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: oid(runId), status: 'pending', lease_owner: null })).deletedCount === 1;
  }

  /** Records that a step of the run `owner` executes waits in retry backoff until `wait.wakeAt`. */
  async addRetryWait(runId: string, owner: string, wait: RetryWait): Promise<void> {
    await this.collection.updateOne({ _id: oid(runId), lease_owner: owner }, { $push: { retry_waits: toDocument(wait) } });
  }

  /** Removes a wait recorded by {@link addRetryWait} (the backoff ended or was interrupted). */
  async removeRetryWait(runId: string, owner: string, wait: RetryWait): Promise<void> {
    await this.collection.updateOne({ _id: oid(runId), lease_owner: owner }, { $pull: { retry_waits: toDocument(wait) } });
  }

  /**
   * Drops `owner`'s lease without changing the status (shutdown): another instance may claim it.
   * The claim it gave up is taken back from `claims_since_progress` (a graceful stop is no sign of
   * a poison run, but it does not wipe out earlier claims without progress either).
   */
  async release(runId: string, owner: string, now: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: oid(runId), lease_owner: owner },
      { $set: { lease_owner: null, lease_expires_at: null, recover_after: null, updated_at: now }, $inc: { claims_since_progress: -1 } },
    );
    return result.matchedCount === 1;
  }

  /** Deletes the run if it has ended; true when it did. */
  async deleteEnded(runId: string): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: oid(runId), status: { $in: [...TERMINAL_RUN_STATUSES] } })).deletedCount === 1;
  }

  /** Deletes every run of a workflow; returns how many. */
  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.collection.deleteMany({ workflow_definition_id: oid(workflowId) })).deletedCount;
  }

  /** Applies `changes` where `filter` matches; the run after them (only the `projection` fields, when given), or null. */
  private async cas(filter: Document, changes: Partial<RunRecord>, now: Date, projection?: Document): Promise<RunRecord | null> {
    const set = toDocument<Document>({ ...changes, updatedAt: now });
    const doc = await this.collection.findOneAndUpdate(filter, { $set: set }, projection ? { projection } : {});
    return doc ? toRecord(doc) : null;
  }

}

/**
 * The `$set` that ends a run: terminal status, output or error, no lease, no directive, and every
 * gate still undecided closed (`decided_by: 'run_ended'`, needs the arrayFilter `open`).
 */
function endFields(outcome: RunOutcome, now: Date): Document {
  return {
    ...toDocument<Document>({
      status: outcome.status,
      finalOutput: outcome.status === 'completed' ? outcome.finalOutput : null,
      errorSummary: outcome.status === 'completed' || outcome.errorSummary === null ? null : boundedText(outcome.errorSummary),
      finishedAt: now,
      pendingDirective: null,
      pausedAt: null,
      retryWaits: [],
      leaseOwner: null,
      leaseExpiresAt: null,
      updatedAt: now,
    }),
    'pending_requirements.$[open].decided_at': now,
    'pending_requirements.$[open].decided_by': 'run_ended',
    'pending_requirements.$[open].resolution': 'cancel',
  };
}

/**
 * Extra wait, in milliseconds, before recovery may claim a run again after its `claims`-th claim
 * without progress (should that execution die): none for the first, then `leaseMs`, doubling,
 * at most 5 minutes.
 */
export function recoveryBackoffMs(claims: number, leaseMs: number): number {
  if (claims <= 1) return 0;
  return Math.min(leaseMs * 2 ** (claims - 2), 300_000);
}

