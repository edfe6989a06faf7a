/**
 * Recording a HITL decision, the same way for a person (/approve) and for the timeout sweeper
 * (DESIGN.md "HITL v2"): one compare-and-set on the undecided requirement, then a
 * `requirement.decided` run event is written — best effort, since the decision is stored — then
 * the run is woken. A human request (phase `ask`) wakes nothing: no traversal consumes its
 * decision (the agent that asked polls the request), so the run is left as it is.
 */
import type { Decision, RequirementRecord, RunRecord } from '@switchyard/domain';
import type { DecidedRun, Repositories } from '@switchyard/store';
import type { Logger } from './logger.ts';
import { appendReported } from './recorded-events.ts';

export interface DecisionDeps {
  repos: Repositories;
  /** Continues the run (the engine's `start`). */
  wake: (runId: string) => unknown;
  logger?: Logger;
}

/**
 * Decides `requirement` of `run`. Returns what the decision read back of the run (`DecidedRun`), or null when the CAS lost
 * (the requirement was decided meanwhile, or the run can no longer be decided). `expiredAt`
 * restricts it to a requirement whose timeout has passed by then (the sweeper).
 */
export async function recordDecision(
  deps: DecisionDeps,
  run: Pick<RunRecord, 'id' | 'workflowDefinitionId'>,
  requirement: RequirementRecord,
  decision: Decision,
  now: Date,
  expiredAt?: Date,
): Promise<DecidedRun | null> {
  const wakes = requirement.phase !== 'ask';
  const decided = await deps.repos.runs.decideRequirement(run.id, requirement.gateKey, decision, now, expiredAt, wakes);
  if (!decided) return null;
  // The event goes first, so that it precedes what the continued run writes (its final event last).
  const payload = { stepId: requirement.stepId, nodeId: requirement.nodeId, resolution: decision.resolution, decidedBy: decision.decidedBy };
  await appendReported(deps, run, [{ type: 'requirement.decided', payload }], now);
  if (wakes) deps.wake(run.id);
  return decided;
}
