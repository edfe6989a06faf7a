/**
 * The run's history as the interpreter sees it (DESIGN.md "memoized re-traversal"): which node
 * runs are already settled (their outputs are reused instead of executing again), which HITL
 * gates were raised and how they were decided, and the writes that record new node runs,
 * requirements and run events.
 */
import type { NodeRunRecord, NodeType, RequirementRecord, RunEventPayloads, RunEventType, RunRecord, TypedRunEvent } from '@switchyard/domain';
import { SETTLED_NODE_RUN_STATUSES, requirementRaisedPayload } from '@switchyard/domain';
import type { NodeRunEnd, NodeRunStart, Repositories } from '@switchyard/store';
import type { Clock } from './clock.ts';

/** The owner's lease may have passed to another instance: this owner must stop. */
export class LeaseExpired extends Error {
  override readonly name = 'LeaseExpired';
}

/** Key of a node run inside one run: node id + iteration path. */
export function nodeRunKey(nodeId: string, iterationPath: string): string {
  return `${nodeId}@${iterationPath}`;
}

/** The node a ledger call is about. */
export interface LedgerNode {
  id: string;
  name: string;
  nodeType: NodeType;
}

export class RunLedger {
  private readonly memo = new Map<string, NodeRunRecord>();
  /** The last event seq this ledger wrote; null until the first write. */
  private lastSeq: number | null = null;
  /** Event writes of this ledger, one after the other (parallel branches share the ledger). */
  private events: Promise<unknown> = Promise.resolve();


  private readonly requirements = new Map<string, RequirementRecord>();
  /** Whether this execution's progress was recorded on the run (once, at the first node run that ends). */
  private progressRecorded = false;

  /**
   * `owner` is the lease holder writing through this ledger (requirements need the lease);
   * `lease.validUntil` (epoch ms) is how long its lease is known to hold, kept up to date by the
   * engine's heartbeat.
   */
  constructor(
    private readonly repos: Repositories,
    readonly run: RunRecord,
    private readonly clock: Clock,
    history: readonly NodeRunRecord[],
    private readonly owner: string,
    private readonly lease: { validUntil: number } = { validUntil: Number.POSITIVE_INFINITY },
  ) {
    for (const nodeRun of history) this.memo.set(nodeRunKey(nodeRun.nodeId, nodeRun.iterationPath), nodeRun);
    for (const requirement of run.pendingRequirements) this.requirements.set(requirement.gateKey, requirement);
  }

  /** The requirement raised at this gate (decided or not), else undefined. */
  requirement(gateKey: string): RequirementRecord | undefined {
    return this.requirements.get(gateKey);
  }

  /** Stores a new requirement on the run and appends `requirement.raised`. Throws when the lease was lost. */
  async raise(requirement: RequirementRecord): Promise<void> {
    if (!(await this.repos.runs.addRequirement(this.run.id, this.owner, requirement, this.clock.now()))) {
      throw new Error('lease lost while raising a requirement');
    }
    this.requirements.set(requirement.gateKey, requirement);
    await this.event('requirement.raised', requirementRaisedPayload(requirement));
  }

  /** Marks a node run as held at a gate before executing. */
  async awaiting(node: LedgerNode, iterationPath: string): Promise<void> {
    const nodeRun = await this.repos.nodeRuns.markAwaiting(
      { runId: this.run.id, workflowDefinitionId: this.run.workflowDefinitionId, nodeId: node.id, nodeName: node.name, nodeType: node.nodeType, iterationPath },
      this.clock.now(),
    );
    this.memo.set(nodeRunKey(node.id, iterationPath), nodeRun);
  }

  /** The node run at this key when it is settled (completed or skipped), else undefined. */
  settled(nodeId: string, iterationPath: string): NodeRunRecord | undefined {
    const nodeRun = this.memo.get(nodeRunKey(nodeId, iterationPath));
    return nodeRun && SETTLED_NODE_RUN_STATUSES.includes(nodeRun.status) ? nodeRun : undefined;
  }

  /** The node run at this key in any status, else undefined. */
  existing(nodeId: string, iterationPath: string): NodeRunRecord | undefined {
    return this.memo.get(nodeRunKey(nodeId, iterationPath));
  }

  /** Starts the next attempt of a node run and appends `node.started`. `inputBytes`: the snapshot's JSON size, when measured. */
  async start(node: LedgerNode, iterationPath: string, inputSnapshot: unknown, inputBytes?: number): Promise<NodeRunRecord> {
    const nodeRun = await this.repos.nodeRuns.startAttempt(this.#attemptStart(node, iterationPath, inputSnapshot, inputBytes), this.clock.now());
    this.memo.set(nodeRunKey(node.id, iterationPath), nodeRun);
    await this.#startedEvent(nodeRun);
    return nodeRun;
  }

  /**
   * Records an attempt that started and ended already (its executor answered within the turn) in
   * one write, with the events {@link start} and {@link end} append: `node.started`, then
   * `node.<status>`.
   */
  async startEnded(node: LedgerNode, iterationPath: string, inputSnapshot: unknown, inputBytes: number | undefined, end: NodeRunEnd): Promise<NodeRunRecord> {
    const nodeRun = await this.repos.nodeRuns.recordEndedAttempt(this.#attemptStart(node, iterationPath, inputSnapshot, inputBytes), end, this.clock.now());
    this.memo.set(nodeRunKey(node.id, iterationPath), nodeRun);
    await this.#startedEvent(nodeRun);
    await this.#ended(nodeRun, end);
    return nodeRun;
  }

  /** The number the next attempt of this node run gets (the memo holds every attempt this run recorded). */
  nextAttempt(nodeId: string, iterationPath: string): number {
    return (this.existing(nodeId, iterationPath)?.attempt ?? 0) + 1;
  }

  #attemptStart(node: LedgerNode, iterationPath: string, inputSnapshot: unknown, inputBytes: number | undefined): NodeRunStart {
    return {
      runId: this.run.id,
      workflowDefinitionId: this.run.workflowDefinitionId,
      nodeId: node.id,
      nodeName: node.name,
      nodeType: node.nodeType,
      iterationPath,
      inputSnapshot,
      inputBytes,
    };
  }

  #startedEvent(nodeRun: NodeRunRecord): Promise<void> {
    return this.event('node.started', { nodeId: nodeRun.nodeId, nodeName: nodeRun.nodeName, iterationPath: nodeRun.iterationPath, attempt: nodeRun.attempt, nodeRunId: nodeRun.id });
  }

  /**
   * Enters a container node: resumes its node run when it already started and is in one of
   * `resumable` (a later traversal of the same run: the attempt stays), else starts a new attempt
   * (also after a gate held it before it started).
   */
  async enter(node: LedgerNode, iterationPath: string, inputSnapshot: unknown, resumable: readonly NodeRunRecord['status'][]): Promise<NodeRunRecord> {
    const existing = this.existing(node.id, iterationPath);
    if (!existing || existing.attempt === 0 || !resumable.includes(existing.status)) return this.start(node, iterationPath, inputSnapshot);
    if (existing.status === 'running') return existing;
    const resumed = (await this.repos.nodeRuns.setStatus(existing.id, 'running', this.clock.now())) ?? existing;
    this.memo.set(nodeRunKey(node.id, iterationPath), resumed);
    return resumed;
  }

  /**
   * Ends a node run (or its current attempt) and appends `node.<status>`. The first end in an
   * execution also records progress on the run (poison-run protection, see the engine).
   */
  async end(nodeRun: NodeRunRecord, end: NodeRunEnd): Promise<void> {
    const updated = await this.repos.nodeRuns.end(nodeRun.id, end, this.clock.now(), nodeRun.inputSnapshot);
    if (updated) this.memo.set(nodeRunKey(updated.nodeId, updated.iterationPath), updated);
    await this.#ended(nodeRun, end);
  }

  /** After an attempt's end was stored: progress on the run (first end of this execution), then `node.<status>`. */
  async #ended(nodeRun: NodeRunRecord, end: NodeRunEnd): Promise<void> {
    if (!this.progressRecorded) {
      this.progressRecorded = true;
      await this.repos.runs.markProgress(this.run.id, this.owner);
    }
    await this.event(`node.${end.status}`, {
      nodeId: nodeRun.nodeId,
      nodeName: nodeRun.nodeName,
      iterationPath: nodeRun.iterationPath,
      attempt: nodeRun.attempt,
      nodeRunId: nodeRun.id,
      ...(end.error ? { error: end.error } : {}),
      // Steps: the executor that served the attempt (or, for a pool that failed, the last member tried).
      ...executorKeyOf(end),
    });
  }

  /**
   * Appends a run event with the run's next sequence number. Writes of one ledger are serialized,
   * so concurrent branches never race each other for a number; other writers (a decision, the
   * sweeper) are arbitrated by the unique index.
   */
  event<T extends RunEventType>(type: T, payload: RunEventPayloads[T]): Promise<void> {
    const write = this.events.then(async () => {
      const seq = await this.repos.events.append(
        { runId: this.run.id, workflowDefinitionId: this.run.workflowDefinitionId, type, payload } as { runId: string; workflowDefinitionId: string } & TypedRunEvent,
        this.clock.now(),
        this.lastSeq === null ? undefined : this.lastSeq + 1,
      );
      this.lastSeq = Math.max(this.lastSeq ?? 0, seq);
    });
    this.events = write.catch(() => undefined);
    return write;
  }

  /** Ends every node run of the run still open as `cancelled` with `reason` (no events: the run's end says it). */
  async closeOpenNodeRuns(reason: string): Promise<void> {
    await this.repos.nodeRuns.cancelUnfinished(this.run.id, reason, this.clock.now());
  }

  /**
   * Waits out a retry backoff (`wait`, `delayMs` long) with the wait recorded on the run
   * (`retry_waits`: its runState shows `waiting-timer` with the wake-up time meanwhile).
   */
  async waitForRetry(nodeId: string, iterationPath: string, delayMs: number, wait: () => Promise<void>): Promise<void> {
    const entry = { nodeId, iterationPath, wakeAt: new Date(this.clock.now().getTime() + delayMs) };
    await this.repos.runs.addRetryWait(this.run.id, this.owner, entry);
    try {
      await wait();
    } finally {
      await this.repos.runs.removeRetryWait(this.run.id, this.owner, entry);
    }
  }

  /**
   * Throws when this owner can no longer be sure it holds the run's lease (renewals failed for
   * longer than the lease lasts): checked before every executor call, so that an owner cut off
   * from the store never runs a step that another instance may run too.
   */
  assertOwned(): void {
    if (this.clock.now().getTime() >= this.lease.validUntil) throw new LeaseExpired(`lease of run ${this.run.id} expired`);
  }
}

/** `{ executorKey }` of an attempt's end (the key that served, else the last pool member tried), or `{}` for a node without an executor. */
function executorKeyOf(end: NodeRunEnd): { executorKey?: string } {
  const key = end.executorKey ?? end.poolAttempts?.at(-1)?.executorKey ?? null;
  return key === null ? {} : { executorKey: key };
}
