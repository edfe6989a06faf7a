/**
 * What the orchestrator's run_workflow reports about a run: its step results, its step counts,
 * and the overall `status`, with the mapping of "partial" (issue #8).
 *
 * Steps are the run's node runs of type `step` (containers — parallel, loop, condition, router —
 * are not steps). A node run is one step execution: one per step node and loop iteration, its
 * retries included (attempts update the same node run).
 *
 * - `step_results`: one per step node run, by start time: `step_name` (the node name; inside a
 *   loop followed by the iteration path, `name [2]`), `status` (the node run's: completed, failed,
 *   skipped, cancelled, running, awaiting_approval, pending), `output` (null until it produced
 *   one), `duration` (seconds from its first attempt's start to its end, or to now while it runs;
 *   0 before it started).
 * - `steps_completed`: step results with status `completed` (what the API's cancel reports as
 *   `stepsCompleted`).
 * - `steps_total`: step results plus the step nodes of the run's definition not reached yet. In a
 *   completed run, nodes never reached sat on branches not taken and do not count, so a success
 *   shows N of N unless a step was skipped.
 *
 * `status` — the "partial" rule:
 * - `success`: the run ended `completed`.
 * - `failed`: the run ended `failed` by a failure of its own (a step failed for good, an
 *   expression or executor error: any failure but the stop at its `timeout`), or the run did not
 *   complete and no step completed.
 * - `partial`: the run did not complete and did not fail by itself, and at least one step
 *   completed: it was cancelled, it was stopped at its `timeout` (the API ends it `failed` with
 *   `cancelledBy: { username: "timeout", via: "system" }`), or the wait ended with the run unfinished (running, paused, or
 *   waiting at a human gate).
 */
import * as z from 'zod/v4';
import type { ApiClient } from '../../api-client.ts';
import { TERMINAL_STATUSES, runPath, type RestRun } from '../shared.ts';
import type { RestNode } from '../semantic/workflows/definition.ts';

export const STATUSES = ['success', 'failed', 'partial'] as const;
export type OrchestratorStatus = (typeof STATUSES)[number];

export const StepResultSchema = z.object({
  step_name: z.string().describe('Node name; inside a loop followed by the iteration path, e.g. "fetch [2]"'),
  status: z.string().describe('completed | failed | skipped | cancelled | running | awaiting_approval | pending'),
  output: z.unknown().describe('The step output (null until it produced one)'),
  duration: z.number().describe('Seconds from the first attempt to the end (to now while running; 0 before it started)'),
});
export type StepResult = z.infer<typeof StepResultSchema>;

/** A node run as run details and the node-run list show it. */
interface RestNodeRun {
  id: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  status: string;
  iterationPath: string;
  startedAt: string | null;
  finishedAt: string | null;
  outputSnapshot?: unknown;
  omittedSnapshots?: { outputSnapshot?: number };
}

/** Pages of the node-run list, 100 a page. */
const NODE_RUN_PAGE = 100;

/** The step counts and results of `run` (see the module comment). `nowMs` measures what has not ended. */
export async function stepsOf(api: ApiClient, run: RestRun, nowMs: number): Promise<{ steps_completed: number; steps_total: number; step_results: StepResult[] }> {
  const stepRuns = (await nodeRunsOf(api, run)).filter((nodeRun) => nodeRun.nodeType === 'step');
  const step_results: StepResult[] = [];
  for (const nodeRun of stepRuns) {
    step_results.push({
      step_name: nodeRun.iterationPath ? `${nodeRun.nodeName} [${nodeRun.iterationPath}]` : nodeRun.nodeName,
      status: nodeRun.status,
      output: await outputOf(api, run, nodeRun),
      duration: nodeRun.startedAt ? secondsBetween(nodeRun.startedAt, nodeRun.finishedAt, nowMs) : 0,
    });
  }
  const reached = new Set(stepRuns.map((nodeRun) => nodeRun.nodeId));
  const snapshot = run['definitionSnapshot'] as { nodes: RestNode[] } | undefined;
  const notReached = run.status === 'completed' ? 0 : stepNodeIds(snapshot?.nodes ?? []).filter((nodeId) => !reached.has(nodeId)).length;
  return {
    steps_completed: step_results.filter((step) => step.status === 'completed').length,
    steps_total: step_results.length + notReached,
    step_results,
  };
}

/** True when `cancelledBy` is the timeout: the actor `{ username: "timeout", via: "system" }` (a name before #18). */
function stoppedByTimeout(cancelledBy: unknown): boolean {
  if (cancelledBy === 'timeout') return true;
  const actor = cancelledBy as { username?: unknown; via?: unknown } | null | undefined;
  return actor?.via === 'system' && actor.username === 'timeout';
}

/** The "partial" rule (module comment). */
export function outcomeOf(run: Pick<RestRun, 'status'> & { cancelledBy?: unknown }, stepsCompleted: number): OrchestratorStatus {
  if (run.status === 'completed') return 'success';
  const failedByItself = run.status === 'failed' && !stoppedByTimeout(run.cancelledBy);
  return failedByItself || stepsCompleted === 0 ? 'failed' : 'partial';
}

/** `error_message`: null on success; why the run failed or stopped; or, unfinished, where it stands and what to do. */
export function errorMessageOf(run: RestRun, status: OrchestratorStatus, waitedSeconds: number): string | null {
  if (status === 'success') return null;
  if (TERMINAL_STATUSES.includes(run.status)) return run.errorSummary ?? `The run ended ${run.status}`;
  const gates = (run.pendingRequirements ?? []).map((gate) => (gate as { stepName?: string }).stepName ?? gate.stepId);
  const where = gates.length > 0 ? `waiting for a human decision at ${gates.map((name) => `'${name}'`).join(', ')}` : `in state ${run.runState.state}`;
  return (
    `The run had not ended after ${waitedSeconds} s of waiting: it is ${run.status}, ${where}. It goes on in Switchyard; ` +
    `stop it with cancel_workflow (workflow_id ${run.id}).`
  );
}

/** Seconds from `from` to `to` (or to `nowMs`), to the millisecond. */
export function secondsBetween(from: string, to: string | null, nowMs: number): number {
  return Math.max(0, (to ? Date.parse(to) : nowMs) - Date.parse(from)) / 1000;
}

/** Every node run of `run`: those the detail carries, or, when it has more, the whole paginated list. */
async function nodeRunsOf(api: ApiClient, run: RestRun): Promise<RestNodeRun[]> {
  const inline = run.nodeRuns as RestNodeRun[];
  if (run.nodeRunCount <= inline.length) return inline;
  const all: RestNodeRun[] = [];
  for (let page = 1; ; page++) {
    const answer = await api.get<{ nodeRuns: RestNodeRun[]; pagination: { totalPages: number } }>(runPath(run.workflowDefinitionId, run.id, '/nodes'), { page, perPage: NODE_RUN_PAGE });
    all.push(...answer.nodeRuns);
    if (page >= answer.pagination.totalPages) return all;
  }
}

/** A node run's output; one too large for list responses is read from its own detail. */
async function outputOf(api: ApiClient, run: RestRun, nodeRun: RestNodeRun): Promise<unknown> {
  if (nodeRun.omittedSnapshots?.outputSnapshot === undefined) return nodeRun.outputSnapshot ?? null;
  const detail = await api.get<RestNodeRun>(runPath(run.workflowDefinitionId, run.id, `/nodes/${nodeRun.id}`));
  return detail.outputSnapshot ?? null;
}

/** Ids of the step nodes of a node tree, each once. */
export function stepNodeIds(nodes: readonly RestNode[]): string[] {
  return nodes.flatMap((node) => [
    ...(node.nodeType === 'step' ? [node.id] : []),
    ...stepNodeIds([...(node.children ?? []), ...(node.trueSteps ?? []), ...(node.falseSteps ?? []), ...(node.choices ?? []).flatMap((choice) => choice.steps)]),
  ]);
}
