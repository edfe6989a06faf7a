import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { TERMINAL_STATUSES, getRun, id, toRunSummary, type RestRun } from '../../shared.ts';
import { allEvents, allNodeRuns, definitionNodes, epochMs, innermost, maxAttemptsOf, requirementsOf, type DefinitionNode, type RestEvent, type RestNodeRun, type RestRequirement } from './reads.ts';

/** What holds a run up. */
export const BLOCKER_KINDS = ['approval', 'timer', 'paused', 'pending-directive', 'stale', 'orphaned', 'failed', 'queued'] as const;
type BlockerKind = (typeof BLOCKER_KINDS)[number];

const CONTAINER_NODE_TYPES = ['parallel', 'loop', 'condition', 'router'];
/** Most failed-node blockers one diagnosis lists. */
const MAX_FAILED_BLOCKERS = 20;

const ToolCallSchema = z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) });
type ToolCall = z.infer<typeof ToolCallSchema>;

const BlockerSchema = z.object({
  kind: z.enum(BLOCKER_KINDS),
  nodeId: z.string().nullable().describe('The node held up; null for the run as a whole'),
  iterationPath: z.string().nullable().describe("The node's loop iterations, e.g. '2' or '1/3' ('' outside loops); null for the run as a whole"),
  iteration: z.number().int().nullable().describe('Innermost loop iteration (1-based; 0 outside loops); null for the run as a whole'),
  stepId: z.string().optional().describe('approval: the gate to decide'),
  reason: z.string(),
  waitingSince: z.number().int().nullable().describe('Since when, epoch ms'),
  unblocker: z.string().describe('The tool call that unblocks it: `tool {json arguments}`'),
  call: ToolCallSchema.describe('The same call, structured'),
  context: z.string().describe('What else to know: alternatives, what happens by itself'),
  firesAtMs: z.number().int().nullable().optional().describe('timer: when the retry starts; approval: when the gate times out (epoch ms)'),
  remainingMs: z.number().int().nullable().optional(),
  attempt: z.number().int().nullable().optional(),
  maxAttempts: z.number().int().nullable().optional(),
  error: z.string().nullable().optional(),
});
type Blocker = z.infer<typeof BlockerSchema>;

export const DiagnosisSchema = z.object({
  runId: z.string(),
  workflowId: z.string(),
  status: z.string(),
  state: z.string().describe('runState.state'),
  summary: z.string().describe('One sentence'),
  generatedAtMs: z.number().int(),
  blockers: z.array(BlockerSchema).describe('Everything that holds the run up, each with the call that unblocks it; empty when nothing does'),
  currentNodeId: z.string().nullable().describe('The node the run is at (executing, waiting, or where it failed)'),
});
export type Diagnosis = z.infer<typeof DiagnosisSchema>;

export const explainRun = defineTool({
  name: 'explain_run',
  title: 'Explain a run',
  description:
    'Diagnoses what a run is doing and why it does not progress, from its runState and detail: a one-sentence `summary`, ' +
    '`currentNodeId`, and `blockers` (approval: a human gate, one per undecided gate; timer: a step in retry backoff, with firesAtMs/' +
    'remainingMs; paused; pending-directive; stale/orphaned: the owning instance stopped; failed: the failed node and its error; ' +
    'queued). Each blocker has `reason`, `waitingSince` (epoch ms) and `unblocker`, the exact tool call that unblocks it ' +
    '(e.g. resolve_approval {"runId":…,"stepId":…,"resolution":"confirm"}, resume_run, retry_run), also structured as `call`. ' +
    'Completed, cancelled and plainly running runs have no blockers. Call it when a run seems stuck or failed.',
  kind: 'read',
  input: z.object({ runId: id('Run id') }),
  output: z.object({ diagnosis: DiagnosisSchema }),
  async run(args, { api, now }) {
    const run = await getRun(api, args.runId);
    const failedNodeRuns = run.status === 'failed' && (run.nodeStatusCounts?.['failed'] ?? 1) > 0 ? (await allNodeRuns(api, run)).nodeRuns.filter((nodeRun) => nodeRun.status === 'failed') : [];
    const blocked = run.runState.blocked;
    let retryEvent: RestEvent | null = null;
    if (blocked?.['kind'] === 'timer' && typeof blocked['nodeId'] === 'string') {
      retryEvent = (await allEvents(api, run, { nodeId: blocked['nodeId'], types: ['node.retrying'] })).events.at(-1) ?? null;
    }
    return { diagnosis: diagnose({ run, failedNodeRuns, retryEvent, now: now() }) };
  },
});

/** What {@link diagnose} reads. */
export interface DiagnosisInput {
  /** The run detail. */
  run: RestRun;
  /** Its failed node runs (read when the run failed). */
  failedNodeRuns: readonly RestNodeRun[];
  /** The last `node.retrying` event of the node in retry backoff, if any. */
  retryEvent: RestEvent | null;
  /** Epoch ms. */
  now: number;
}

/** The diagnosis of a run (pure). */
export function diagnose(input: DiagnosisInput): Diagnosis {
  const { run, now } = input;
  const nodes = new Map(definitionNodes(run).map((node) => [node.id, node]));
  const label = (nodeId: string | null) => (nodeId === null ? 'the run' : `node '${nodes.get(nodeId)?.name ?? nodeId}'`);
  const state = run.runState.state;
  const summary = toRunSummary(run);
  const blockers: Blocker[] = [];
  const ended = TERMINAL_STATUSES.includes(run.status);
  if (!ended) blockers.push(...approvalBlockers(run, label, now));
  if (state === 'waiting-timer') blockers.unshift(timerBlocker(run, input.retryEvent, nodes, now));
  if (state === 'paused') blockers.unshift(pausedBlocker(run));
  if (state === 'stale' || state === 'orphaned') blockers.unshift(healthBlocker(run, state));
  if (state === 'pending') blockers.push(runBlocker(run, 'queued', 'The run is queued: no instance has started it yet.', epochMs(run.startedAt), watchCall(run, 30_000), 'It starts by itself when an instance picks it up.'));
  const directive = typeof run['pendingDirective'] === 'string' ? run['pendingDirective'] : null;
  if (directive && !ended) blockers.push(directiveBlocker(run, directive));
  if (run.status === 'failed') blockers.push(...failedBlockers(run, input.failedNodeRuns, nodes, label));

  const active = summary.activeNodeIds[0] ?? null;
  const firstNode = blockers.find((blocker) => blocker.nodeId !== null)?.nodeId ?? null;
  const currentNodeId = ended && run.status !== 'failed' ? null : (state === 'running' ? active : (firstNode ?? active));
  return {
    runId: run.id,
    workflowId: run.workflowDefinitionId,
    status: run.status,
    state,
    summary: summaryOf(run, state, blockers, currentNodeId, label),
    generatedAtMs: now,
    blockers,
    currentNodeId,
  };
}

/** `tool {json}` */
function callText(call: ToolCall): string {
  return `${call.tool} ${JSON.stringify(call.arguments)}`;
}

function watchCall(run: RestRun, timeoutMs: number): ToolCall {
  return { tool: 'watch_run', arguments: { runId: run.id, timeoutMs: Math.min(600_000, Math.max(1_000, Math.ceil(timeoutMs))) } };
}

/** A blocker of the run as a whole. */
function runBlocker(run: RestRun, kind: BlockerKind, reason: string, waitingSince: number | null, call: ToolCall, context: string): Blocker {
  return { kind, nodeId: null, iterationPath: null, iteration: null, reason, waitingSince, unblocker: callText(call), call, context };
}

/** One blocker per undecided gate. */
function approvalBlockers(run: RestRun, label: (nodeId: string) => string, now: number): Blocker[] {
  const paused = run.status === 'paused';
  return requirementsOf(run)
    .filter((gate) => gate.decidedAt === null)
    .map((gate) => {
      const { what, message, resolution, context } = gateAction(gate);
      const call: ToolCall = { tool: 'resolve_approval', arguments: { runId: run.id, stepId: gate.stepId, ...resolution } };
      const firesAtMs = epochMs(gate.timeoutAt);
      const timeout = firesAtMs === null ? '' : ` It times out at ${gate.timeoutAt} (then: ${gate.onTimeout ?? 'cancel'}).`;
      return {
        kind: 'approval' as const,
        nodeId: gate.nodeId,
        ...placeOfNode(gate.iterationPath),
        stepId: gate.stepId,
        reason: `${capitalize(label(gate.nodeId))} waits for a human ${what}${message ? `: "${message}"` : ''}.${timeout}`,
        waitingSince: epochMs(gate.requestedAt),
        unblocker: callText(call),
        call,
        context: context + (paused ? ' The run is paused: it continues only after resume_run as well.' : ' The run continues by itself once it is decided.'),
        firesAtMs,
        remainingMs: firesAtMs === null ? null : Math.max(0, firesAtMs - now),
      };
    });
}

/** What a gate asks for, and the resolve_approval arguments that answer it. */
function gateAction(gate: RestRequirement): { what: string; message: string | null; resolution: Record<string, unknown>; context: string } {
  const reject = `or resolution "reject" with feedback (onReject: ${String(gate['onReject'] ?? 'cancel')})`;
  if (gate.requiresRouteSelection) {
    const choices = gate.availableChoices ?? [];
    const suggested = (gate.stepOutput as { suggestedChoice?: unknown } | null | undefined)?.suggestedChoice;
    if (typeof suggested === 'string') {
      return { what: 'route selection', message: gate.userInputMessage ?? null, resolution: { resolution: 'confirm' }, context: `"confirm" takes the suggested route '${suggested}'; or "route_select" with selectedChoices from [${choices.join(', ')}]; ${reject}.` };
    }
    return {
      what: 'route selection',
      message: gate.userInputMessage ?? null,
      resolution: { resolution: 'route_select', selectedChoices: choices.slice(0, 1) },
      context: `Pick selectedChoices from [${choices.join(', ')}]${gate['allowMultipleSelections'] ? ' (several allowed)' : ''}; ${reject}.`,
    };
  }
  if (gate.requiresUserInput) {
    const fields = gate.userInputSchema ?? [];
    const userInput = Object.fromEntries(fields.map((field) => [field.name, field.value ?? `<${field.fieldType ?? 'value'}>`]));
    const described = fields.map((field) => `${field.name} (${field.fieldType ?? 'value'}${field.required ? ', required' : ''}${field.allowedValues ? `, one of ${JSON.stringify(field.allowedValues)}` : ''})`);
    return { what: 'form input', message: gate.userInputMessage ?? null, resolution: { resolution: 'user_input', userInput }, context: `Fill in the form: ${described.join(', ') || 'no fields'}; ${reject}.` };
  }
  if (gate.requiresOutputReview) {
    return { what: 'review of its output', message: gate.outputReviewMessage ?? null, resolution: { resolution: 'confirm' }, context: `"confirm" accepts the output (stepOutput); or "edit" with editedOutput; ${reject}.` };
  }
  return { what: 'confirmation', message: gate.confirmationMessage ?? null, resolution: { resolution: 'confirm' }, context: `"confirm" lets it proceed; ${reject}.` };
}

function timerBlocker(run: RestRun, retryEvent: RestEvent | null, nodes: Map<string, DefinitionNode>, now: number): Blocker {
  const blocked = run.runState.blocked ?? {};
  const nodeId = String(blocked['nodeId']);
  const node = nodes.get(nodeId);
  const firesAtMs = epochMs(typeof blocked['wakeAt'] === 'string' ? blocked['wakeAt'] : null);
  const remainingMs = firesAtMs === null ? null : Math.max(0, firesAtMs - now);
  const attempt = typeof retryEvent?.payload['attempt'] === 'number' ? retryEvent.payload['attempt'] : null;
  const maxAttempts = maxAttemptsOf(node);
  const error = typeof retryEvent?.payload['error'] === 'string' ? retryEvent.payload['error'] : null;
  const iteration = typeof retryEvent?.payload['iterationPath'] === 'string' ? retryEvent.payload['iterationPath'] : '';
  const call = watchCall(run, (remainingMs ?? 30_000) + 5_000);
  const attempts = attempt === null ? 'an attempt' : `attempt ${attempt}${maxAttempts === null ? '' : ` of ${maxAttempts}`}`;
  return {
    kind: 'timer',
    nodeId,
    ...placeOfNode(iteration),
    reason: `Step '${node?.name ?? nodeId}' failed ${attempts}${error ? ` (${error})` : ''} and waits in retry backoff until ${String(blocked['wakeAt'])}.`,
    waitingSince: epochMs(retryEvent?.timestamp),
    unblocker: callText(call),
    call,
    context: `Nothing to do: the next attempt starts by itself${remainingMs === null ? '' : ` in ${Math.ceil(remainingMs / 1000)} s`}. To stop retrying: cancel_run ${JSON.stringify({ runId: run.id })}.`,
    firesAtMs,
    remainingMs,
    attempt,
    maxAttempts,
    error,
  };
}

function pausedBlocker(run: RestRun): Blocker {
  const pausedAt = typeof run['pausedAt'] === 'string' ? run['pausedAt'] : null;
  return runBlocker(
    run,
    'paused',
    `The run is paused${pausedAt ? ` since ${pausedAt}` : ''}: no node starts until it is resumed.`,
    epochMs(pausedAt),
    { tool: 'resume_run', arguments: { runId: run.id } },
    'Resuming continues where it stopped: nothing completed runs again, and it goes back to waiting if a gate is still undecided. Gates can be decided while paused.',
  );
}

function healthBlocker(run: RestRun, state: 'stale' | 'orphaned'): Blocker {
  const lastHeartbeatAt = typeof run.runState.unhealthy?.['lastHeartbeatAt'] === 'string' ? run.runState.unhealthy['lastHeartbeatAt'] : null;
  const since = lastHeartbeatAt ? ` since ${lastHeartbeatAt}` : '';
  if (state === 'stale') {
    return runBlocker(run, 'stale', `The instance executing the run stopped heartbeating${since}; its lease expired.`, epochMs(lastHeartbeatAt), watchCall(run, 60_000), 'Nothing to do yet: another instance claims a run whose lease expired (within about 15 s) and continues it.');
  }
  const call: ToolCall = { tool: 'cancel_run', arguments: { runId: run.id, reason: 'orphaned: no instance took it over' } };
  return runBlocker(
    run,
    'orphaned',
    `The run is orphaned: its owner stopped heartbeating${since} and no instance took it over.`,
    epochMs(lastHeartbeatAt),
    call,
    `An operator can start a Switchyard instance on the same store: it claims the run and continues it. Otherwise give up on it: ${callText(call)}, then retry_run ${JSON.stringify({ runId: run.id })} to start over from its completed nodes.`,
  );
}

function directiveBlocker(run: RestRun, directive: string): Blocker {
  if (directive === 'pause') {
    return runBlocker(run, 'pending-directive', 'A pause was requested: the nodes executing now finish, then the run becomes paused.', null, { tool: 'resume_run', arguments: { runId: run.id } }, 'resume_run withdraws a pause not yet honoured; otherwise the run pauses by itself.');
  }
  const what = directive === 'timeout' ? "The run's timeout passed" : 'A cancel was requested';
  return runBlocker(run, 'pending-directive', `${what}: its owner is stopping it.`, null, watchCall(run, 30_000), 'Nothing to do: the run ends by itself (failed or cancelled).');
}

/** The failed steps (or, when none, the failed containers; or the run itself). */
function failedBlockers(run: RestRun, failed: readonly RestNodeRun[], nodes: Map<string, DefinitionNode>, label: (nodeId: string) => string): Blocker[] {
  const call: ToolCall = { tool: 'retry_run', arguments: { runId: run.id } };
  if (failed.length === 0) {
    return [runBlocker(run, 'failed', `The run failed: ${run.errorSummary ?? 'no reason recorded'}.`, epochMs(run.finishedAt), call, 'Fix the cause first. retry_run starts a child run that reuses every completed node and executes the rest.')];
  }
  const leaves = failed.filter((nodeRun) => !CONTAINER_NODE_TYPES.includes(nodeRun.nodeType));
  return (leaves.length > 0 ? leaves : failed).slice(0, MAX_FAILED_BLOCKERS).map((nodeRun) => {
    const rerun = { runId: run.id, nodeId: nodeRun.nodeId, ...(nodeRun.iterationPath ? { iteration: nodeRun.iterationPath } : {}) };
    return {
      kind: 'failed' as const,
      nodeId: nodeRun.nodeId,
      ...placeOfNode(nodeRun.iterationPath),
      reason: `${capitalize(label(nodeRun.nodeId))} failed${nodeRun.iterationPath ? ` at iteration ${nodeRun.iterationPath}` : ''} after ${nodeRun.attempt} attempt(s): ${nodeRun.error ?? 'no error recorded'}.`,
      waitingSince: epochMs(nodeRun.finishedAt),
      unblocker: callText(call),
      call,
      context:
        `Fix the cause first (get_node_detail ${JSON.stringify({ runId: run.id, nodeId: nodeRun.nodeId })} shows every attempt). retry_run starts a child run that reuses ` +
        `every completed node and executes the rest; rerun_node ${JSON.stringify(rerun)} re-executes only this node (its child run ends right after it).`,
      attempt: nodeRun.attempt,
      maxAttempts: maxAttemptsOf(nodes.get(nodeRun.nodeId)),
      error: nodeRun.error,
    };
  });
}

function summaryOf(run: RestRun, state: string, blockers: readonly Blocker[], currentNodeId: string | null, label: (nodeId: string) => string): string {
  const at = currentNodeId === null ? '' : ` at ${label(currentNodeId)}`;
  switch (state) {
    case 'succeeded': {
      const skipped = run.nodeStatusCounts?.['skipped'] ?? 0;
      return `The run completed${run.finishedAt ? ` at ${run.finishedAt}` : ''}${skipped > 0 ? `, with ${skipped} node run(s) skipped` : ''}; nothing blocks it.`;
    }
    case 'cancelled': {
      const by = typeof run['cancelledBy'] === 'string' ? ` by ${run['cancelledBy']}` : '';
      const reason = typeof run['cancelReason'] === 'string' && run['cancelReason'] ? `: ${run['cancelReason']}` : '';
      return `The run was cancelled${by}${reason}; nothing blocks it.`;
    }
    case 'failed':
      return `The run failed${at}: ${run.errorSummary ?? blockers[0]?.reason ?? 'no reason recorded'}.`;
    case 'waiting-approval': {
      const gates = blockers.filter((blocker) => blocker.kind === 'approval');
      return `The run is waiting for a human decision on ${gates.length} gate(s): ${gates.map((gate) => `${label(gate.nodeId!)} (stepId ${gate.stepId})`).join(', ')}.`;
    }
    case 'waiting-timer':
      return blockers[0]!.reason.replace(/\.$/, '; it continues by itself.');
    case 'paused':
    case 'stale':
    case 'orphaned':
      return blockers[0]!.reason;
    case 'pending':
      return 'The run is queued and has not started yet.';
    case 'running': {
      const gates = blockers.filter((blocker) => blocker.kind === 'approval').length;
      return `The run is running${at}${gates > 0 ? `; ${gates} gate(s) of other branches wait for a human decision` : ''}${run['pendingDirective'] ? ` (pending directive: ${String(run['pendingDirective'])})` : ''}.`;
    }
    default:
      return `The run's state is unknown (status ${run.status}): the stored data does not say what it is doing; check again with watch_run.`;
  }
}

/** Where a node blocker sits: its iteration path and innermost iteration. */
function placeOfNode(iterationPath: string): { iterationPath: string; iteration: number } {
  return { iterationPath, iteration: innermost(iterationPath) };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
