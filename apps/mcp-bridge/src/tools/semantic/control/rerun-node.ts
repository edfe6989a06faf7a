import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { getRun, id } from '../../shared.ts';
import { IterationArg } from './approvals.ts';
import { ChildRunSchema, startChildRun } from './run-actions.ts';

export const rerunNode = defineTool({
  name: 'rerun_node',
  title: 'Rerun one node',
  description:
    'Executes one node of an ended run again in a new (child) run: everything before it is reused from the source run (recorded ' +
    'decisions included), the node runs afresh (its own gates are asked again), and the child run ends right after it with the ' +
    "node's output as finalOutput. Use it to retry or check a single step. The node may be nested (parallel, condition, router, loop); " +
    "inside a loop `iteration` picks which one (a number for the innermost loop, or a path such as '2/1'; default the last). Unknown " +
    'node: NODE_NOT_FOUND. Returns the child run id (`runId`), `parentRunId` and the child run summary; it runs in the background.',
  kind: 'write',
  input: z.object({
    runId: id('Run id of the ended source run'),
    nodeId: z.string().min(1).describe('The node to execute again'),
    iteration: IterationArg.optional(),
  }),
  output: ChildRunSchema,
  async run(args, { api }) {
    const source = await getRun(api, args.runId);
    // 0 and '' mean outside loops: no iteration to pick.
    const iterationPath = args.iteration === undefined || args.iteration === 0 || args.iteration === '' ? undefined : String(args.iteration);
    return startChildRun(api, source, `/nodes/${encodeURIComponent(args.nodeId)}/rerun`, iterationPath === undefined ? {} : { iterationPath });
  },
});
