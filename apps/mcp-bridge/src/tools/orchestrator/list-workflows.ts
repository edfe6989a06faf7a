import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';
import { WORKFLOWS, type RestWorkflowSummary } from '../shared.ts';
import { workflowPath } from './workflow-ref.ts';

/** Pages read at most (100 workflows each). */
const MAX_PAGES = 20;

const WorkflowItem = z.object({
  name: z.string(),
  workflow_path: z.string().describe('The workflow API URL (run_workflow takes it as workflow_name too)'),
  id: z.string().describe('Id of the workflow definition'),
  description: z.string().nullable(),
  tags: z.array(z.string()).describe('Categories'),
  enabled: z.boolean().describe('Only enabled workflows can be run'),
  version: z.number().int(),
  num_nodes: z.number().int(),
  updated_at: z.string(),
  running_count: z.number().int().optional().describe('With include_running: its runs that have not ended'),
});

export const orchestratorListWorkflows = defineTool({
  name: 'list_workflows',
  title: 'List workflows',
  description:
    'Lists all workflow definitions (newest first, at most 2000) with their metadata: name, workflow_path, description, tags ' +
    '(categories), enabled, version. `category` keeps those tagged with it; `include_running: true` adds to each workflow how ' +
    'many of its runs have not ended. `running_count` is the number of runs not ended (pending, running, paused, waiting for ' +
    'a human) of the workflows listed. An empty list when there are none.',
  kind: 'read',
  input: z.object({
    category: z.string().min(1).max(50).optional().describe('Only workflows tagged with this category (exact)'),
    include_running: z.boolean().optional().describe('Add running_count to each workflow'),
  }),
  output: z.object({
    workflows: z.array(WorkflowItem),
    running_count: z.number().int().describe('Runs not ended of the workflows listed'),
  }),
  async run(args, { api }) {
    const rows: RestWorkflowSummary[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const answer = await api.get<{ workflows: RestWorkflowSummary[]; pagination: { totalPages: number } }>(WORKFLOWS, {
        tag: args.category,
        includeRunning: true,
        page,
        perPage: 100,
      });
      rows.push(...answer.workflows);
      if (page >= answer.pagination.totalPages) break;
    }
    return {
      workflows: rows.map((w) => ({
        name: w.name,
        workflow_path: workflowPath(api, w.id),
        id: w.id,
        description: w.description,
        tags: w.tags ?? [],
        enabled: w.enabled,
        version: w.version,
        num_nodes: w.numNodes,
        updated_at: w.updatedAt,
        ...(args.include_running ? { running_count: w.runningCount ?? 0 } : {}),
      })),
      running_count: rows.reduce((sum, w) => sum + (w.runningCount ?? 0), 0),
    };
  },
});
