import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';
import { WORKFLOWS, type RestWorkflowSummary } from '../shared.ts';

const WorkflowItem = z.object({
  workflowId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  version: z.number().int(),
  numNodes: z.number().int(),
  tags: z.array(z.string()),
  runningCount: z.number().int().optional().describe('Runs not ended (with includeRunning)'),
  updatedAt: z.string(),
});

export const listWorkflows = defineTool({
  name: 'list_workflows',
  title: 'List workflows',
  description:
    'Lists workflow definitions, newest first. Call it to find a workflow to run or inspect: `search` matches name and description, ' +
    '`enabled` filters on whether it can be run, `tag` on a tag, `includeRunning` adds how many runs of each have not ended. Returns ' +
    '`workflows` (id, name, enabled, version, numNodes, tags) and paging info; use get_workflow for the node tree.',
  kind: 'read',
  input: z.object({
    search: z.string().max(200).optional().describe('Text to find in name or description (case-insensitive)'),
    enabled: z.boolean().optional().describe('Only enabled (true) or disabled (false) workflows'),
    tag: z.string().max(50).optional().describe('Only workflows with this tag'),
    includeRunning: z.boolean().optional().describe('Add runningCount to each workflow'),
    page: z.number().int().min(1).optional(),
    limit: z.number().int().min(1).max(100).optional().describe('Workflows per page (default 20)'),
  }),
  output: z.object({
    workflows: z.array(WorkflowItem),
    page: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  }),
  async run(args, { api }) {
    const answer = await api.get<{ workflows: RestWorkflowSummary[]; pagination: { page: number; total: number; totalPages: number } }>(WORKFLOWS, {
      query: args.search,
      enabled: args.enabled,
      tag: args.tag,
      includeRunning: args.includeRunning,
      page: args.page,
      perPage: args.limit ?? 20,
    });
    return {
      workflows: answer.workflows.map((w) => ({
        workflowId: w.id,
        name: w.name,
        description: w.description,
        enabled: w.enabled,
        version: w.version,
        numNodes: w.numNodes,
        tags: w.tags ?? [],
        ...(w.runningCount === undefined ? {} : { runningCount: w.runningCount }),
        updatedAt: w.updatedAt,
      })),
      page: answer.pagination.page,
      total: answer.pagination.total,
      totalPages: answer.pagination.totalPages,
    };
  },
});
