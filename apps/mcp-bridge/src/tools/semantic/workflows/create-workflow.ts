import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { DefinitionSchema, saveWorkflow } from './definition.ts';
import { YamlText, definitionOrYaml } from './yaml-definition.ts';

export const createWorkflow = defineTool({
  name: 'create_workflow',
  title: 'Create a workflow',
  description:
    'Saves a workflow definition (`definition`: the REST create body — name, description, canvas (optional), nodes, tags; or ' +
    'the same as YAML text in `yaml`, whose errors name line and column). A new ' +
    'workflow is created disabled unless `enable: true`. A taken name is CONFLICT unless `overwrite: true`, which replaces the ' +
    'workflow of that name (its runs are kept; description and tags not given are cleared). An invalid definition is INVALID_INPUT ' +
    'with every problem in `details.problems`; call validate_workflow first to check without saving. Returns the workflow id, ' +
    'name, version, enabled, tags and `status` created | updated.',
  kind: 'write',
  input: z.object({
    definition: DefinitionSchema.optional().describe('The workflow definition: the REST create body, name included (or give `yaml`)'),
    yaml: YamlText.optional(),
    overwrite: z.boolean().optional().describe('Replace the workflow of the same name instead of failing with CONFLICT'),
    enable: z.boolean().optional().describe('Enable the workflow (so that it can be run) after saving; an update left without it keeps its enabled state'),
  }),
  output: z.object({
    workflowId: z.string(),
    name: z.string(),
    version: z.number().int(),
    enabled: z.boolean(),
    tags: z.array(z.string()),
    status: z.enum(['created', 'updated']),
  }),
  async run(args, { api }) {
    const definition = definitionOrYaml(DefinitionSchema, args.definition, args.yaml);
    const { workflow, status } = await saveWorkflow(api, definition, { overwrite: args.overwrite, enabled: args.enable });
    return { workflowId: workflow.id, name: workflow.name, version: workflow.version, enabled: workflow.enabled, tags: workflow.tags ?? [], status };
  },
});
