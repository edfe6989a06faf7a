/**
 * The run's history as the interpreter sees it (DESIGN.md "memoized re-traversal"): which node
 * runs are already settled (their outputs are reused instead of executing again), and the writes
 * that record new node runs and run events.
 */
import type { NodeRunRecord, NodeType, RunRecord } from '@switchyard/domain';
import { SETTLED_NODE_RUN_STATUSES } from '@switchyard/domain';
import type { NodeRunEnd, Repositories } from '@switchyard/store';
import type { Clock } from './clock.ts';

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

  constructor(
    private readonly repos: Repositories,
    readonly run: RunRecord,
    private readonly clock: Clock,
    history: readonly NodeRunRecord[],
  ) {
    for (const nodeRun of history) this.memo.set(nodeRunKey(nodeRun.nodeId, nodeRun.iterationPath), nodeRun);
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

  /** Starts the next attempt of a node run and appends `node.started`. */
  async start(node: LedgerNode, iterationPath: string, inputSnapshot: unknown): Promise<NodeRunRecord> {
    const nodeRun = await this.repos.nodeRuns.startAttempt(
      {
        runId: this.run.id,
        workflowDefinitionId: this.run.workflowDefinitionId,
        nodeId: node.id,
        nodeName: node.name,
        nodeType: node.nodeType,
        iterationPath,
        inputSnapshot,
      },
      this.clock.now(),
    );
    this.memo.set(nodeRunKey(node.id, iterationPath), nodeRun);
    await this.event('node.started', { nodeId: node.id, nodeName: node.name, iterationPath, attempt: nodeRun.attempt, nodeRunId: nodeRun.id });
    return nodeRun;
  }

  /** Ends a node run (or its current attempt) and appends `node.<status>`. */
  async end(nodeRun: NodeRunRecord, end: NodeRunEnd): Promise<void> {
    const updated = await this.repos.nodeRuns.end(nodeRun.id, end, this.clock.now());
    if (updated) this.memo.set(nodeRunKey(updated.nodeId, updated.iterationPath), updated);
    await this.event(`node.${end.status}`, {
      nodeId: nodeRun.nodeId,
      nodeName: nodeRun.nodeName,
      iterationPath: nodeRun.iterationPath,
      attempt: nodeRun.attempt,
      nodeRunId: nodeRun.id,
      ...(end.error ? { error: end.error } : {}),
    });
  }

  /** Appends a run event with the run's next sequence number. */
  async event(type: string, payload: Record<string, unknown>): Promise<void> {
    this.lastSeq = await this.repos.events.append(
      { runId: this.run.id, workflowDefinitionId: this.run.workflowDefinitionId, type, payload },
      this.clock.now(),
      this.lastSeq === null ? undefined : this.lastSeq + 1,
    );
  }
}
