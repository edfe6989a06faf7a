import * as z from 'zod/v4';
import { defineTool } from '../../tool.ts';
import { WORKFLOWS, id, resolveWorkflowId } from '../shared.ts';

export const getWorkflow = defineTool({
  name: 'get_workflow',
  title: 'Get a workflow',
  description:
    'Returns one workflow definition with its whole node tree (steps, parallel, loop, condition and router nodes with their ' +
    'children, executor keys, CEL expressions and human-review gates) and its declared inputs: `inputSchema`, the JSON Schema ' +
    'the run input (run_workflow `input`) must match, or null when any input goes. Address it by `workflowId` or by exact `workflowName`.',
  kind: 'read',
  input: z.object({ workflowId: id('Workflow id').optional(), workflowName: z.string().min(1).optional().describe('Exact workflow name') }),
  output: z.object({ workflow: z.record(z.string(), z.unknown()).describe('The REST workflow detail: id, name, description, enabled, version, tags, inputSchema, canvas, nodes') }),
  async run(args, { api }) {
    const workflowId = await resolveWorkflowId(api, args);
    return { workflow: await api.get<Record<string, unknown>>(`${WORKFLOWS}/${workflowId}`) };
  },
});
