/**
 * Workflow definition use cases (spec endpoints 1-7): validation through domain, persistence
 * through the repositories, runs handed to the engine.
 */
import {
  assertObjectIdHex,
  InvalidRequestError,
  MAX_USER_JSON_DEPTH,
  NotFoundError,
  jsonDepth,
  normalizeCanvas,
  normalizeDefinition,
  type NodeRunRecord,
  type ResolvedDependency,
  type RunRecord,
  type TriggerRunBody,
  type WorkflowCreateBody,
  type WorkflowRecord,
  type WorkflowUpdateBody,
} from '@switchyard/domain';
import { newId, type WorkflowChanges } from '@switchyard/store';
import type { AppServices } from './index.ts';

/** The spec's message for triggering a disabled workflow. */
export const WORKFLOW_DISABLED_MESSAGE = 'Workflow is disabled. Please enable the workflow before triggering a run.';

/** Loads a definition or throws NotFoundError (404). */
export async function requireWorkflow(services: AppServices, id: string): Promise<WorkflowRecord> {
  const workflow = await services.repos.definitions.get(id);
  if (!workflow) throw new NotFoundError('Workflow');
  return workflow;
}

/** Loads a run of the workflow, or throws NotFoundError naming what is missing (workflow or run). */
export async function requireRun(services: AppServices, workflowId: string, runId: string): Promise<RunRecord> {
  const run = await services.repos.runs.getInWorkflow(workflowId, runId);
  if (run) return run;
  await requireWorkflow(services, workflowId);
  throw new NotFoundError('Run');
}

/** Validates and stores a new, disabled definition. 400 on invalid nodes, 409 on a taken name. */
export async function createWorkflow(services: AppServices, body: WorkflowCreateBody): Promise<WorkflowRecord> {
  const nodes = normalizeDefinition(body.nodes, services.checks);
  const canvas = normalizeCanvas(body.canvas);
  return services.repos.definitions.create({ name: body.name, description: body.description ?? null, canvas, nodes }, services.clock.now());
}

/**
 * Applies a PUT. Nodes are validated like on create. `version` grows when name, description,
 * canvas or nodes change; toggling `enabled` alone keeps it.
 */
export async function updateWorkflow(services: AppServices, id: string, body: WorkflowUpdateBody): Promise<WorkflowRecord> {
  const current = await requireWorkflow(services, id);
  const changes: WorkflowChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.description !== undefined) changes.description = body.description;
  if (body.canvas !== undefined) changes.canvas = normalizeCanvas(body.canvas);
  if (body.nodes !== undefined) changes.nodes = normalizeDefinition(body.nodes, services.checks);
  if (body.enabled !== undefined) changes.enabled = body.enabled;
  const definitionChanged = (['name', 'description', 'canvas', 'nodes'] as const).some(
    (field) => field in changes && JSON.stringify(changes[field]) !== JSON.stringify(current[field]),
  );
  const updated = await services.repos.definitions.update(id, changes, definitionChanged, services.clock.now());
  if (!updated) throw new NotFoundError('Workflow');
  return updated;
}

/** Sets `enabled`. 404 when the workflow does not exist. */
export async function toggleWorkflow(services: AppServices, id: string, enabled: boolean): Promise<WorkflowRecord> {
  const updated = await services.repos.definitions.update(id, { enabled }, false, services.clock.now());
  if (!updated) throw new NotFoundError('Workflow');
  return updated;
}

/**
 * Deletes a definition with its runs, node runs and run events. Runs of it that this instance is
 * executing are stopped first, so that nothing is written for them afterwards (a run executing
 * on another instance stops at its next heartbeat, when its lease is gone). 404 when it does not
 * exist.
 */
export async function deleteWorkflow(services: AppServices, id: string): Promise<void> {
  if (!(await services.repos.definitions.delete(id))) throw new NotFoundError('Workflow');
  const { runs, nodeRuns, events } = services.repos;
  for (const runId of await runs.listUnfinishedIds(id)) await services.engine.abort(runId, 'workflow deleted');
  await Promise.all([runs.deleteByWorkflow(id), nodeRuns.deleteByWorkflow(id), events.deleteByWorkflow(id)]);
}

/**
 * Creates a pending run of an enabled workflow, freezing its definition, and starts it in the
 * background. With `parentRunId` + `resolvedDependencies`, nodes resolved as
 * `reuse_previous_output` get the parent run's node run (`sourceNodeRunId`) copied in, so the new
 * run reuses those outputs instead of executing the nodes; `rerun` nodes execute again.
 * 400 when disabled, when `resolvedDependencies` come without `parentRunId`, or when a dependency
 * does not fit (missing or foreign source node run, node id mismatch, source not completed);
 * 404 when the workflow or the parent run does not exist.
 */
/** Who triggered a run (spec "Internal WorkflowRun Fields": triggering_user_id, _username, _scopes). */
export interface TriggeringIdentity {
  userId: string | null;
  username: string | null;
  scopes: string[];
}

export async function triggerRun(services: AppServices, id: string, body: TriggerRunBody, identity: TriggeringIdentity = { userId: null, username: null, scopes: [] }): Promise<RunRecord> {
  const workflow = await requireWorkflow(services, id);
  if (!workflow.enabled) throw new InvalidRequestError(WORKFLOW_DISABLED_MESSAGE);
  if (jsonDepth(body.initialInput ?? {}) > MAX_USER_JSON_DEPTH) throw new InvalidRequestError(`initialInput nests deeper than ${MAX_USER_JSON_DEPTH} levels`);
  const parentRunId = body.parentRunId ?? null;
  // Known fields only: unknown keys are ignored, as everywhere in the API.
  const resolvedDependencies = (body.resolvedDependencies ?? []).map(({ nodeId, resolution, sourceNodeRunId }) =>
    sourceNodeRunId === undefined ? { nodeId, resolution } : { nodeId, resolution, sourceNodeRunId },
  );
  if (resolvedDependencies.length > 0 && parentRunId === null) throw new InvalidRequestError('resolvedDependencies requires parentRunId');
  if (parentRunId !== null) {
    assertObjectIdHex(parentRunId, 'parentRunId');
    if (!(await services.repos.runs.getInWorkflow(id, parentRunId))) throw new NotFoundError('Parent run');
  }
  const reused = parentRunId === null ? [] : await sourceNodeRuns(services, parentRunId, resolvedDependencies);
  const now = services.clock.now();
  // Reused node runs go in before the run exists, so no instance can claim it without them.
  const runId = newId();
  for (const source of reused) await services.repos.nodeRuns.copyToRun(source, runId, now);
  const run = await services.repos.runs.create(
    {
      workflowDefinitionId: workflow.id,
      workflowVersion: workflow.version,
      triggerSource: body.triggerSource ?? 'manual',
      initialInput: (body.initialInput ?? {}) as Record<string, unknown>,
      definitionSnapshot: { name: workflow.name, description: workflow.description, canvas: workflow.canvas, nodes: workflow.nodes },
      parentRunId,
      resolvedDependencies,
      triggeringUserId: identity.userId,
      triggeringUsername: identity.username,
      triggeringScopes: identity.scopes,
    },
    now,
    runId,
  );
  void services.engine.start(run.id);
  return run;
}

/** The parent run's node runs to reuse, validated against `dependencies`. Throws 400 on a misfit. */
async function sourceNodeRuns(services: AppServices, parentRunId: string, dependencies: readonly ResolvedDependency[]): Promise<NodeRunRecord[]> {
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
