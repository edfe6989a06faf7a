import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';
import { RunSummarySchema, getRun, id, toRunSummary } from '../shared.ts';

export const getRunTool = defineTool({
  name: 'get_run',
  title: 'Get a run',
  description:
    'Returns one run in detail: its summary (status, runState, active nodes, counts), its node runs (first 100, with status, attempt, ' +
    'error), the input and final output, the HITL gates and human requests it raised with their decisions and who decided each ' +
    '(`requirements[].decidedBy`, `decidedByUser`; `pendingRequirements` are the ones waiting for a person now), who started and who ' +
    'cancelled it (`triggeredBy`, `cancelledBy`), and its lineage (parentRunId). Use explain_run for a diagnosis of a blocked run.',
  kind: 'read',
  input: z.object({ runId: id('Run id') }),
  output: z.object({
    run: RunSummarySchema,
    initialInput: z.unknown(),
    finalOutput: z.unknown(),
    nodeRuns: z.array(z.record(z.string(), z.unknown())),
    pendingRequirements: z.array(z.record(z.string(), z.unknown())),
    requirements: z.array(z.record(z.string(), z.unknown())).describe('Every gate and human request, decided or not, as the API shows them (decidedByUser: who decided)'),
    triggeredBy: z.unknown().describe('Who started the run, as the API shows it (null when it does not say)'),
    cancelledBy: z.unknown().describe('Who or what cancelled the run (null when it was not cancelled)'),
    lineage: z.object({ parentRunId: z.string().nullable(), childrenUrl: z.string() }),
  }),
  async run(args, { api }) {
    const run = await getRun(api, args.runId);
    return {
      run: toRunSummary(run),
      initialInput: run.initialInput ?? null,
      finalOutput: run.finalOutput ?? null,
      nodeRuns: run.nodeRuns as unknown as Record<string, unknown>[],
      pendingRequirements: (run.pendingRequirements ?? []) as Record<string, unknown>[],
      requirements: run.requirements ?? [],
      triggeredBy: run['triggeredBy'] ?? null,
      cancelledBy: run['cancelledBy'] ?? null,
      lineage: { parentRunId: run.parentRunId, childrenUrl: `/api/v1/workflows/${run.workflowDefinitionId}/runs/${run.id}/children` },
    };
  },
});
