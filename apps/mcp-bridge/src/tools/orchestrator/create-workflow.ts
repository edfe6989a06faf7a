import * as z from 'zod/v4';
import { ToolError } from '../../envelope.ts';
import { defineTool } from '../../tool.ts';
import { WorkflowName, definitionFields, saveWorkflow } from '../semantic/workflows/definition.ts';
import { YamlText, definitionOrYaml } from '../semantic/workflows/yaml-definition.ts';
import { workflowPath } from './workflow-ref.ts';

/** The orchestrator's definition: no name needed (it is an argument of its own), `enabled` allowed. */
const OrchestratorDefinition = z.looseObject({
  ...definitionFields,
  name: WorkflowName.optional().describe('If given, must equal `name`'),
  enabled: z.boolean().optional().describe('Default true'),
});

export const orchestratorCreateWorkflow = defineTool({
  name: 'create_workflow',
  title: 'Create a workflow',
  description:
    'Saves a workflow definition under `name`: `definition` holds its nodes (and optional description, canvas, tags as categories), ' +
    'or `yaml` holds the same as YAML text (errors name line and column). ' +
    'The workflow is enabled, so run_workflow can run it at once, unless the definition says `"enabled": false`. A name already ' +
    'taken is an error (CONFLICT) unless `overwrite: true`, which replaces that workflow. An invalid definition is an error ' +
    '(INVALID_INPUT) listing every problem in `details.problems`. Returns `status` (created | updated) and `workflow_path`, the ' +
    'saved workflow\'s API URL.',
  kind: 'write',
  input: z.object({
    name: WorkflowName.describe('Workflow name'),
    definition: OrchestratorDefinition.optional().describe('Workflow definition: { nodes, description?, canvas?, tags?, enabled? } (or give `yaml`)'),
    yaml: YamlText.optional(),
    overwrite: z.boolean().optional().describe('Overwrite the workflow of that name if it exists'),
  }),
  output: z.object({
    status: z.enum(['created', 'updated']).describe('Failures ("error") come back as the error envelope'),
    workflow_path: z.string().describe('The saved workflow\'s API URL'),
  }),
  async run(args, { api }) {
    const { enabled = true, name, ...definition } = definitionOrYaml(OrchestratorDefinition, args.definition, args.yaml);
    if (name !== undefined && name !== args.name) {
      throw new ToolError('INVALID_INPUT', `definition.name ('${name}') differs from name ('${args.name}'); give the name once`, { fields: ['definition.name'] });
    }
    const saved = await saveWorkflow(api, { ...definition, name: args.name }, { overwrite: args.overwrite, enabled });
    return { status: saved.status, workflow_path: workflowPath(api, saved.workflow.id) };
  },
});
