import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { RUNS, WORKFLOWS, id } from '../../shared.ts';
import type { RestWorkflowDetail } from './definition.ts';

export const deleteWorkflow = defineTool({
  name: 'delete_workflow',
  title: 'Delete a workflow',
  description:
    'Deletes a workflow for good, with all its runs, node runs and run events. Cannot be undone: pass `confirm: true` only when the ' +
    'user asked for it (to keep a workflow but stop it from running, use toggle_workflow). Returns the id and name of the deleted ' +
    'workflow and how many runs went with it.',
  kind: 'irreversible',
  input: z.object({
    workflowId: id('Workflow id'),
    confirm: z.literal(true, { error: 'must be true to delete the workflow with all its runs' }).describe('Must be true'),
  }),
  output: z.object({
    workflowId: z.string(),
    name: z.string(),
    deleted: z.literal(true),
    runsDeleted: z.number().int().describe('Runs the workflow had when it was deleted'),
  }),
  async run(args, { api }) {
    const workflow = await api.get<RestWorkflowDetail>(`${WORKFLOWS}/${args.workflowId}`);
    const runs = await api.get<{ pagination: { total: number } }>(RUNS, { workflowId: args.workflowId, perPage: 1 });
    await api.delete(`${WORKFLOWS}/${args.workflowId}`);
    return { workflowId: workflow.id, name: workflow.name, deleted: true as const, runsDeleted: runs.pagination.total };
  },
});
