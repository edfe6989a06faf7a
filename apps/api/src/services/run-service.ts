/**
 * Run creation (spec endpoints 7, 13–14 and "Internal Data Flow — Control Endpoints" 3.2, 3.4;
 * DESIGN.md "Run control"): the trigger, retry and replay all make a run through one factory,
 * {@link createRun}, and differ only in what they hand it — which definition, which input, which
 * node runs of a source run to reuse (memoized re-traversal then skips those nodes).
 */
import {
  InvalidRequestError,
  MAX_USER_JSON_DEPTH,
  NotFoundError,
  actorOfStored,
  assertObjectIdHex,
  isTerminalRunStatus,
  jsonDepth,
  type DefinitionSnapshot,
  decisionsToReplay,
  nodeRunsToReuse,
  planNodeRerun,
  type NodeRunRecord,
  type RequirementRecord,
  type ResolvedDependency,
  type RunRecord,
  type TriggerRunBody,
  type WorkflowRecord,
} from '@switchyard/domain';
import { newId } from '@switchyard/store';
import type { StoredTraceContext } from '@switchyard/runner';
import type { TriggeringIdentity } from '../auth/identity.ts';
import type { AppServices } from './app-services.ts';
import { onceForKey } from './idempotency.ts';
import { WORKFLOW_DISABLED_MESSAGE, checkedRunInput, requireRun, requireWorkflow } from './workflow-service.ts';

export type { TriggeringIdentity } from '../auth/identity.ts';

/** What {@link createRun} needs. */
export interface NewRunPlan {
  workflow: WorkflowRecord;
  /** The definition the run executes (the live one, or a source run's snapshot for a retry). */
  definitionSnapshot: DefinitionSnapshot;
  triggerSource: string;
  initialInput: Record<string, unknown>;
  parentRunId: string | null;
  resolvedDependencies: ResolvedDependency[];
  /** Node runs of the parent run to copy in: the new run reuses their outputs. */
  reused: readonly NodeRunRecord[];
  /** Decided requirements of the parent run to carry over: the new run replays those decisions. */
  decisions?: RequirementRecord[];
  identity: TriggeringIdentity;
  /**
   * The run this one is made from with the same input (retry, node rerun, replay): its triggers
   * join the new run's `triggerLineage` (four-eyes, access/decision-guard.ts). Absent for a trigger.
   */
  source?: Pick<RunRecord, 'triggeringUserId' | 'triggerLineage'>;
  /** The new run's id, when the caller reserved one (an idempotency key names it first). */
  runId?: string;
  /** Most children of one parallel node in flight at once for this run; default the engine's. */
  parallelLimit?: number;
  /** The run must end within this many seconds (trigger option `timeoutSeconds`); default no limit. */
  timeoutSeconds?: number;
  /** A node rerun's target: the run ends right after it. */
  stopAfter?: { nodeId: string; iterationPath: string };
  /** The trigger request's W3C trace context (runner tracing.ts `traceContextFromHeaders`): the run's executions join its trace. */
  traceContext?: StoredTraceContext | null;
  /** What started the run besides a caller (issue #21): a schedule's tick or an event; stored top-level on the run. */
  origin?: { scheduleId: string; scheduledAt: Date } | { eventId: string };
}

/** How long recovery leaves a new run alone while its reused node runs are copied in, ms (a crash meanwhile: it runs after this, re-executing what was not copied). */
const PREPARATION_GRACE_MS = 5 * 60_000;

/**
 * Creates a pending run and starts it in the background. 400 when the workflow is disabled or
 * the input nests too deeply. The run is inserted first, held back from recovery
 * (`recover_after`), then the reused node runs are copied in, then it is released and started:
 * a failure on the way (e.g. a store error) deletes the run and its copies again.
 */
export async function createRun(services: AppServices, plan: NewRunPlan): Promise<RunRecord> {
  if (!plan.workflow.enabled) throw new InvalidRequestError(WORKFLOW_DISABLED_MESSAGE);
  if (jsonDepth(plan.initialInput) > MAX_USER_JSON_DEPTH) throw new InvalidRequestError(`initialInput nests deeper than ${MAX_USER_JSON_DEPTH} levels`);
  const now = services.clock.now();
  const runId = plan.runId ?? newId();
  const preparing = plan.reused.length > 0;
  const triggerLineage = lineageOf(plan.source, plan.identity);
  const run = await services.repos.runs.create(
    {
      workflowDefinitionId: plan.workflow.id,
      workflowVersion: plan.workflow.version,
      triggerSource: plan.triggerSource,
      initialInput: plan.initialInput,
      definitionSnapshot: plan.definitionSnapshot,
      parentRunId: plan.parentRunId,
      resolvedDependencies: plan.resolvedDependencies,
      triggeringUserId: plan.identity.userId,
      triggeringUsername: plan.identity.username,
      triggeringScopes: plan.identity.scopes,
      triggeringVia: plan.identity.via ?? null,
      triggerLineage,
      pendingRequirements: withoutSelfDecisions(plan.decisions ?? [], triggerLineage),
      parallelLimit: plan.parallelLimit ?? null,
      timeoutSeconds: plan.timeoutSeconds ?? null,
      stopAfter: plan.stopAfter ?? null,
      recoverAfter: preparing ? new Date(now.getTime() + PREPARATION_GRACE_MS) : null,
      traceParent: plan.traceContext?.traceParent ?? null,
      traceState: plan.traceContext?.traceState ?? null,
      ...plan.origin,
    },
    now,
    runId,
  );
  if (preparing) {
    try {
      for (const source of plan.reused) await services.repos.nodeRuns.copyToRun(source, runId, now);
      await services.repos.runs.clearRecoveryBackoff(runId);
    } catch (error) {
      // No run comes of it: leave neither the run nor a copied node run behind.
      await services.repos.nodeRuns.deleteByRun(runId).catch(() => undefined);
      await services.repos.runs.deleteUnstarted(runId).catch(() => undefined);
      throw error;
    }
  }
  void services.engine.start(run.id);
  return run;
}

/** The user ids that triggered `source` and its own sources, and the new run's trigger; distinct. */
function lineageOf(source: NewRunPlan['source'], identity: TriggeringIdentity): string[] {
  const ids = [...(source?.triggerLineage ?? []), source?.triggeringUserId, identity.userId];
  return [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
}

/**
 * `decisions` to replay, without the four-eyes ones (`allowSelfApproval: false`) decided by
 * someone in `lineage`: a retry must not carry a person's decision into a run they now count as
 * a trigger of. Those gates are asked again.
 */
function withoutSelfDecisions(decisions: RequirementRecord[], lineage: readonly string[]): RequirementRecord[] {
  return decisions.filter((decision) => decision.allowSelfApproval !== false || !lineage.includes(actorOfStored(decision.decidedByUser)?.userId ?? ''));
}

/** The live definition of `workflow`, frozen for a new run. */
export function liveSnapshot(workflow: WorkflowRecord): DefinitionSnapshot {
  return { name: workflow.name, description: workflow.description, canvas: workflow.canvas, nodes: workflow.nodes };
}

/**
 * Starts a fresh run of `workflow`'s live definition (nothing reused, no parent) at most once per
 * idempotency `key` (`onceForKey`, body `keyBody`): how the service itself starts runs — a
 * schedule's tick, an event. `plan` says the rest (trigger source, input, identity, lineage, origin).
 * Returns the run, new or the one the key started before. Throws what {@link createRun} throws.
 */
export async function startLiveRunOnce(
  services: AppServices,
  workflow: WorkflowRecord,
  key: string,
  keyBody: unknown,
  plan: Pick<NewRunPlan, 'triggerSource' | 'initialInput' | 'identity' | 'source' | 'origin'>,
): Promise<RunRecord> {
  const { run } = await onceForKey(services, workflow.id, key, keyBody, (runId) =>
    createRun(services, { ...plan, workflow, definitionSnapshot: liveSnapshot(workflow), parentRunId: null, resolvedDependencies: [], reused: [], runId }),
  );
  return run;
}

/**
 * Creates a pending run of an enabled workflow on its live definition (spec endpoint 7). With
 * `parentRunId` + `resolvedDependencies`, nodes resolved as `reuse_previous_output` get the
 * parent run's node run (`sourceNodeRunId`) copied in; `rerun` nodes execute again.
 * The input must match the workflow's declared inputs (`inputSchema`), whose defaults it gets.
 * 400 when disabled, when the input does not match (a problem per path), when `resolvedDependencies` come without `parentRunId`, or when a dependency
 * does not fit (missing or foreign source node run, node id mismatch, source not completed);
 * 404 when the workflow or the parent run does not exist. `runId` is the id to give the run, when
 * reserved by the caller. `traceContext`: the trigger request's W3C trace context, if any.
 */
export async function triggerRun(
  services: AppServices,
  id: string,
  body: TriggerRunBody,
  identity: TriggeringIdentity,
  runId?: string,
  traceContext?: StoredTraceContext | null,
): Promise<RunRecord> {
  const workflow = await requireWorkflow(services, id);
  if (!workflow.enabled) throw new InvalidRequestError(WORKFLOW_DISABLED_MESSAGE);
  const initialInput = checkedRunInput(workflow, (body.initialInput ?? {}) as Record<string, unknown>);
  const { parentRunId, resolvedDependencies, reused } = await checkDependencies(services, id, body);
  return createRun(services, {
    workflow,
    definitionSnapshot: liveSnapshot(workflow),
    triggerSource: body.triggerSource ?? 'manual',
    initialInput,
    parentRunId,
    resolvedDependencies,
    reused,
    identity,
    runId,
    parallelLimit: body.parallelLimit,
    timeoutSeconds: body.timeoutSeconds,
    traceContext,
  });
}

/**
 * A trigger's `parentRunId` and `resolvedDependencies`, checked: the parent run's node runs to
 * reuse. 400 on a misfit (dependencies without a parent, malformed ids, see
 * {@link dependencySources}); 404 when the parent run is not a run of `workflowId`.
 */
export async function checkDependencies(
  services: AppServices,
  workflowId: string,
  body: TriggerRunBody,
): Promise<{ parentRunId: string | null; resolvedDependencies: ResolvedDependency[]; reused: NodeRunRecord[] }> {
  const parentRunId = body.parentRunId ?? null;
  const resolvedDependencies = knownDependencyFields(body.resolvedDependencies ?? []);
  if (resolvedDependencies.length > 0 && parentRunId === null) throw new InvalidRequestError('resolvedDependencies requires parentRunId');
  if (parentRunId === null) return { parentRunId, resolvedDependencies, reused: [] };
  assertObjectIdHex(parentRunId, 'parentRunId');
  if (!(await services.repos.runs.getInWorkflow(workflowId, parentRunId))) throw new NotFoundError('run', { name: 'Parent run' });
  return { parentRunId, resolvedDependencies, reused: await dependencySources(services, parentRunId, resolvedDependencies) };
}

/** Body of a retry: both optional. */
export interface RetryRequest {
  resolvedDependencies?: ResolvedDependency[] | null;
  initialInput?: Record<string, unknown> | null;
}

/**
 * Retries an ended run (spec 3.2): a child run (`triggerSource: "retry"`) on the source's
 * definition snapshot. Without a body it is a full retry: the same input, every node run that
 * completed in the source reused (at every iteration path) and the source's human decisions
 * replayed (see `retry-plan.ts`), so only what did not complete executes. With a body it is a
 * trigger of the source's definition: `resolvedDependencies` (default none) choose what is
 * reused, `initialInput` (default the source's) is the input, and gates are asked afresh —
 * outputs computed from another input are never reused unless asked for. 400 when the source
 * has not ended or the workflow is disabled; 404 when the workflow or run does not exist.
 */
export async function retryRun(services: AppServices, workflowId: string, runId: string, body: RetryRequest, identity: TriggeringIdentity, newRunId?: string): Promise<RunRecord> {
  const source = await requireEndedRun(services, workflowId, runId, 'retried');
  const workflow = await requireWorkflow(services, workflowId);
  const full = body.resolvedDependencies == null && body.initialInput == null;
  const resolvedDependencies = knownDependencyFields(body.resolvedDependencies ?? []);
  return createRun(services, {
    workflow,
    definitionSnapshot: source.definitionSnapshot,
    triggerSource: 'retry',
    initialInput: body.initialInput ?? source.initialInput,
    parentRunId: source.id,
    source,
    resolvedDependencies,
    reused: full ? nodeRunsToReuse(await services.repos.nodeRuns.listByRun(source.id)) : await dependencySources(services, source.id, resolvedDependencies),
    decisions: full ? decisionsToReplay(source.pendingRequirements) : [],
    identity,
    runId: newRunId,
    parallelLimit: source.parallelLimit ?? undefined,
    timeoutSeconds: source.timeoutSeconds ?? undefined,
  });
}

/**
 * Reruns one node of an ended run (spec endpoint 13, "Internal Data Flow" 3.3; issue "Run
 * control" item 3): a child run (`triggerSource: "node_rerun"`) on the source's definition
 * snapshot and input that reuses everything before the target, executes the target afresh and
 * ends right after it (its final output is the target's). Nodes nested in parallel, condition,
 * router and loop containers are supported: see domain `planNodeRerun` for what is reused and
 * which iteration runs (`iterationPath`, default the target's last one). 400 when the source has
 * not ended, the workflow is disabled or the iteration path does not fit; 404 when the workflow,
 * the run, or the node (in the source's definition) does not exist. `newRunId`: the id to give
 * the new run, when an idempotency key reserved one (as for retry and replay).
 */
export async function rerunNode(
  services: AppServices,
  workflowId: string,
  runId: string,
  nodeId: string,
  body: { iterationPath?: string | null },
  identity: TriggeringIdentity,
  newRunId?: string,
): Promise<RunRecord> {
  const source = await requireEndedRun(services, workflowId, runId, 'rerun node by node');
  const workflow = await requireWorkflow(services, workflowId);
  const plan = planNodeRerun(
    source.definitionSnapshot.nodes,
    { nodeRuns: await services.repos.nodeRuns.listByRun(source.id), requirements: source.pendingRequirements },
    nodeId,
    body.iterationPath ?? undefined,
  );
  if (plan.kind === 'unknown_node') throw new NotFoundError('node', { details: { nodeId } });
  if (plan.kind === 'bad_iteration') throw new InvalidRequestError(plan.message);
  return createRun(services, {
    workflow,
    definitionSnapshot: source.definitionSnapshot,
    triggerSource: 'node_rerun',
    initialInput: source.initialInput,
    parentRunId: source.id,
    source,
    resolvedDependencies: [],
    reused: plan.reuse,
    decisions: plan.decisions,
    identity,
    runId: newRunId,
    parallelLimit: source.parallelLimit ?? undefined,
    stopAfter: plan.target,
  });
}

/**
 * Replays a run (spec endpoint 14): a child run (`triggerSource: "replay"`) on the live
 * definition with the source's input; nothing is reused, so the source may still be running.
 * 400 when the workflow is disabled; 404 when the workflow or run does not exist.
 */
export async function replayRun(services: AppServices, workflowId: string, runId: string, identity: TriggeringIdentity, newRunId?: string): Promise<RunRecord> {
  const source = await requireRun(services, workflowId, runId);
  const workflow = await requireWorkflow(services, workflowId);
  return createRun(services, {
    workflow,
    definitionSnapshot: liveSnapshot(workflow),
    triggerSource: 'replay',
    initialInput: source.initialInput,
    parentRunId: source.id,
    source,
    resolvedDependencies: [],
    reused: [],
    identity,
    runId: newRunId,
  });
}

/** The run, which must have ended (400 naming its status otherwise; 404 when missing). */
async function requireEndedRun(services: AppServices, workflowId: string, runId: string, verb: string): Promise<RunRecord> {
  const run = await requireRun(services, workflowId, runId);
  if (!isTerminalRunStatus(run.status)) {
    throw new InvalidRequestError(`Run is ${run.status}: only an ended run (completed, failed or cancelled) can be ${verb}`);
  }
  return run;
}

/** Known fields only: unknown keys are ignored, as everywhere in the API. */
function knownDependencyFields(dependencies: readonly ResolvedDependency[]): ResolvedDependency[] {
  return dependencies.map(({ nodeId, resolution, sourceNodeRunId }) => (sourceNodeRunId === undefined ? { nodeId, resolution } : { nodeId, resolution, sourceNodeRunId }));
}

/** The parent run's node runs to reuse, validated against `dependencies`. Throws 400 on a misfit. */
async function dependencySources(services: AppServices, parentRunId: string, dependencies: readonly ResolvedDependency[]): Promise<NodeRunRecord[]> {
  const sources: NodeRunRecord[] = [];
  const seen = new Set<string>();
  for (const [i, dependency] of dependencies.entries()) {
    if (seen.has(dependency.nodeId)) throw new InvalidRequestError(`resolvedDependencies[${i}]: node '${dependency.nodeId}' is listed twice`);
    seen.add(dependency.nodeId);
    if (dependency.resolution !== 'reuse_previous_output') continue;
    const where = `resolvedDependencies[${i}] (node '${dependency.nodeId}')`;
    const sourceId = dependency.sourceNodeRunId;
    if (!sourceId) throw new InvalidRequestError(`${where}: sourceNodeRunId is required with reuse_previous_output`);
    assertObjectIdHex(sourceId, `sourceNodeRunId of ${where}`);
    const source = await services.repos.nodeRuns.get(parentRunId, sourceId);
    if (!source) throw new InvalidRequestError(`${where}: node run ${sourceId} is not a node run of the parent run`);
    if (source.nodeId !== dependency.nodeId) throw new InvalidRequestError(`${where}: node run ${sourceId} belongs to node '${source.nodeId}'`);
    if (source.status !== 'completed') throw new InvalidRequestError(`${where}: node run ${sourceId} is ${source.status}, only completed outputs can be reused`);
    sources.push(source);
  }
  return sources;
}
