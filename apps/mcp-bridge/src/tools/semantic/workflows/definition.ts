/**
 * What the workflow-authoring tools share (create_workflow and validate_workflow here, and the
 * orchestrator's create_workflow): the `definition` argument — the REST create body — and saving a
 * definition by its name: create it, or with `overwrite` replace the workflow of that name.
 */
import * as z from 'zod/v4';
import { ApiError, type ApiClient } from '../../../api-client.ts';
import { ToolError } from '../../../envelope.ts';
import { WORKFLOWS, findWorkflowByName } from '../../shared.ts';

/** Node types of the definition model. */
const NODE_TYPES = ['step', 'parallel', 'loop', 'condition', 'router'] as const;

/**
 * A node as the API takes it. Only `name` and `nodeType` are checked here; every other field
 * (executorKey, config, children, trueSteps, falseSteps, choices, conditionCel, loopConfig,
 * humanReview, stepConfig, ...) passes through to the API, which reports all problems at once.
 */
const NodeSchema = z
  .looseObject({ name: z.string().min(1), nodeType: z.enum(NODE_TYPES) })
  .describe(
    'A node: { name, nodeType, executorKey? (step), config? (executor arguments; {"$cel": "..."} values are evaluated), children? (parallel, loop), ' +
      'trueSteps?/falseSteps? + conditionCel (condition), choices? [{name, steps}] (router), loopConfig? {maxIterations, endConditionCel?}, ' +
      'humanReview? {requiresConfirmation, requiresUserInput, requiresOutputReview, ...}, stepConfig? {maxRetries, onError} }',
  );

/** The workflow name. */
export const WorkflowName = z.string().min(1).max(200);

/** The fields of a definition besides its name. */
export const definitionFields = {
  description: z.string().max(5000).nullable().optional(),
  canvas: z
    .looseObject({ viewport: z.looseObject({ x: z.number(), y: z.number(), zoom: z.number().positive() }) })
    .optional()
    .describe('Editor viewport; default {"viewport":{"x":0,"y":0,"zoom":1}}'),
  nodes: z.array(NodeSchema).describe('Top-level nodes, executed in order'),
  tags: z.array(z.string().min(1).max(50)).max(20).optional().describe('Labels to group and filter workflows (e.g. "build", "team:billing")'),
  inputSchema: z
    .record(z.string(), z.unknown())
    .nullable()
    .optional()
    .describe('Declared inputs: a JSON Schema (draft 2020-12) the run input must match (e.g. {"type":"object","required":["customerEmail"],"properties":{"customerEmail":{"type":"string","format":"email"}}}); defaults are applied'),
  triggers: z
    .array(
      z.looseObject({
        event: z.string().min(1).max(200).describe('Event name, e.g. "order.created"'),
        filterCel: z.string().max(4096).nullable().optional().describe('CEL over `event` that must hold, e.g. "event.data.total > 100.0"'),
        inputCel: z.string().max(4096).nullable().optional().describe("CEL over `event` giving the run input map, e.g. \"{ 'orderId': event.data.id }\"; default the event's data"),
      }),
    )
    .max(20)
    .optional()
    .describe('Event triggers: an event posted with send_event starts a run when one matches'),
};

/** `definition` of create_workflow and validate_workflow: the REST create body, `name` included. */
export const DefinitionSchema = z.looseObject({ name: WorkflowName, ...definitionFields });
export type Definition = z.infer<typeof DefinitionSchema>;

/** The canvas a definition gets when it has none. */
const DEFAULT_CANVAS = { viewport: { x: 0, y: 0, zoom: 1 } };

/** The REST create body of a definition (canvas defaulted). */
export function createBodyOf(definition: Definition): Definition {
  return { ...definition, canvas: definition.canvas ?? DEFAULT_CANVAS };
}

/** A REST workflow detail, loosely typed (the fields the tools name). */
export interface RestWorkflowDetail {
  id: string;
  name: string;
  description: string | null;
  enabled: boolean;
  version: number;
  tags?: string[];
  nodes: RestNode[];
  [key: string]: unknown;
}

/** A node of a stored definition: its branches are always lists. */
export interface RestNode {
  id: string;
  name: string;
  nodeType: string;
  children?: RestNode[];
  trueSteps?: RestNode[];
  falseSteps?: RestNode[];
  choices?: Array<{ name: string; steps: RestNode[] }>;
}

/** What {@link saveWorkflow} did. */
export interface SavedWorkflow {
  workflow: RestWorkflowDetail;
  status: 'created' | 'updated';
}

/**
 * Saves `definition` under its name: creates it (workflows are created disabled), or, with
 * `overwrite`, replaces the workflow of that name (description, tags, inputSchema and triggers not given are cleared, so
 * the result is the definition as given). `enabled`, when given, is set afterwards. A taken name
 * without `overwrite` is CONFLICT.
 */
export async function saveWorkflow(api: ApiClient, definition: Definition, options: { overwrite?: boolean; enabled?: boolean }): Promise<SavedWorkflow> {
  const body = createBodyOf(definition);
  const replaceExisting = async (): Promise<SavedWorkflow | null> => {
    const existing = await findWorkflowByName(api, definition.name);
    if (!existing) return null;
    const replacement = { description: null, tags: [], inputSchema: null, triggers: [], ...body, ...(options.enabled === undefined ? {} : { enabled: options.enabled }) };
    return { workflow: await api.put<RestWorkflowDetail>(`${WORKFLOWS}/${existing.id}`, replacement), status: 'updated' };
  };
  if (options.overwrite) {
    const replaced = await replaceExisting();
    if (replaced) return replaced;
  }
  let workflow: RestWorkflowDetail;
  try {
    workflow = await api.post<RestWorkflowDetail>(WORKFLOWS, body);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'duplicate_entry')) throw error;
    // Created by someone else since we looked: replace that one.
    const replaced = options.overwrite ? await replaceExisting() : null;
    if (replaced) return replaced;
    throw new ToolError('CONFLICT', `${error.message}; pass overwrite: true to replace it`, { name: definition.name, apiError: error.code });
  }
  if (options.enabled) workflow = await api.post<RestWorkflowDetail>(`${WORKFLOWS}/${workflow.id}/toggle`, { enabled: true });
  return { workflow, status: 'created' };
}
