import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { getRun, id } from '../../shared.ts';
import { IterationArg } from '../control/approvals.ts';
import {
  ByteBudget,
  LeftOutSchema,
  SNAPSHOT_BUDGET_BYTES,
  allEvents,
  allNodeRuns,
  epochMs,
  innermost,
  maxAttemptsOf,
  requireNode,
  requirementsOf,
  snapshotsOf,
  type RestEvent,
  type RestNodeRun,
  type SnapshotField,
} from './reads.ts';

/** The node events attempts are rebuilt from. */
const NODE_EVENT_TYPES = ['node.started', 'node.completed', 'node.failed', 'node.retrying', 'node.skipped', 'node.cancelled', 'node.awaiting_approval'];
const ENDED_NODE_RUN_STATUSES = ['completed', 'failed', 'skipped', 'cancelled'];

const AttemptSchema = z.object({
  attempt: z.number().int().describe('1-based'),
  status: z.string().describe('running | completed | failed | skipped | cancelled | awaiting_approval (output held for review)'),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  error: z.string().nullable(),
  retried: z.boolean().describe('A retry followed this failed attempt'),
  delayMs: z.number().int().nullable().describe('Backoff before the retry'),
  retryAt: z.string().nullable().describe('When the retry was due'),
});
type Attempt = z.infer<typeof AttemptSchema>;

const NodeRunSchema = z.object({
  nodeRunId: z.string(),
  iterationPath: z.string().describe("Loop iterations around the node, e.g. '2' or '1/3'; '' outside loops"),
  iteration: z.number().int().describe('Innermost loop iteration (1-based); 0 outside loops'),
  status: z.string().describe('pending | running | awaiting_approval | completed | failed | skipped | cancelled'),
  attemptCount: z.number().int().describe('Attempts made (0: held at a gate before it started)'),
  input: z.unknown().describe('The arguments it was called with (for conditions and routers: the decision); null when left out'),
  output: z.unknown().describe('Its output; null when left out'),
  originalOutput: z.unknown().optional().describe('The output before a reviewer edited it'),
  error: z.string().nullable(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  attempts: z.array(AttemptSchema).describe('Every attempt, from the run events'),
  leftOut: LeftOutSchema.optional(),
});

export const getNodeDetail = defineTool({
  name: 'get_node_detail',
  title: 'Get node detail',
  description:
    'Everything about one node of a run: its definition (type, executor, retry policy, human review), every node run of it (one per ' +
    'loop iteration path; `iteration` keeps one: 2 = the innermost loop\'s 2nd, or an exact path such as "1/3") with input, output, error, status, timings and the attempt history ' +
    '(each attempt with its error, retry backoff and timing, rebuilt from the run events), and its HITL gate decisions (who decided ' +
    'what, when). Call it to see why a node failed or what it produced. Errors: NODE_NOT_FOUND (details.nodes lists the run\'s nodes).',
  kind: 'read',
  input: z.object({
    runId: id('Run id'),
    nodeId: z.string().min(1).describe('Node id (as in the definition)'),
    iteration: IterationArg.optional().describe("Only this iteration: a number (1-based, the innermost loop; 0 = outside loops) or an exact iteration path such as '1/3' (default: all)"),
  }),
  output: z.object({
    runId: z.string(),
    workflowId: z.string(),
    nodeId: z.string(),
    node: z
      .object({
        name: z.string(),
        nodeType: z.string(),
        executorKey: z.string().nullable(),
        maxAttempts: z.number().int().nullable().describe('1 + stepConfig.maxRetries for steps'),
        stepConfig: z.record(z.string(), z.unknown()).nullable(),
        humanReview: z.record(z.string(), z.unknown()).nullable(),
      })
      .nullable()
      .describe("The node in the run's definition snapshot"),
    iterations: z.array(z.string()).describe('Every iteration path the node ran at'),
    nodeRuns: z.array(NodeRunSchema),
    decisions: z.array(z.record(z.string(), z.unknown())).describe('Its HITL gates (of the iteration, if given), decided or not, in the order raised'),
    attemptsSummary: z.object({ total: z.number().int(), failed: z.number().int(), succeeded: z.number().int(), retried: z.number().int(), running: z.number().int() }),
    notes: z.array(z.string()).describe('What this answer left out, and why'),
  }),
  async run(args, { api }) {
    const run = await getRun(api, args.runId);
    const { nodeRuns, complete } = await allNodeRuns(api, run);
    const node = requireNode(run, nodeRuns, args.nodeId);
    const { iteration } = args;
    const atIteration = (iterationPath: string) => iteration === undefined || (typeof iteration === 'number' ? innermost(iterationPath) === iteration : iterationPath === iteration);
    const ofNode = nodeRuns.filter((nodeRun) => nodeRun.nodeId === args.nodeId);
    const selected = ofNode.filter((nodeRun) => atIteration(nodeRun.iterationPath));
    const events = await allEvents(api, run, { nodeId: args.nodeId, types: NODE_EVENT_TYPES });
    const attempts = attemptsOf(events.events);
    const budget = new ByteBudget(SNAPSHOT_BUDGET_BYTES);
    const notes: string[] = [];
    const shown = [];
    for (const nodeRun of selected) {
      const fields: SnapshotField[] = ['inputSnapshot', 'outputSnapshot', ...(nodeRun.originalOutputSnapshot !== undefined ? (['originalOutputSnapshot'] as const) : [])];
      const { values, leftOut } = await snapshotsOf(api, run, nodeRun, fields, budget);
      shown.push({
        nodeRunId: nodeRun.id,
        iterationPath: nodeRun.iterationPath,
        iteration: innermost(nodeRun.iterationPath),
        status: nodeRun.status,
        attemptCount: nodeRun.attempt,
        input: values.inputSnapshot ?? null,
        output: values.outputSnapshot ?? null,
        ...(fields.includes('originalOutputSnapshot') ? { originalOutput: values.originalOutputSnapshot ?? null } : {}),
        error: nodeRun.error,
        startedAt: nodeRun.startedAt,
        finishedAt: nodeRun.finishedAt,
        durationMs: durationMs(nodeRun.startedAt, nodeRun.finishedAt),
        attempts: closeAttempts(attempts.get(nodeRun.iterationPath) ?? [], nodeRun),
        ...(Object.keys(leftOut).length > 0 ? { leftOut } : {}),
      });
    }
    if (shown.some((nodeRun) => nodeRun.leftOut)) notes.push(`Snapshots over the ${SNAPSHOT_BUDGET_BYTES} bytes of this answer were left out (leftOut): ask for one iteration.`);
    if (iteration !== undefined && selected.length === 0) notes.push(`The node has no node run at iteration '${iteration}' (see iterations).`);
    if (!complete) notes.push(`Only the first ${nodeRuns.length} node runs of ${run.nodeRunCount} were read.`);
    if (!events.complete) notes.push(`Only the first ${events.events.length} events of the node were read: later attempts are missing.`);
    const all = shown.flatMap((nodeRun) => nodeRun.attempts);
    return {
      runId: run.id,
      workflowId: run.workflowDefinitionId,
      nodeId: args.nodeId,
      node: node && {
        name: node.name,
        nodeType: node.nodeType,
        executorKey: node.executorKey ?? null,
        maxAttempts: maxAttemptsOf(node),
        stepConfig: node.stepConfig ?? null,
        humanReview: node.humanReview ?? null,
      },
      iterations: [...new Set(ofNode.map((nodeRun) => nodeRun.iterationPath))],
      nodeRuns: shown,
      decisions: requirementsOf(run).filter((gate) => gate.nodeId === args.nodeId && atIteration(gate.iterationPath)),
      attemptsSummary: {
        total: all.length,
        failed: all.filter((attempt) => attempt.status === 'failed').length,
        succeeded: all.filter((attempt) => attempt.status === 'completed').length,
        retried: all.filter((attempt) => attempt.retried).length,
        running: all.filter((attempt) => attempt.status === 'running').length,
      },
      notes,
    };
  },
});

/** The attempts the node events tell, by iteration path, in order. */
function attemptsOf(events: readonly RestEvent[]): Map<string, Attempt[]> {
  const byPath = new Map<string, Attempt[]>();
  const byKey = new Map<string, Attempt>();
  for (const event of events) {
    const iterationPath = typeof event.payload['iterationPath'] === 'string' ? event.payload['iterationPath'] : '';
    const number = typeof event.payload['attempt'] === 'number' ? event.payload['attempt'] : 0;
    const key = `${iterationPath}#${number}`;
    let attempt = byKey.get(key);
    if (!attempt || event.type === 'node.started') {
      attempt = { attempt: number, status: 'running', startedAt: null, endedAt: null, durationMs: null, error: null, retried: false, delayMs: null, retryAt: null };
      byKey.set(key, attempt);
      byPath.set(iterationPath, [...(byPath.get(iterationPath) ?? []), attempt]);
    }
    const error = typeof event.payload['error'] === 'string' ? event.payload['error'] : null;
    if (event.type === 'node.started') {
      attempt.startedAt = event.timestamp;
    } else if (event.type === 'node.retrying') {
      const delayMs = typeof event.payload['delayMs'] === 'number' ? event.payload['delayMs'] : null;
      attempt.retried = true;
      attempt.delayMs = delayMs;
      attempt.retryAt = delayMs === null ? null : new Date(Date.parse(event.timestamp) + delayMs).toISOString();
      attempt.error ??= error;
    } else {
      attempt.status = event.type.slice('node.'.length);
      attempt.endedAt = event.timestamp;
      attempt.error = error ?? attempt.error;
      attempt.durationMs = durationMs(attempt.startedAt, attempt.endedAt);
    }
  }
  return byPath;
}

/** A node run closed without an event (the run ended around it) still shows its last attempt as ended. */
function closeAttempts(attempts: Attempt[], nodeRun: RestNodeRun): Attempt[] {
  const last = attempts.at(-1);
  if (last && last.status === 'running' && ENDED_NODE_RUN_STATUSES.includes(nodeRun.status)) {
    last.status = nodeRun.status;
    last.endedAt = nodeRun.finishedAt;
    last.error ??= nodeRun.error;
    last.durationMs = durationMs(last.startedAt, last.endedAt);
  }
  return attempts;
}

function durationMs(startedAt: string | null, endedAt: string | null): number | null {
  const start = epochMs(startedAt);
  const end = epochMs(endedAt);
  return start === null || end === null ? null : Math.max(0, end - start);
}
