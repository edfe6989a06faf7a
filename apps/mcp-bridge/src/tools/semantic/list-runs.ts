import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';
import { RUNS, RunSummarySchema, id, resolveWorkflowId, toRunSummary, type RestRun } from '../shared.ts';

export const listRuns = defineTool({
  name: 'list_runs',
  title: 'List runs',
  description:
    'Lists runs newest first, across workflows or of one (`workflowId` or `workflowName`), optionally by `status` (pending, running, ' +
    'paused, awaiting_approval, completed, failed, cancelled). Each item is a run summary: status, runState (what it is doing right ' +
    'now, e.g. waiting-approval with the blocking node), active nodes, pending approval count and node counts by status.',
  kind: 'read',
  input: z.object({
    workflowId: id('Workflow id').optional(),
    workflowName: z.string().min(1).optional(),
    status: z.enum(['pending', 'running', 'paused', 'awaiting_approval', 'completed', 'failed', 'cancelled']).optional(),
    limit: z.number().int().min(1).max(200).optional().describe('Runs to return (default 20)'),
    page: z.number().int().min(1).optional(),
  }),
  output: z.object({ runs: z.array(RunSummarySchema), total: z.number().int() }),
  async run(args, { api }) {
    const workflowId = args.workflowId || args.workflowName ? await resolveWorkflowId(api, args) : undefined;
    const limit = args.limit ?? 20;
    // The API pages by at most 100: a larger limit reads two pages.
    const perPage = Math.min(limit, 100);
    const pagesPerCall = Math.ceil(limit / perPage);
    const runs: RestRun[] = [];
    let total = 0;
    for (let i = 0, page = ((args.page ?? 1) - 1) * pagesPerCall + 1; i < pagesPerCall; i++, page++) {
      const answer = await api.get<{ runs: RestRun[]; pagination: { total: number; totalPages: number } }>(RUNS, { workflowId, status: args.status, page, perPage, includeNodeRuns: false });
      runs.push(...answer.runs);
      total = answer.pagination.total;
      if (page >= answer.pagination.totalPages) break;
    }
    return { runs: runs.slice(0, limit).map((run) => toRunSummary(run)), total };
  },
});
