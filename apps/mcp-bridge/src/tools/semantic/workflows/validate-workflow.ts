import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { WORKFLOWS } from '../../shared.ts';
import { DefinitionSchema, createBodyOf } from './definition.ts';
import { YamlText, definitionOrYaml } from './yaml-definition.ts';

export const validateWorkflow = defineTool({
  name: 'validate_workflow',
  title: 'Validate a workflow definition',
  description:
    'Checks a workflow definition exactly as create_workflow would (node rules, executor keys, CEL expressions, limits) without ' +
    'saving anything. Call it while authoring a definition. Returns `valid` and `problems` (every problem found; empty when valid). ' +
    'Whether the name is taken is not checked.',
  kind: 'read',
  input: z.object({
    definition: DefinitionSchema.optional().describe('The workflow definition: the REST create body, name included (or give `yaml`)'),
    yaml: YamlText.optional(),
  }),
  output: z.object({ valid: z.boolean(), problems: z.array(z.string()).describe('Every problem found; empty when valid') }),
  async run(args, { api }) {
    const checked = await api.post<{ valid: boolean; problems: string[] }>(`${WORKFLOWS}/validate`, createBodyOf(definitionOrYaml(DefinitionSchema, args.definition, args.yaml)));
    return { valid: checked.valid, problems: checked.problems };
  },
});
