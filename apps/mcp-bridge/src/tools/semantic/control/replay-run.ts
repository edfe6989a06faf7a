import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { getRun, id } from '../../shared.ts';
import { ChildRunSchema, startChildRun } from './run-actions.ts';

export const replayRun = defineTool({
  name: 'replay_run',
  title: 'Replay a run',
  description:
    "Starts a new (child) run of the run's workflow from scratch with the same input, on the workflow's current definition: nothing " +
    'is reused and every gate is asked again (the source may still be running). Use it after changing the workflow, or to repeat a run ' +
    'exactly; use retry_run to reuse what completed. Returns the child run id (`runId`), `parentRunId` and the child run summary; it ' +
    'runs in the background.',
  kind: 'write',
  input: z.object({ runId: id('Run id of the source run') }),
  output: ChildRunSchema,
  async run(args, { api }) {
    return startChildRun(api, await getRun(api, args.runId), '/replay');
  },
});
