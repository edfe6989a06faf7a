import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';
import { getRun, id, runPath } from '../shared.ts';
import { watchRun } from '../watch.ts';

/** How long to wait for a cancel that another instance of the API carries out (its owner's next heartbeat). */
const CANCEL_WAIT_MS = 10_000;

/** The API's answer to a directive. */
interface DirectiveAnswer {
  runId: string;
  status: string;
  message: string;
  pendingDirective: string | null;
  changed: boolean;
  stepsCompleted: number;
}

export const orchestratorCancelWorkflow = defineTool({
  name: 'cancel_workflow',
  title: 'Cancel a workflow execution',
  description:
    'Cancels a workflow execution (`workflow_id`: the id run_workflow returned) that has not ended: executing steps are aborted, ' +
    'nothing more runs, pending human decisions are closed; `reason` is recorded. Cannot be undone. Cancelling a cancelled ' +
    'execution changes nothing; one that already finished (completed or failed) is a CONFLICT error with `details.currentStatus`. ' +
    'Returns `status` (cancelled; cancelling while another API instance carries it out) and `steps_completed` before the cancel.',
  kind: 'irreversible',
  input: z.object({
    workflow_id: id('ID of the workflow execution to cancel (the run id)'),
    reason: z.string().max(2000).optional().describe('Reason for cancellation'),
  }),
  output: z.object({
    status: z.enum(['cancelled', 'cancelling']).describe('cancelled; cancelling: accepted, the API instance executing it stops it within seconds. Failures ("error") come back as the error envelope'),
    steps_completed: z.number().int().describe('Steps completed before the cancel'),
    message: z.string().describe('What the API did'),
  }),
  async run(args, context) {
    const { api } = context;
    const run = await getRun(api, args.workflow_id);
    const path = runPath(run.workflowDefinitionId, run.id, '/cancel');
    let answer = await api.post<DirectiveAnswer>(path, args.reason === undefined ? {} : { reason: args.reason });
    if (answer.status !== 'cancelled') {
      const watched = await watchRun(context, run.id, { intervalMs: 200, timeoutMs: CANCEL_WAIT_MS });
      // Asked again once it ended: a no-op that reports the final status and count (a CONFLICT if it ended otherwise).
      if (watched.reachedTerminal) answer = await api.post<DirectiveAnswer>(path, {});
    }
    return { status: answer.status === 'cancelled' ? ('cancelled' as const) : ('cancelling' as const), steps_completed: answer.stepsCompleted, message: answer.message };
  },
});
