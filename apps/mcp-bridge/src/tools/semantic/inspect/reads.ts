/**
 * What the inspect tools read besides the run detail, always bounded: every node run of a run
 * (the detail's first 100, else the node-run list page by page), full snapshots of node runs whose
 * list view left one out (within a byte budget), a run's events page by page, and the nodes of the
 * run's definition snapshot.
 */
import * as z from 'zod/v4';
import type { ApiClient, Query } from '../../../api-client.ts';
import { ToolError } from '../../../envelope.ts';
import { runPath, type RestRun } from '../../shared.ts';
import { placeOf } from '../control/approvals.ts';

/** Node-run list pages read at most (100 node runs each). */
export const MAX_NODE_RUN_PAGES = 50;
/** Event pages read at most (1,000 events each). */
export const MAX_EVENT_PAGES = 20;
/** Snapshot bytes one tool answer carries at most (the rest is named as left out). */
export const SNAPSHOT_BUDGET_BYTES = 2 * 1024 * 1024;

/** A node run's snapshot fields. */
export type SnapshotField = 'inputSnapshot' | 'outputSnapshot' | 'originalOutputSnapshot';

/** A node run as the API shows it (list views leave large snapshots out: null, size in `omittedSnapshots`). */
export interface RestNodeRun {
  id: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  iterationPath: string;
  status: string;
  attempt: number;
  inputSnapshot: unknown;
  outputSnapshot: unknown;
  originalOutputSnapshot?: unknown;
  omittedSnapshots?: Partial<Record<SnapshotField, number>>;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A HITL gate on the run record (`requirements` of the run detail). */
export interface RestRequirement {
  stepId: string;
  nodeId: string;
  iterationPath: string;
  round: number;
  requestedAt: string;
  resolution: string | null;
  decidedBy: string | null;
  decidedAt: string | null;
  requiresConfirmation?: boolean;
  requiresUserInput?: boolean;
  requiresOutputReview?: boolean;
  requiresRouteSelection?: boolean;
  confirmationMessage?: string | null;
  userInputMessage?: string | null;
  outputReviewMessage?: string | null;
  userInputSchema?: Array<{ name: string; fieldType?: string; required: boolean; value?: unknown; allowedValues?: unknown[] | null }> | null;
  availableChoices?: string[] | null;
  stepOutput?: unknown;
  timeoutAt?: string | null;
  onTimeout?: string;
  [key: string]: unknown;
}

/** A run event as the API shows it. */
export interface RestEvent {
  seq: number;
  type: string;
  timestamp: string;
  nodeId?: string;
  payload: Record<string, unknown>;
}

/** A node of the run's definition snapshot. */
export interface DefinitionNode {
  id: string;
  name: string;
  nodeType: string;
  executorKey: string | null;
  stepConfig: { maxRetries?: number; backoffBaseSeconds?: number; backoffMaxSeconds?: number; onError?: string } | null;
  humanReview: Record<string, unknown> | null;
  children?: DefinitionNode[];
  trueSteps?: DefinitionNode[];
  falseSteps?: DefinitionNode[];
  choices?: Array<{ name: string; steps: DefinitionNode[] }>;
}

/** The run's gates (`requirements` of the detail), in the order raised. */
export function requirementsOf(run: RestRun): RestRequirement[] {
  return (run.requirements ?? []) as RestRequirement[];
}

/** Every node of the run's definition snapshot, depth first. */
export function definitionNodes(run: RestRun): DefinitionNode[] {
  const all: DefinitionNode[] = [];
  const visit = (nodes: readonly DefinitionNode[] | undefined) => {
    for (const node of nodes ?? []) {
      all.push(node);
      for (const list of [node.children, node.trueSteps, node.falseSteps, ...(node.choices ?? []).map((choice) => choice.steps)]) visit(list);
    }
  };
  visit((run['definitionSnapshot'] as { nodes?: DefinitionNode[] } | undefined)?.nodes);
  return all;
}

/** Attempts a step may make (1 + its `maxRetries`), or null for nodes without a retry policy. */
export function maxAttemptsOf(node: DefinitionNode | undefined): number | null {
  if (node?.nodeType !== 'step') return null;
  return 1 + (node.stepConfig?.maxRetries ?? 0);
}

/** Every node run of `run`: the detail's own when it lists them all, else the node-run list page by page (bounded). */
export async function allNodeRuns(api: ApiClient, run: RestRun): Promise<{ nodeRuns: RestNodeRun[]; complete: boolean }> {
  const inline = run.nodeRuns as unknown as RestNodeRun[];
  if (inline.length >= run.nodeRunCount) return { nodeRuns: inline, complete: true };
  const nodeRuns: RestNodeRun[] = [];
  for (let page = 1; page <= MAX_NODE_RUN_PAGES; page++) {
    const answer = await api.get<{ nodeRuns: RestNodeRun[]; pagination: { totalPages: number } }>(runPath(run.workflowDefinitionId, run.id, '/nodes'), { page, perPage: 100 });
    nodeRuns.push(...answer.nodeRuns);
    if (page >= answer.pagination.totalPages) return { nodeRuns, complete: true };
  }
  return { nodeRuns, complete: false };
}

/** Events of `run` matching `filter`, in seq order, page by page (bounded). */
export async function allEvents(api: ApiClient, run: RestRun, filter: { types?: readonly string[]; nodeId?: string }): Promise<{ events: RestEvent[]; complete: boolean }> {
  const events: RestEvent[] = [];
  let afterSeq = 0;
  for (let page = 1; page <= MAX_EVENT_PAGES; page++) {
    const answer = await eventPage(api, run, { afterSeq, limit: 1000, types: filter.types?.join(','), nodeId: filter.nodeId });
    events.push(...answer);
    if (answer.length < 1000) return { events, complete: true };
    afterSeq = answer.at(-1)!.seq;
  }
  return { events, complete: false };
}

/** One page of `GET .../events`. */
export async function eventPage(api: ApiClient, run: RestRun, query: Query): Promise<RestEvent[]> {
  const answer = await api.get<{ events: RestEvent[] }>(runPath(run.workflowDefinitionId, run.id, '/events'), query);
  return answer.events;
}

/** Bytes of JSON of a value. */
export function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

/** A byte budget shared by the snapshots of one answer. */
export class ByteBudget {
  constructor(private left: number) {}
  /** Takes `bytes` if it can. */
  take(bytes: number): boolean {
    if (bytes > this.left) return false;
    this.left -= bytes;
    return true;
  }
}

/** Sizes of snapshots an answer leaves out, by field. */
export const LeftOutSchema = z
  .record(z.string(), z.number().int())
  .describe('Snapshots left out of this answer (too large for its byte budget), with their size in bytes of JSON; GET .../nodes/{nodeRunId} of the REST API has them');

/**
 * The snapshots `fields` of `nodeRun` in full as far as `budget` affords: those the list view
 * showed, and those it left out fetched with `GET .../nodes/{id}`. Returns the values (undefined
 * for a field not kept), the size of every field (bytes of JSON) and the sizes of those left out.
 */
export async function snapshotsOf(
  api: ApiClient,
  run: RestRun,
  nodeRun: RestNodeRun,
  fields: readonly SnapshotField[],
  budget: ByteBudget,
): Promise<{ values: Partial<Record<SnapshotField, unknown>>; sizes: Partial<Record<SnapshotField, number>>; leftOut: Partial<Record<SnapshotField, number>> }> {
  const values: Partial<Record<SnapshotField, unknown>> = {};
  const sizes: Partial<Record<SnapshotField, number>> = {};
  const leftOut: Partial<Record<SnapshotField, number>> = {};
  const toFetch: SnapshotField[] = [];
  for (const field of fields) {
    const omitted = nodeRun.omittedSnapshots?.[field];
    const bytes = omitted ?? jsonBytes(nodeRun[field] ?? null);
    sizes[field] = bytes;
    if (!budget.take(bytes)) leftOut[field] = bytes;
    else if (omitted === undefined) values[field] = nodeRun[field];
    else toFetch.push(field);
  }
  if (toFetch.length > 0) {
    const full = await api.get<RestNodeRun>(runPath(run.workflowDefinitionId, run.id, `/nodes/${nodeRun.id}`));
    for (const field of toFetch) values[field] = full[field] ?? null;
  }
  return { values, sizes, leftOut };
}

/** Epoch ms of an ISO-8601 time, or null. */
export function epochMs(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The node `nodeId` of the run's definition (null when only node runs know it), or NODE_NOT_FOUND
 * naming the run's nodes when neither the definition nor a node run has it.
 */
export function requireNode(run: RestRun, nodeRuns: readonly RestNodeRun[], nodeId: string): DefinitionNode | null {
  const nodes = definitionNodes(run);
  const node = nodes.find((candidate) => candidate.id === nodeId);
  if (node || nodeRuns.some((nodeRun) => nodeRun.nodeId === nodeId)) return node ?? null;
  throw new ToolError('NODE_NOT_FOUND', `Run ${run.id} has no node '${nodeId}'`, {
    fields: ['nodeId'],
    nodes: nodes.slice(0, 100).map((candidate) => ({ nodeId: candidate.id, name: candidate.name, nodeType: candidate.nodeType })),
  });
}

/** The innermost loop iteration (1-based; 0 outside loops) of an iteration path, as resolve_approval and list_pending_approvals count it. */
export function innermost(iterationPath: string): number {
  return placeOf('', '', iterationPath).iteration;
}
