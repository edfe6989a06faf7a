/**
 * Declared inputs on the bridge (issue #21 item 3): both run_workflow tools check the run input
 * against the workflow's `inputSchema` before they call the API, with the API's own validator
 * (`@switchyard/domain/input-schema`), so that an agent gets INVALID_INPUT naming each field and
 * the schema to follow, and no trigger is sent.
 */
import type { ApiClient } from '../api-client.ts';
import { ToolError } from '../envelope.ts';
import { WORKFLOWS } from './shared.ts';
import type { RestWorkflowDetail } from './semantic/workflows/definition.ts';

/** The outcome of {@link checkRunInput}: the workflow detail read, and the input's problems ([] when it matches or none is declared). */
export interface RunInputCheck {
  workflow: RestWorkflowDetail;
  problems: string[];
}

/**
 * Reads workflow `workflowId` (GET detail) and checks `input` against its `inputSchema`.
 * Problems are `/path: message` (`/customerEmail: is required`). Throws as the API client does
 * (e.g. WORKFLOW_NOT_FOUND).
 */
export async function checkRunInput(api: ApiClient, workflowId: string, input: Record<string, unknown>): Promise<RunInputCheck> {
  const workflow = await api.get<RestWorkflowDetail>(`${WORKFLOWS}/${workflowId}`);
  const schema = inputSchemaOf(workflow);
  if (schema === null) return { workflow, problems: [] };
  // Loaded on first use: ajv is not part of the bridge's start-up (tools/list answers fast).
  const { validateRunInput } = await import('@switchyard/domain/input-schema');
  const check = validateRunInput({ id: workflow.id, version: workflow.version, inputSchema: schema }, input);
  return { workflow, problems: check.ok ? [] : check.problems };
}

/**
 * ToolError INVALID_INPUT for `problems` of the argument `argument` (`input`, `parameters`):
 * `details.fields` names each field (`parameters.customerEmail`), `details.problems` lists them
 * and `details.inputSchema` is the schema to follow.
 */
export function invalidRunInput(argument: string, problems: readonly string[], workflow: RestWorkflowDetail): ToolError {
  const fields = problems.map((problem) => fieldOf(argument, problem.slice(0, problem.indexOf(': '))));
  return new ToolError('INVALID_INPUT', `${argument} does not match the workflow's inputSchema: ${problems.join('; ')}`, {
    fields: [...new Set(fields)],
    problems,
    inputSchema: inputSchemaOf(workflow),
  });
}

/** The declared inputs of a workflow detail; null when none (or an API too old to have them). */
export function inputSchemaOf(workflow: RestWorkflowDetail): Record<string, unknown> | null {
  const schema = workflow['inputSchema'];
  return schema !== null && typeof schema === 'object' && !Array.isArray(schema) ? (schema as Record<string, unknown>) : null;
}

/** `/a/b` of argument `parameters` -> `parameters.a.b`; the input itself (`(input)`) -> `parameters`. */
function fieldOf(argument: string, pointer: string): string {
  if (!pointer.startsWith('/')) return argument;
  const segments = pointer.slice(1).split('/').map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [argument, ...segments].join('.');
}
