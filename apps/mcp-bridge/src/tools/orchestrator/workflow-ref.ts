/**
 * How the orchestrator surface names a workflow definition: by name, or by its `workflow_path`
 * (the workflow's API URL, as create_workflow and list_workflows return it).
 */
import type { ApiClient } from '../../api-client.ts';
import { ToolError } from '../../envelope.ts';
import { WORKFLOWS, findWorkflowByName } from '../shared.ts';

/** The workflow's API URL: the orchestrator's `workflow_path`. */
export function workflowPath(api: ApiClient, workflowId: string): string {
  return api.url(`${WORKFLOWS}/${workflowId}`);
}

/** Longest workflow name. */
const MAX_NAME_LENGTH = 200;

/** A workflow id alone, or at the end of a workflow path or URL. */
const ID_OR_PATH = /(?:^|\/api\/v1\/workflows\/)([0-9a-f]{24})\/?$/i;

/**
 * The id of the workflow `ref` names: the workflow of that exact name; else, when `ref` is a
 * workflow path (or id), that workflow (an unknown one is WORKFLOW_NOT_FOUND at its first use).
 */
export async function resolveWorkflowRef(api: ApiClient, ref: string): Promise<string> {
  const named = ref.length <= MAX_NAME_LENGTH ? await findWorkflowByName(api, ref) : null;
  if (named) return named.id;
  const fromPath = ID_OR_PATH.exec(ref)?.[1];
  if (fromPath) return fromPath;
  throw new ToolError('WORKFLOW_NOT_FOUND', `No workflow is named '${ref}' (list_workflows shows the names)`, { workflow_name: ref });
}
