/**
 * The orchestrator's run_workflow (orchestrator-mcp-tools.md): starts a run and waits for it.
 *
 * `workflow_id` in the output is the id of this execution — the run id — as the spec defines it
 * ("Unique identifier for this execution") and as cancel_workflow takes it ("ID of the workflow
 * execution to cancel"); it is not the id of the workflow definition. A dry run executes nothing:
 * its `workflow_id` is null.
 *
 * `timeout` (seconds) becomes the trigger's `timeoutSeconds`: the API stops the run (failed) when
 * it has not ended by then, and the tool waits that long plus {@link DEADLINE_GRACE_MS} to see the
 * stop. Without `timeout` the run has no deadline and the tool waits {@link DEFAULT_WAIT_MS}; a run
 * still going then is reported as it stands (see outcome.ts for `status` and "partial").
 */
import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';
import { WORKFLOWS } from '../shared.ts';
import { watchRun } from '../watch.ts';
import { STATUSES, StepResultSchema, errorMessageOf, outcomeOf, secondsBetween, stepNodeIds, stepsOf } from './outcome.ts';
import { resolveWorkflowRef } from './workflow-ref.ts';
import { checkRunInput, invalidRunInput } from '../run-input.ts';

/** How long the tool waits without `timeout`: under the 60 s request timeout MCP clients default to. */
const DEFAULT_WAIT_MS = 50_000;
/** Waiting past the run's deadline: the API stops a timed-out run within one sweep (1 s by default). */
const DEADLINE_GRACE_MS = 5_000;
/** Polling interval: short waits poll often, long ones every second. */
const intervalFor = (waitMs: number) => (waitMs > 60_000 ? 1_000 : 250);

export const orchestratorRunWorkflow = defineTool({
  name: 'run_workflow',
  title: 'Run a workflow',
  description:
    'Executes a workflow (`workflow_name`: its exact name, or the `workflow_path` from list_workflows / create_workflow) with ' +
    '`parameters` as its input, and waits for it: up to `timeout` seconds (the run is stopped when it has not ended by then), else ' +
    'up to 50 s. Returns `status` (success: completed; failed: a step failed, or nothing completed; partial: some steps completed ' +
    'but the run was cancelled, timed out, or is still going — e.g. waiting for a human decision), `workflow_id` (the id of this ' +
    'execution, for cancel_workflow), `steps_completed`/`steps_total`, `step_results`, `execution_time` (s) and `error_message`. ' +
    '`dry_run: true` only checks that the run could start. When the workflow declares inputs (its `inputSchema`), `parameters` ' +
    'are checked against it before anything starts: a mismatch is INVALID_INPUT naming each field (`details.fields`, e.g. ' +
    '`parameters.customerEmail`) with the schema to follow in `details.inputSchema`. Steps call external tools and agents.',
  kind: 'launch',
  input: z.object({
    workflow_name: z.string().min(1).max(2000).describe('Exact workflow name, or its workflow_path'),
    parameters: z.record(z.string(), z.unknown()).optional().describe("Input of the run (the workflow reads it as `input`); must match the workflow's inputSchema when it declares one"),
    dry_run: z.boolean().optional().describe('Validate without executing'),
    timeout: z.number().int().min(1).max(2_592_000).optional().describe('Overall timeout, seconds: the run is stopped when it has not ended by then; also how long this call waits'),
    parallel_limit: z.number().int().min(1).max(1000).optional().describe('Max concurrent steps of a parallel node'),
  }),
  output: z.object({
    status: z.enum(STATUSES).describe('success | failed | partial (see the description)'),
    workflow_id: z.string().nullable().describe('Id of this execution (the run id; null for a dry run)'),
    steps_completed: z.number().int(),
    steps_total: z.number().int(),
    step_results: z.array(StepResultSchema),
    execution_time: z.number().describe('Seconds from the start to the end of the run (to now when it has not ended)'),
    error_message: z.string().nullable().describe('Why it failed or is partial; null on success'),
  }),
  async run(args, context) {
    const { api } = context;
    const workflowId = await resolveWorkflowRef(api, args.workflow_name);
    const body = {
      initialInput: args.parameters ?? {},
      triggerSource: 'mcp',
      ...(args.dry_run ? { dryRun: true } : {}),
      ...(args.timeout === undefined ? {} : { timeoutSeconds: args.timeout }),
      ...(args.parallel_limit === undefined ? {} : { parallelLimit: args.parallel_limit }),
    };
    // Declared inputs are checked here, before any trigger: a dry run reports the problems, a run is refused.
    const { workflow, problems } = await checkRunInput(api, workflowId, body.initialInput);
    if (problems.length > 0 && !args.dry_run) throw invalidRunInput('parameters', problems, workflow);
    if (args.dry_run) {
      const checked = problems.length > 0 ? { valid: false, problems } : await api.post<{ valid: boolean; problems: string[] }>(`${WORKFLOWS}/${workflowId}/runs`, body);
      return {
        status: checked.valid ? ('success' as const) : ('failed' as const),
        workflow_id: null,
        steps_completed: 0,
        steps_total: stepNodeIds(workflow.nodes).length,
        step_results: [],
        execution_time: 0,
        error_message: checked.valid ? null : `The run could not start: ${checked.problems.join('; ')}`,
      };
    }
    const started = await api.post<{ runId: string }>(`${WORKFLOWS}/${workflowId}/runs`, body);
    const waitMs = args.timeout === undefined ? DEFAULT_WAIT_MS : args.timeout * 1000 + DEADLINE_GRACE_MS;
    const { last: run } = await watchRun(context, started.runId, { intervalMs: intervalFor(waitMs), timeoutMs: waitMs });
    const now = context.now();
    const steps = await stepsOf(api, run, now);
    const status = outcomeOf(run, steps.steps_completed);
    return {
      status,
      workflow_id: run.id,
      ...steps,
      execution_time: secondsBetween(run.startedAt, run.finishedAt, now),
      error_message: errorMessageOf(run, status, Math.round(waitMs / 1000)),
    };
  },
});
