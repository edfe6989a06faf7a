/**
 * Workflow definition use cases (spec endpoints 1-6): validation through domain, persistence
 * through the repositories; runs are made in `run-service.ts`.
 */
import {
  AccessDeniedError,
  NotFoundError,
  creatorAccess,
  walkNodes,
  roleIncludes,
  type Role,
  type Actor,
  type AuditedWorkflowField,
  normalizeCanvas,
  normalizeDefinition,
  normalizeTags,
  normalizeTriggers,
  type RunRecord,
  type RunViewRecord,
  type WorkflowCreateBody,
  type WorkflowRecord,
  type WorkflowNode,
  type WorkflowUpdateBody,
} from '@switchyard/domain';
import { checkInputSchema, validateRunInput } from '@switchyard/domain/input-schema';
import { InvalidRequestError } from '@switchyard/domain';
import type { WorkflowChanges } from '@switchyard/store';
import type { AppServices } from './app-services.ts';
import { flushAuditOutbox, recordAudit } from './audit-trail.ts';

/** The spec's message for triggering a disabled workflow. */
export const WORKFLOW_DISABLED_MESSAGE = 'Workflow is disabled. Please enable the workflow before triggering a run.';

/** Loads a definition or throws NotFoundError (404). */
export async function requireWorkflow(services: AppServices, id: string): Promise<WorkflowRecord> {
  const workflow = await services.repos.definitions.get(id);
  if (!workflow) throw new NotFoundError('workflow');
  return workflow;
}

/** Loads a run of the workflow, or throws NotFoundError naming what is missing (workflow or run). */
export async function requireRun(services: AppServices, workflowId: string, runId: string): Promise<RunRecord> {
  return runOrNotFound(services, workflowId, await services.repos.runs.getInWorkflow(workflowId, runId));
}

/** Loads what the run views show of a run of the workflow (`WorkflowRuns.getViewInWorkflow`), or throws as {@link requireRun}. */
export async function requireRunView(services: AppServices, workflowId: string, runId: string): Promise<RunViewRecord> {
  return runOrNotFound(services, workflowId, await services.repos.runs.getViewInWorkflow(workflowId, runId));
}

/** `run` when it was found; else throws NotFoundError naming what is missing (the workflow, or only the run). */
export async function runOrNotFound<T>(services: AppServices, workflowId: string, run: T | null): Promise<T> {
  if (run) return run;
  await requireWorkflow(services, workflowId);
  throw new NotFoundError('run');
}

/**
 * `inputSchema` of a create or update body, checked (domain input-schema.ts): 400 with every
 * problem (`/inputSchema...: ...`) when it is not acceptable. null stays null (no declared inputs).
 */
export function checkedInputSchema(inputSchema: object | null): Record<string, unknown> | null {
  if (inputSchema === null) return null;
  const problems = checkInputSchema(inputSchema);
  if (problems.length > 0) throw new InvalidRequestError('inputSchema is not an acceptable JSON Schema (draft 2020-12)', problems);
  return inputSchema as Record<string, unknown>;
}

/**
 * The run input `input` checked against `workflow`'s declared inputs, with their defaults applied:
 * the one check of trigger, dry run (and later schedules, event triggers). Throws 400
 * `invalid_request` with a problem per path (`/customerEmail: is required`) when it does not match.
 */
export function checkedRunInput(workflow: WorkflowRecord, input: Record<string, unknown>): Record<string, unknown> {
  const check = validateRunInput(workflow, input);
  if (!check.ok) throw new InvalidRequestError("initialInput does not match the workflow's inputSchema", check.problems);
  return check.input;
}

/**
 * Validates and stores a new, disabled definition owned by `creator` (a principal, `user:<sub>`;
 * issue #18: the creator becomes its first owner), then records `workflow.created` by `actor`
 * (audit-trail.ts). 400 on invalid nodes, inputSchema or triggers (domain triggers.ts), 409 on a taken name.
 */
export async function createWorkflow(services: AppServices, body: WorkflowCreateBody, actor: Actor, creator: string): Promise<WorkflowRecord> {
  const nodes = normalizeDefinition(body.nodes, services.checks);
  const canvas = normalizeCanvas(body.canvas);
  const tags = normalizeTags(body.tags);
  const inputSchema = checkedInputSchema(body.inputSchema ?? null);
  const triggers = normalizeTriggers(body.triggers, services.checks);
  const access = creatorAccess(creator);
  const now = services.clock.now();
  // The definition and its `workflow.created` entry are one write (the audit outbox): a refused
  // write stores neither, a stored one keeps its entry even when moving it to the trail fails.
  const created = await services.repos.definitions.create({ name: body.name, description: body.description ?? null, canvas, nodes, tags, inputSchema, triggers, access }, now, {
    type: 'workflow.created',
    actor,
    payload: { name: body.name, version: 1 },
    createdAt: now,
  });
  await flushAuditOutbox(services, created.id);
  return created;
}

/**
 * Who decides each gated node of `nodes` (every level): `humanReview.approvers` and
 * `allowSelfApproval` by node id, as JSON text, for comparing two versions of a definition.
 */
function gateDeciders(nodes: readonly WorkflowNode[]): string {
  const deciders: Array<[string, string[] | null, boolean]> = [];
  for (const node of walkNodes(nodes)) {
    if (node.humanReview) deciders.push([node.id, node.humanReview.approvers ?? null, node.humanReview.allowSelfApproval ?? true]);
  }
  return JSON.stringify(deciders.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

/** The fields whose change bumps `version` (what a run executes, or a reader of its snapshot sees). */
const VERSIONED_FIELDS: readonly AuditedWorkflowField[] = ['name', 'description', 'canvas', 'nodes', 'inputSchema', 'triggers'];

/**
 * Applies a PUT. Nodes, inputSchema and triggers are validated like on create. `version` grows when name, description,
 * canvas, nodes, inputSchema or triggers change (what a run executes, or a reader of its snapshot sees); `enabled` and
 * `tags` are metadata and keep it. When some field changed, records `workflow.updated` by `actor`
 * with the versions before and after and the changed fields; a PUT that changes nothing records
 * nothing. A change of who decides a gate (`humanReview.approvers`, `allowSelfApproval`) needs
 * `role` owner (403 otherwise, nothing changed) and is listed as the field `approvers`.
 */
export async function updateWorkflow(services: AppServices, id: string, body: WorkflowUpdateBody, actor: Actor, role: Role | null = 'owner'): Promise<WorkflowRecord> {
  const current = await requireWorkflow(services, id);
  const changes: WorkflowChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.description !== undefined) changes.description = body.description;
  if (body.canvas !== undefined) changes.canvas = normalizeCanvas(body.canvas);
  if (body.nodes !== undefined) changes.nodes = normalizeDefinition(body.nodes, services.checks);
  if (body.enabled !== undefined) changes.enabled = body.enabled;
  if (body.tags !== undefined) changes.tags = normalizeTags(body.tags);
  if (body.inputSchema !== undefined) changes.inputSchema = checkedInputSchema(body.inputSchema);
  if (body.triggers !== undefined) changes.triggers = normalizeTriggers(body.triggers, services.checks);
  const fields = (Object.keys(changes) as Array<keyof WorkflowChanges>).filter((field) => JSON.stringify(changes[field] ?? null) !== JSON.stringify(current[field] ?? null)) as AuditedWorkflowField[];
  if (changes.nodes !== undefined && gateDeciders(changes.nodes) !== gateDeciders(current.nodes)) {
    // Who may decide a gate is an access decision: owners make it (docs/guide/access-control.md).
    if (!roleIncludes(role, 'owner')) throw new AccessDeniedError('owner', id);
    fields.push('approvers');
  }
  const definitionChanged = fields.some((field) => VERSIONED_FIELDS.includes(field));
  const updated = await services.repos.definitions.update(id, changes, definitionChanged, services.clock.now());
  if (!updated) throw new NotFoundError('workflow');
  if (fields.length > 0) {
    const fromVersion = definitionChanged ? updated.version - 1 : updated.version;
    await recordAudit(services, id, 'workflow.updated', actor, { fromVersion, toVersion: updated.version, fields });
  }
  return updated;
}

/**
 * Sets `enabled`; records `workflow.toggled` by `actor` when the value changed (a toggle to the
 * current value records nothing). 404 when the workflow does not exist.
 */
export async function toggleWorkflow(services: AppServices, id: string, enabled: boolean, actor: Actor): Promise<WorkflowRecord> {
  const before = await requireWorkflow(services, id);
  const updated = await services.repos.definitions.update(id, { enabled }, false, services.clock.now());
  if (!updated) throw new NotFoundError('workflow');
  if (before.enabled !== enabled) await recordAudit(services, id, 'workflow.toggled', actor, { enabled });
  return updated;
}

/**
 * Deletes a definition with its schedules, runs, node runs and run events, and records `workflow.deleted` by
 * `actor` (the audit trail itself is kept: admins read it with `GET /api/v1/audit`). Runs of it
 * that this instance is executing are stopped first, so that nothing is written for them
 * afterwards (a run executing on another instance stops at its next heartbeat, when its lease is
 * gone). 404 when it does not exist.
 */
export async function deleteWorkflow(services: AppServices, id: string, actor: Actor): Promise<void> {
  const { name } = await requireWorkflow(services, id);
  // Entries still pending on the definition go to the trail first: they would go with it (a failure is a 503, nothing deleted).
  await services.repos.audit.flushOutbox(id);
  if (!(await services.repos.definitions.delete(id))) throw new NotFoundError('workflow');
  try {
    await recordAudit(services, id, 'workflow.deleted', actor, { name });
  } finally {
    // The definition is gone: its runs go too, even when the audit entry could not be written.
    const { runs, nodeRuns, events, idempotencyKeys, schedules } = services.repos;
    // Its schedules first, so no tick starts a run of it meanwhile.
    await schedules.deleteByWorkflow(id);
    for (const runId of await runs.listUnfinishedIds(id)) await services.engine.abort(runId, 'workflow deleted');
    await Promise.all([runs.deleteByWorkflow(id), nodeRuns.deleteByWorkflow(id), events.deleteByWorkflow(id), idempotencyKeys.deleteByWorkflow(id)]);
  }
}
