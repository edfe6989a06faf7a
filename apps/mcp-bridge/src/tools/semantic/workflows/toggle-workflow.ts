import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { WORKFLOWS, id } from '../../shared.ts';
import type { RestWorkflowDetail } from './definition.ts';

export const toggleWorkflow = defineTool({
  name: 'toggle_workflow',
  title: 'Enable or disable a workflow',
  description:
    'Enables (`enabled: true`) or disables (`enabled: false`) a workflow. Only enabled workflows can be run; disabling one does not ' +
    'stop runs already started. Setting the state it already has changes nothing. Returns the workflow id, name, enabled and version.',
  kind: 'write',
  input: z.object({ workflowId: id('Workflow id'), enabled: z.boolean().describe('true to enable, false to disable') }),
  output: z.object({ workflowId: z.string(), name: z.string(), enabled: z.boolean(), version: z.number().int() }),
  async run(args, { api }) {
    const workflow = await api.post<RestWorkflowDetail>(`${WORKFLOWS}/${args.workflowId}/toggle`, { enabled: args.enabled });
    return { workflowId: workflow.id, name: workflow.name, enabled: workflow.enabled, version: workflow.version };
  },
});
