import * as z from 'zod/v4';
import { ToolError } from '../../envelope.ts';
import { defineTool } from '../../tool.ts';
import { RunSummarySchema, WORKFLOWS, getRun, id, resolveWorkflowId, toRunSummary } from '../shared.ts';
import { StateChangeSchema, watchRun } from '../watch.ts';
import { checkRunInput, invalidRunInput } from '../run-input.ts';

export const runWorkflow = defineTool({
  name: 'run_workflow',
  title: 'Run a workflow',
  description:
    'Starts a run of an enabled workflow (by `workflowId` or exact `workflowName`) with `input` (`prompt` is a shorthand that sets ' +
    'input.prompt). By default it returns at once with the run id and state; with `waitForTerminal: true` it waits up to `timeoutMs` ' +
    '(default 30 s) for the run to end (or to stop at a human gate: then call list_pending_approvals / resolve_approval). `dryRun: true` ' +
    'only checks that the run could start. When the workflow declares inputs (`inputSchema`, shown by get_workflow), `input` is ' +
    'checked against it first: a mismatch is INVALID_INPUT naming each field (`details.fields`, with the schema in ' +
    '`details.inputSchema`) and nothing starts; its defaults are applied. `idempotencyKey` makes retries of this call start the run at most once. Steps call ' +
    'external tools and agents.',
  kind: 'launch',
  input: z.object({
    workflowId: id('Workflow id').optional(),
    workflowName: z.string().min(1).optional(),
    input: z.record(z.string(), z.unknown()).optional().describe("The run input (initialInput); must match the workflow's inputSchema when it declares one (get_workflow shows it)"),
    prompt: z.string().optional().describe('Shorthand: sets input.prompt'),
    dryRun: z.boolean().optional(),
    timeoutSeconds: z.number().int().min(1).max(2_592_000).optional().describe('The run is stopped (failed) if it has not ended by then'),
    parallelLimit: z.number().int().min(1).max(1000).optional().describe('Most children of a parallel node in flight at once'),
    idempotencyKey: z.string().min(1).max(255).optional(),
    waitForTerminal: z.boolean().optional(),
    timeoutMs: z.number().int().min(0).max(600_000).optional().describe('How long to wait with waitForTerminal (default 30000)'),
  }),
  output: z.object({
    runId: z.string().nullable().describe('Null for a dry run'),
    workflowId: z.string(),
    dryRun: z.boolean(),
    valid: z.boolean().optional().describe('Dry run: whether the run could start'),
    problems: z.array(z.string()).optional(),
    run: RunSummarySchema.optional(),
    waited: z.boolean(),
    reachedTerminal: z.boolean().optional(),
    timedOut: z.boolean().optional(),
    finalOutput: z.unknown().optional(),
    changes: z.array(StateChangeSchema).optional(),
  }),
  async run(args, context) {
    const { api } = context;
    const workflowId = await resolveWorkflowId(api, args);
    if (args.prompt !== undefined && args.input && 'prompt' in args.input) {
      throw new ToolError('INVALID_INPUT', 'Give prompt or input.prompt, not both', { fields: ['prompt', 'input.prompt'] });
    }
    const initialInput = { ...(args.input ?? {}), ...(args.prompt === undefined ? {} : { prompt: args.prompt }) };
    const body = {
      initialInput,
      triggerSource: 'mcp',
      ...(args.dryRun ? { dryRun: true } : {}),
      ...(args.timeoutSeconds === undefined ? {} : { timeoutSeconds: args.timeoutSeconds }),
      ...(args.parallelLimit === undefined ? {} : { parallelLimit: args.parallelLimit }),
    };
    const headers = args.idempotencyKey ? { 'idempotency-key': args.idempotencyKey } : undefined;
    // Declared inputs are checked here, before any trigger: a dry run reports the problems, a run is refused.
    const checkedInput = await checkRunInput(api, workflowId, initialInput);
    if (checkedInput.problems.length > 0) {
      if (args.dryRun) return { runId: null, workflowId, dryRun: true, valid: false, problems: checkedInput.problems, waited: false };
      throw invalidRunInput('input', checkedInput.problems, checkedInput.workflow);
    }
    if (args.dryRun) {
      const checked = await api.post<{ valid: boolean; problems: string[] }>(`${WORKFLOWS}/${workflowId}/runs`, body, headers);
      return { runId: null, workflowId, dryRun: true, valid: checked.valid, problems: checked.problems, waited: false };
    }
    const started = await api.post<{ runId: string }>(`${WORKFLOWS}/${workflowId}/runs`, body, headers);
    if (!args.waitForTerminal) {
      return { runId: started.runId, workflowId, dryRun: false, run: toRunSummary(await getRun(api, started.runId)), waited: false };
    }
    // Waiting ends at the run's end, or when it parks at a human gate (nobody else will decide it while we wait).
    const watched = await watchRun(context, started.runId, { intervalMs: 250, timeoutMs: args.timeoutMs ?? 30_000, until: (run) => run.status === 'awaiting_approval' || run.status === 'paused' });
    return {
      runId: started.runId,
      workflowId,
      dryRun: false,
      run: watched.finalRun,
      waited: true,
      reachedTerminal: watched.reachedTerminal,
      timedOut: watched.timedOut,
      finalOutput: watched.last.finalOutput ?? null,
      changes: watched.changes,
    };
  },
});
