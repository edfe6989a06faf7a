/**
 * The `yaml` argument of create_workflow and validate_workflow (and the orchestrator's
 * create_workflow): a workflow definition as YAML text instead of the structured `definition`.
 *
 * The bridge parses the text itself and sends the API JSON, because saving by name (overwrite,
 * the default canvas) needs the parsed definition. It parses with the module the API parses YAML
 * bodies with (`@switchyard/domain/yaml-definition`), so the rules and messages (`YAML line 3,
 * column 5: ...`) are the API's. What the API checks on any body (nesting depth, `__proto__`
 * keys, size) it checks again on the JSON the bridge sends.
 */
import * as z from 'zod/v4';
import { MAX_YAML_BYTES, YamlDefinitionError, parseYamlDefinition } from '@switchyard/domain/yaml-definition';
import { ToolError, describeIssues } from '../../../envelope.ts';

/** The `yaml` argument. */
export const YamlText = z
  .string()
  .min(1)
  .refine((text) => Buffer.byteLength(text) <= MAX_YAML_BYTES, `at most ${MAX_YAML_BYTES} bytes of UTF-8`)
  .describe(
    'The definition as YAML text (YAML 1.2, one document), instead of `definition`: the same fields. Errors name the line and column. ' +
      'Example: "name: hello\\nnodes:\\n  - {name: A, nodeType: step, executorKey: echo}\\n"',
  );

/**
 * The value of YAML `text`, as plain JSON data. Throws ToolError INVALID_INPUT (`details.fields:
 * ['yaml']`) with the message the API answers for the same text as a body.
 */
function parseYamlArgument(text: string): unknown {
  try {
    return parseYamlDefinition(text, MAX_YAML_BYTES);
  } catch (error) {
    if (error instanceof YamlDefinitionError) throw new ToolError('INVALID_INPUT', error.message, { fields: ['yaml'] });
    throw error;
  }
}

/**
 * `definition`, or the definition `yaml` holds checked against `schema` (the tool's definition
 * argument); exactly one of the two must be given. Throws INVALID_INPUT otherwise, or when the
 * YAML is malformed (the API's message, `details.fields: ['yaml']`) or does not fit `schema`
 * (fields named `yaml.<path>`).
 */
export function definitionOrYaml<S extends z.ZodType>(schema: S, definition: z.infer<S> | undefined, yaml: string | undefined): z.infer<S> {
  if ((definition === undefined) === (yaml === undefined)) {
    throw new ToolError('INVALID_INPUT', 'Give the definition either as `definition` or as `yaml` text, not both or neither', { fields: ['definition', 'yaml'] });
  }
  if (definition !== undefined) return definition;
  const parsed = schema.safeParse(parseYamlArgument(yaml!));
  if (parsed.success) return parsed.data;
  const { message, fields } = describeIssues(parsed.error.issues.map((issue) => ({ ...issue, path: ['yaml', ...issue.path] })));
  throw new ToolError('INVALID_INPUT', message, { fields });
}
