/**
 * Human requests (issue #8): what the MCP bridge's `ask_human` tool needs. An agent executing a
 * step asks a person a question; the request is stored on the run as a requirement of phase `ask`
 * (hitl.ts `buildAskRequirement`), so the approvals inbox lists it, the run detail shows it in
 * `requirements`, and a person answers it with /approve (`stepId` = the request id). Unlike a gate,
 * nothing in the run waits for it: the interpreter never looks it up, deciding it wakes nothing,
 * and raising it needs no lease (the run's owner is busy executing the step that asks). The agent
 * polls GET .../human-requests/{request_id} until it is answered, expired or cancelled (the run's
 * end closes it, like every undecided requirement).
 *
 * Status codes (documented in docs/guide/hitl.md and docs/reference/http-api.md):
 * - 404: the workflow or run does not exist (`run`), the node is not in the run's definition
 *   snapshot (`node`), or the run has no human request with that id (`requirement`);
 * - 409: the run has ended (`details.currentStatus`); `limit_reached` when a per-run cap refuses
 *   the request (`details.limit`: openHumanRequests, storedRequirements or
 *   humanRequestRunBudgetBytes; domain run-bounds.ts); `document_too_large` when the store refuses
 *   the write anyway (nothing is written);
 * - 400: the body is invalid (including an iteration path that is not one), or `prompt`,
 *   `context`, `choices` or the whole request is over its byte limit (`details.field`).
 */
import { randomBytes } from 'node:crypto';
import {
  ConflictError,
  DEFAULT_RUN_BOUNDS,
  DocumentTooLargeConflictError,
  InvalidRequestError,
  NotFoundError,
  askOutcomeOf,
  buildAskRequirement,
  checkHumanRequestFields,
  checkHumanRequestSize,
  humanRequestRefusal,
  isTerminalRunStatus,
  parsePathSegment,
  requirementRaisedPayload,
  walkNodes,
  type HumanRequest,
  type HumanRequestBody,
  type RequirementRecord,
  type RunRecord,
} from '@switchyard/domain';
import { appendReported } from '@switchyard/runner';
import { isDocumentTooLarge } from '@switchyard/store';
import type { AppServices } from './app-services.ts';
import { requireRun } from './workflow-service.ts';

/**
 * Raises a human request on node `body.nodeId` (at `body.iterationPath`) of a run that has not
 * ended, writes its `requirement.raised` event (best effort) and returns it, pending. Its timeout
 * clock, if any, starts now. Throws 400/404/409 as described above.
 */
export async function createHumanRequest(services: AppServices, workflowId: string, runId: string, body: HumanRequestBody): Promise<HumanRequest> {
  checkHumanRequestFields(body);
  let run = await requireRun(services, workflowId, runId);
  if (isTerminalRunStatus(run.status)) throw runEnded(run);
  const node = [...walkNodes(run.definitionSnapshot.nodes)].find((candidate) => candidate.id === body.nodeId);
  if (!node) throw new NotFoundError('node', { details: { nodeId: body.nodeId } });
  const iterationPath = body.iterationPath ?? '';
  if (!isIterationPath(iterationPath)) throw new InvalidRequestError(`iterationPath '${iterationPath}' is not an iteration path (e.g. '3', '2/1', '3r1')`);
  const bounds = services.runBounds ?? DEFAULT_RUN_BOUNDS;
  const now = services.clock.now();
  const requirement = buildAskRequirement({
    node,
    iterationPath,
    token: randomBytes(6).toString('hex'),
    prompt: body.prompt,
    context: body.context ?? null,
    choices: body.choices ?? null,
    timeoutSeconds: body.timeoutSeconds ?? null,
    approvers: body.approvers ?? null,
    now,
  });
  const requestBytes = checkHumanRequestSize(requirement);
  let stored: RunRecord | null = null;
  for (let attempt = 1; ; attempt++) {
    const refusal = humanRequestRefusal(run, requestBytes, bounds);
    if (refusal) throw refusal;
    // Stored only while the run holds the requirements the bounds were checked on (a compare-and-set).
    stored = await addRequirement(services, run, requirement, now);
    if (stored) break;
    // The run ended (or was deleted) since it was read, or another requirement was added meanwhile
    // (check the bounds again); a clash of random tokens is not worth a retry branch of its own.
    const current = await services.repos.runs.get(run.id);
    if (!current) throw new NotFoundError('run');
    if (isTerminalRunStatus(current.status)) throw runEnded(current);
    if (current.pendingRequirements.length === run.pendingRequirements.length || attempt >= MAX_ATTEMPTS) {
      throw new ConflictError('The human request could not be stored; retry', { currentStatus: current.status });
    }
    run = current;
  }
  await appendReported(services, run, [{ type: 'requirement.raised', payload: requirementRaisedPayload(requirement) }], now);
  return toHumanRequest(stored, requirement);
}

/** Attempts of {@link createHumanRequest} at storing a request while other requirements keep being added to the run. */
const MAX_ATTEMPTS = 10;

/** {@link WorkflowRuns.addRequirementToLiveRun} while `run` holds as many requirements as read; a write the store finds too large is a 409 `document_too_large`. */
async function addRequirement(services: AppServices, run: RunRecord, requirement: RequirementRecord, now: Date): Promise<RunRecord | null> {
  try {
    return await services.repos.runs.addRequirementToLiveRun(run.id, requirement, now, run.pendingRequirements.length);
  } catch (error) {
    if (!isDocumentTooLarge(error)) throw error;
    throw new DocumentTooLargeConflictError('The run document has no room for this human request (the store refuses documents over 16 MiB); nothing was stored', {
      cause: error,
    });
  }
}

/** The human request `requestId` of the run, where it stands now. 404 (`requirement`) when the run has none with that id. */
export async function getHumanRequest(services: AppServices, workflowId: string, runId: string, requestId: string): Promise<HumanRequest> {
  const run = await requireRun(services, workflowId, runId);
  const requirement = run.pendingRequirements.find((candidate) => candidate.phase === 'ask' && candidate.stepId === requestId);
  if (!requirement) throw new NotFoundError('requirement', { name: `Human request '${requestId}'`, details: { requestId } });
  return toHumanRequest(run, requirement);
}

/** A stored human request (phase `ask` requirement) as the API shows it. */
export function toHumanRequest(run: Pick<RunRecord, 'id' | 'workflowDefinitionId'>, requirement: RequirementRecord): HumanRequest {
  return {
    requestId: requirement.stepId,
    runId: run.id,
    workflowId: run.workflowDefinitionId,
    nodeId: requirement.nodeId,
    iterationPath: requirement.iterationPath,
    prompt: requirement.prompt ?? requirement.userInputMessage ?? '',
    approvers: requirement.approvers ?? null,
    context: requirement.context ?? null,
    choices: requirement.availableChoices,
    ...askOutcomeOf(requirement),
    requestedAt: requirement.requestedAt.toISOString(),
    timeoutAt: requirement.timeoutAt?.toISOString() ?? null,
    decidedAt: requirement.decidedAt?.toISOString() ?? null,
  };
}

/** True for '' and for paths of valid segments ('3', '2/1', '3r1', 'r2'). */
function isIterationPath(path: string): boolean {
  return path === '' || path.split('/').every((segment) => parsePathSegment(segment) !== null);
}

/** 409 for a run that has ended: `details.currentStatus` is its status. */
function runEnded(run: RunRecord): ConflictError {
  return new ConflictError(`Run is ${run.status}; it can no longer ask anyone anything`, { currentStatus: run.status });
}
