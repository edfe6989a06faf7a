import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { id } from '../../shared.ts';
import { DirectiveResultSchema, applyDirective } from './run-actions.ts';

export const cancelRun = defineTool({
  name: 'cancel_run',
  title: 'Cancel a run',
  description:
    'Cancels a run that has not ended, for good: executing steps are aborted, undecided gates are closed, and the run ends `cancelled` ' +
    'with `reason` recorded in its errorSummary. Cancelling a cancelled run changes nothing (`changed: false`); a completed or failed ' +
    'run is CONFLICT. To run it again later, use retry_run. Returns the API answer (status, message, changed, pendingDirective, ' +
    'stepsCompleted) and the run summary.',
  kind: 'irreversible',
  input: z.object({
    runId: id('Run id'),
    reason: z.string().min(1).max(2000).optional().describe('Why it is cancelled (stored on the run)'),
  }),
  output: DirectiveResultSchema,
  run: (args, { api }) => applyDirective(api, args.runId, 'cancel', args.reason === undefined ? {} : { reason: args.reason }),
});
