/**
 * Resolving HITL requirements (spec endpoint 10, "/approve (HITL resolution)"; DESIGN.md
 * "HITL v2"). One compare-and-set records the decision; the run then continues by itself.
 *
 * Status codes (documented in docs/guide/hitl.md and docs/reference/http-api.md):
 * - 404: the workflow or run does not exist, or the run never had a requirement for `stepId`;
 * - 409: the run has ended, or the requirement is already decided — whether the other decision
 *   came long before or a moment before (a lost race). Every loser allowed to decide the gate gets
 *   409, so a client can refetch the run to show the winning decision; one who may not gets its 403;
 * - 409 `document_too_large`: the store refuses the decision because the run document would grow
 *   over 16 MiB (nothing is recorded; a smaller decision may fit);
 * - 400: the resolution does not fit the requirement, or its payload is missing, invalid, or over
 *   its byte limit (`editedOutput`, `userInput`, `feedback`: domain run-bounds.ts, `details.field`).
 */
import {
  ConflictError,
  DEFAULT_RUN_BOUNDS,
  DocumentTooLargeConflictError,
  NotFoundError,
  checkDecisionSize,
  isTerminalRunStatus,
  validateDecision,
  type ApproveBody,
  type RequirementRecord,
  type RunRecord,
} from '@switchyard/domain';
import { recordDecision } from '@switchyard/runner';
import { isDocumentTooLarge, type DecidedRun } from '@switchyard/store';
import type { AppServices } from './app-services.ts';
import { decisionRefusal, type Decider } from '../access/decision-guard.ts';
import { runOrNotFound } from './workflow-service.ts';

/** What the decision read back of the run (its status after it), and the requirement it applied to. */
export interface ResolvedRequirement {
  run: DecidedRun;
  requirement: RequirementRecord;
}

/**
 * Records one decision, made by `decider` (its actor stored as the requirement's
 * `decidedByUser`), and wakes the run (unless it decides a human request, which no traversal
 * consumes). Throws 400/404/409 as described above, and 403 when `decider` may not decide the
 * gate (access/decision-guard.ts: approvers, role, four-eyes) — checked before anything is written,
 * so a refused caller never changes the gate. Reads only the run's status and the gate decided (a
 * projection), before and, for a lost race, after the compare-and-set; the run's other gates
 * only when `stepId` has no undecided one (to tell 404 from 409, mapping only the step's latest).
 */
export async function resolveRequirement(services: AppServices, workflowId: string, runId: string, body: ApproveBody, decider: Decider): Promise<ResolvedRequirement> {
  const { run, gate: requirement } = await runOrNotFound(services, workflowId, await services.repos.runs.gateOf(runId, { stepId: body.stepId }, workflowId));
  if (isTerminalRunStatus(run.status)) throw runEnded(run);
  if (!requirement) {
    const latest = (await services.repos.runs.latestGateOf(run.id, body.stepId))?.gate;
    if (!latest) throw new NotFoundError('requirement', { name: `Requirement for step '${body.stepId}'`, details: { stepId: body.stepId } });
    // A caller who may not decide the gate hears so (403) whether or not someone decided it first.
    throw decisionRefusal(decider, run, latest) ?? alreadyDecided(latest);
  }
  const refusal = decisionRefusal(decider, run, requirement);
  if (refusal) throw refusal;
  checkDecisionSize(requirement, body, (services.runBounds ?? DEFAULT_RUN_BOUNDS).maxDecisionBytes);
  const decision = { ...validateDecision(requirement, body), decidedByUser: decider.actor };
  const now = services.clock.now();
  let decided: DecidedRun | null;
  try {
    decided = await recordDecision({ repos: services.repos, wake: (id) => services.engine.start(id), logger: services.logger }, run, requirement, decision, now);
  } catch (error) {
    if (!isDocumentTooLarge(error)) throw error;
    throw new DocumentTooLargeConflictError(
      `The decision does not fit in the run document (the store refuses documents over 16 MiB); nothing was recorded and step '${body.stepId}' is still undecided: ` +
        'decide it with a smaller value (e.g. confirm without editedOutput)',
      { cause: error, details: { stepId: body.stepId } },
    );
  }
  if (!decided) {
    const current = await services.repos.runs.gateOf(run.id, { gateKey: requirement.gateKey });
    if (current && isTerminalRunStatus(current.run.status)) throw runEnded(current.run);
    throw current?.gate ? alreadyDecided(current.gate) : new ConflictError(`Requirement for step '${body.stepId}' could not be decided`, { stepId: body.stepId });
  }
  return { run: decided, requirement };
}

/** 409 for a run that has ended: `details.currentStatus` is its status. */
function runEnded(run: Pick<RunRecord, 'status'>): ConflictError {
  return new ConflictError(`Run is ${run.status}; its requirements can no longer be decided`, { currentStatus: run.status });
}

/** 409 for a requirement decided before: `details` say how. */
function alreadyDecided(requirement: RequirementRecord): ConflictError {
  const how = requirement.resolution ? ` (${requirement.resolution}${requirement.decidedBy === 'timeout' ? ', by timeout' : ''})` : '';
  return new ConflictError(`Requirement for step '${requirement.stepId}' is already decided${how}`, {
    stepId: requirement.stepId,
    resolution: requirement.resolution,
    decidedBy: requirement.decidedBy,
  });
}
