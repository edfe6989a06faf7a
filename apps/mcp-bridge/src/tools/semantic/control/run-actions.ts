/**
 * What the run-control tools share: a run addressed by `runId` alone (its workflow is read from
 * `GET /api/v1/runs/{id}`), a directive (pause, resume, cancel) with the run summary after it, and
 * a child run (retry, node rerun, replay) with its summary.
 */
import * as z from 'zod/v4';
import type { ApiClient } from '../../../api-client.ts';
import { defineTool, type Tool } from '../../../tool.ts';
import { RunSummarySchema, getRun, id, runPath, toRunSummary, type RestRun } from '../../shared.ts';

export type Directive = 'pause' | 'resume' | 'cancel';

/** What pause_run, resume_run and cancel_run return. */
export const DirectiveResultSchema = z.object({
  runId: z.string(),
  directive: z.enum(['pause', 'resume', 'cancel']),
  status: z.string().describe('The run status the API answered with'),
  message: z.string().describe('What happened, or what will happen once the executing nodes finish'),
  changed: z.boolean().describe('False when the directive already held (e.g. pausing a paused run): nothing was done'),
  pendingDirective: z.string().nullable().describe('A directive the run has yet to honour (it is still running until its executing nodes finish)'),
  stepsCompleted: z.number().int().describe('Step node runs of the run completed so far'),
  run: RunSummarySchema.describe('The run after the directive'),
});
export type DirectiveResult = z.infer<typeof DirectiveResultSchema>;

/** Sends `directive` to the run `runId` (409 -> CONFLICT when its status does not allow it). */
export async function applyDirective(api: ApiClient, runId: string, directive: Directive, body?: Record<string, unknown>): Promise<DirectiveResult> {
  const source = await getRun(api, runId);
  const answer = await api.post<{ status: string; message: string; changed: boolean; pendingDirective: string | null; stepsCompleted: number }>(
    runPath(source.workflowDefinitionId, runId, `/${directive}`),
    body,
  );
  const after = await getRun(api, runId);
  return {
    runId,
    directive,
    status: answer.status,
    message: answer.message,
    changed: answer.changed,
    pendingDirective: answer.pendingDirective,
    stepsCompleted: answer.stepsCompleted,
    run: toRunSummary(after),
  };
}

/** A tool sending a directive that takes no body (pause_run, resume_run) to the run `runId`. */
export function defineBareDirective(directive: 'pause' | 'resume', meta: Pick<Tool, 'name' | 'title' | 'description' | 'kind'>) {
  return defineTool({ ...meta, input: z.object({ runId: id('Run id') }), output: DirectiveResultSchema, run: (args, { api }) => applyDirective(api, args.runId, directive) });
}

/** What retry_run, rerun_node and replay_run return. */
export const ChildRunSchema = z.object({
  runId: z.string().describe('The new (child) run'),
  parentRunId: z.string().describe('The run it was started from'),
  triggerSource: z.string().describe('retry | node_rerun | replay'),
  message: z.string(),
  run: RunSummarySchema.describe('The child run as it starts (it runs in the background: follow it with get_run or watch_run)'),
});
export type ChildRun = z.infer<typeof ChildRunSchema>;

/** Starts a child run of `source` with `POST .../runs/{id}<suffix>` and reads its summary. */
export async function startChildRun(api: ApiClient, source: RestRun, suffix: string, body?: Record<string, unknown>): Promise<ChildRun> {
  const answer = await api.post<{ runId: string; parentRunId: string; triggerSource: string; message: string }>(runPath(source.workflowDefinitionId, source.id, suffix), body);
  return {
    runId: answer.runId,
    parentRunId: answer.parentRunId,
    triggerSource: answer.triggerSource,
    message: answer.message,
    run: toRunSummary(await getRun(api, answer.runId)),
  };
}
