/**
 * Checks that save and start nothing (issue "Run control" item 9): a definition body as at
 * create time (`POST /api/v1/workflows/validate`), and a trigger (`dryRun: true`). Problems are
 * collected, not thrown: the answer is 200 `{ valid, problems }` either way.
 */
import {
  InvalidRequestError,
  MAX_USER_JSON_DEPTH,
  SwitchyardError,
  jsonDepth,
  normalizeCanvas,
  normalizeDefinition,
  normalizeTriggers,
  type DryRunResponse,
  type TriggerRunBody,
  type ValidationResult,
  type WorkflowCreateBody,
} from '@switchyard/domain';
import type { AppServices } from './app-services.ts';
import { checkDependencies } from './run-service.ts';
import { WORKFLOW_DISABLED_MESSAGE, checkedInputSchema, checkedRunInput, requireWorkflow } from './workflow-service.ts';

/** The problems `check` reports by throwing a 400 (its `problems`, else its message); other errors propagate. */
async function problemsOf(check: () => unknown): Promise<string[]> {
  try {
    await check();
    return [];
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    return (error as SwitchyardError).problems ?? [error.message];
  }
}

/** Validates a create body's nodes, canvas, inputSchema and triggers exactly as creating it would (the name's uniqueness is not checked). */
export async function validateDefinition(services: AppServices, body: WorkflowCreateBody): Promise<ValidationResult> {
  const problems = [
    ...(await problemsOf(() => normalizeCanvas(body.canvas))),
    ...(await problemsOf(() => normalizeDefinition(body.nodes, services.checks))),
    ...(await problemsOf(() => checkedInputSchema(body.inputSchema ?? null))),
    ...(await problemsOf(() => normalizeTriggers(body.triggers, services.checks))),
  ];
  return { valid: problems.length === 0, problems };
}

/**
 * Checks a trigger of `workflowId` without starting a run: the workflow is enabled, its stored
 * definition still passes the save-time checks (e.g. its executors are still registered), the
 * input nests at most MAX_USER_JSON_DEPTH levels and matches the declared inputs (`inputSchema`),
 * and `parentRunId`/`resolvedDependencies` fit.
 * 404 when the workflow does not exist.
 */
export async function dryRunTrigger(services: AppServices, workflowId: string, body: TriggerRunBody): Promise<DryRunResponse> {
  const workflow = await requireWorkflow(services, workflowId);
  const problems: string[] = [];
  if (!workflow.enabled) problems.push(WORKFLOW_DISABLED_MESSAGE);
  if (jsonDepth(body.initialInput ?? {}) > MAX_USER_JSON_DEPTH) problems.push(`initialInput nests deeper than ${MAX_USER_JSON_DEPTH} levels`);
  else problems.push(...(await problemsOf(() => checkedRunInput(workflow, (body.initialInput ?? {}) as Record<string, unknown>))));
  problems.push(...(await problemsOf(() => normalizeDefinition(workflow.nodes, services.checks))));
  problems.push(...(await problemsOf(() => checkDependencies(services, workflowId, body))));
  return { valid: problems.length === 0, problems, dryRun: true, workflowId, workflowVersion: workflow.version };
}
