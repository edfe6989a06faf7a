/**
 * Pending HITL gates as the control tools show and find them (list_pending_approvals,
 * resolve_approval): read from the API's inbox `GET /api/v1/approvals` (every page), filtered by
 * run, workflow and node there and by iteration here, and shaped so that an agent sees what is
 * asked and which resolutions fit without a second call.
 */
import * as z from 'zod/v4';
import type { ApiClient, Query } from '../../../api-client.ts';
import { ToolError } from '../../../envelope.ts';
import { APPROVALS, findWorkflowByName, getRun, id } from '../../shared.ts';

export const RESOLUTIONS = ['confirm', 'reject', 'edit', 'user_input', 'route_select'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/** The `iteration` argument: a loop iteration (1-based; 0 = outside loops) or an exact iteration path. */
export const IterationArg = z
  .union([z.number().int().min(0), z.string().regex(/^[0-9r/]*$/, "an iteration path such as '2', '2/1' or '3r1'")])
  .describe("Loop iteration of the gate: a number (1-based, the innermost loop; 0 = outside loops) or an exact iteration path such as '2/1'");
export type IterationArg = z.infer<typeof IterationArg>;

/** One form field of a gate. */
const FormFieldSchema = z.object({
  name: z.string(),
  fieldType: z.string().nullable(),
  description: z.string().nullable(),
  required: z.boolean(),
  defaultValue: z.unknown().describe('What confirm submits for this field'),
  allowedValues: z.array(z.unknown()).nullable(),
});

/** A pending gate, with where it is and what it asks. */
export const ApprovalItemSchema = z.object({
  runId: z.string(),
  workflowId: z.string(),
  workflowName: z.string().nullable(),
  runStatus: z.string(),
  nodeId: z.string(),
  stepId: z.string().describe('Exact address of this gate (pass it to resolve_approval as stepId)'),
  stepName: z.string().nullable(),
  stepType: z.string().nullable(),
  iteration: z.number().int().describe('Innermost loop iteration (1-based), the reviewed iteration of an iteration review; 0 outside loops'),
  iterationPath: z.string().describe("Loop iterations enclosing the node, e.g. '2' or '2/1'; '' outside loops"),
  requestedAt: z.string(),
  timeoutAt: z.string().nullable(),
  isHumanRequest: z.boolean().describe('A question an agent asked with ask_human (not a gate of the definition)'),
  prompt: z.string().nullable().describe('What the person is asked (the confirmation, form and review messages)'),
  requiresConfirmation: z.boolean(),
  requiresUserInput: z.boolean(),
  requiresOutputReview: z.boolean(),
  requiresRouteSelection: z.boolean(),
  isPostExecution: z.boolean().describe('True when the node already ran and its output is under review'),
  choices: z.array(z.string()).describe('Route choices (route_select)'),
  allowMultipleSelections: z.boolean(),
  formFields: z.array(FormFieldSchema).describe('Fields of the form (user_input)'),
  stepOutput: z.unknown().describe('The output under review, or a router suggestion; null when none (or too large: see omittedFields)'),
  omittedFields: z.record(z.string(), z.number()).optional(),
  allowedResolutions: z.array(z.enum(RESOLUTIONS)).describe('The resolutions this gate accepts'),
  approvers: z
    .array(z.string())
    .nullable()
    .optional()
    .describe('Who may decide it (principals such as user:ada, group:ops), as the API lists them; null: anyone who may operate the workflow'),
  canDecide: z.boolean().optional().describe('Whether the caller (the bridge\'s credential) may decide it, as the API says; absent when the API does not say'),
  onReject: z.string().describe('What a rejection does: cancel (the run), skip (the node), retry, else_branch'),
  onTimeout: z.string(),
  retryCount: z.number().int(),
  maxRetries: z.number().int().nullable(),
});
export type ApprovalItem = z.infer<typeof ApprovalItemSchema>;

/** A requirement as the API shows it (StepRequirementSummary, or RequirementRecordView with `iterationPath`). */
export interface RestRequirement {
  stepId: string;
  stepName?: string;
  stepType?: string;
  requiresConfirmation: boolean;
  requiresUserInput: boolean;
  requiresOutputReview: boolean;
  requiresRouteSelection: boolean;
  confirmationMessage?: string | null;
  userInputMessage?: string | null;
  outputReviewMessage?: string | null;
  userInputSchema?: Array<{ name: string; fieldType?: string; description?: string | null; required: boolean; value?: unknown; allowedValues?: unknown[] | null }> | null;
  availableChoices?: string[] | null;
  allowMultipleSelections: boolean;
  stepOutput?: unknown;
  omittedFields?: Record<string, number>;
  isPostExecution: boolean;
  retryCount: number;
  maxRetries?: number | null;
  timeoutAt?: string | null;
  onTimeout: string;
  onReject: string;
  iterationPath?: string;
  [key: string]: unknown;
}

/** A row of `GET /api/v1/approvals` (`approvers`, `canDecide`: issue #18, when the API sends them). */
export interface RestApproval {
  runId: string;
  workflowId: string;
  workflowName: string | null;
  runStatus: string;
  nodeId: string;
  /** Where the gate sits in the run's loops (API rows carry it; a run's requirements may not). */
  iterationPath?: string;
  /** pre | decision | post | iteration | ask */
  phase?: string;
  requestedAt: string;
  requirement: RestRequirement;
  approvers?: string[] | null;
  canDecide?: boolean;
}

/**
 * Where a gate sits: its iteration path and loop iteration, read from its address (hitl.ts
 * `stepIdOf`: `<nodeId>[@<path>][:review|:iteration-<i>][:retry-<n>]`, `:ask-<token>` for a human
 * request). Node ids hold neither '@' nor ':'.
 */
export function placeOf(nodeId: string, stepId: string, iterationPath?: string): { iterationPath: string; iteration: number } {
  const rest = stepId.startsWith(nodeId) ? stepId.slice(nodeId.length) : '';
  const path = iterationPath ?? /^@([^:]*)/.exec(rest)?.[1] ?? '';
  const reviewed = /:iteration-(\d+)/.exec(rest)?.[1];
  if (reviewed !== undefined) return { iterationPath: path, iteration: Number(reviewed) };
  const innermost = path
    .split('/')
    .reverse()
    .map((segment) => /^(\d+)(?:r\d+)?$/.exec(segment)?.[1])
    .find((iteration) => iteration !== undefined);
  return { iterationPath: path, iteration: innermost === undefined ? 0 : Number(innermost) };
}

/** The resolutions a gate accepts (docs/guide/hitl.md: confirm and reject always; the others by kind). */
function allowedResolutionsOf(requirement: RestRequirement, isHumanRequest: boolean): Resolution[] {
  const allowed: Resolution[] = [];
  // A human request with choices cannot be confirmed: a choice must be picked.
  if (!(isHumanRequest && requirement.requiresRouteSelection)) allowed.push('confirm');
  allowed.push('reject');
  if (requirement.requiresOutputReview && requirement.isPostExecution) allowed.push('edit');
  if (requirement.requiresUserInput) allowed.push('user_input');
  if (requirement.requiresRouteSelection) allowed.push('route_select');
  return allowed;
}

/** A REST approval row (or a run's requirement with its run) -> ApprovalItem. */
export function toApprovalItem(row: RestApproval): ApprovalItem {
  const requirement = row.requirement;
  const isHumanRequest = row.phase !== undefined ? row.phase === 'ask' : requirement.stepId.includes(':ask-');
  const messages = [requirement.confirmationMessage, requirement.userInputMessage, requirement.outputReviewMessage].filter((m): m is string => typeof m === 'string' && m !== '');
  return {
    runId: row.runId,
    workflowId: row.workflowId,
    workflowName: row.workflowName,
    runStatus: row.runStatus,
    nodeId: row.nodeId,
    stepId: requirement.stepId,
    stepName: requirement.stepName ?? null,
    stepType: requirement.stepType ?? null,
    ...placeOf(row.nodeId, requirement.stepId, row.iterationPath ?? requirement.iterationPath),
    requestedAt: row.requestedAt,
    timeoutAt: requirement.timeoutAt ?? null,
    isHumanRequest,
    prompt: messages.length > 0 ? messages.join('\n\n') : null,
    requiresConfirmation: requirement.requiresConfirmation,
    requiresUserInput: requirement.requiresUserInput,
    requiresOutputReview: requirement.requiresOutputReview,
    requiresRouteSelection: requirement.requiresRouteSelection,
    isPostExecution: requirement.isPostExecution,
    choices: requirement.availableChoices ?? [],
    allowMultipleSelections: requirement.allowMultipleSelections,
    formFields: (requirement.userInputSchema ?? []).map((field) => ({
      name: field.name,
      fieldType: field.fieldType ?? null,
      description: field.description ?? null,
      required: field.required,
      defaultValue: field.value ?? null,
      allowedValues: field.allowedValues ?? null,
    })),
    stepOutput: requirement.stepOutput ?? null,
    ...(requirement.omittedFields ? { omittedFields: requirement.omittedFields } : {}),
    allowedResolutions: allowedResolutionsOf(requirement, isHumanRequest),
    onReject: requirement.onReject,
    onTimeout: requirement.onTimeout,
    retryCount: requirement.retryCount,
    maxRetries: requirement.maxRetries ?? null,
    ...accessOf(row),
  };
}

/** `approvers` and `canDecide` of a row (or of its requirement), only those the API sent. */
function accessOf(row: RestApproval): Pick<ApprovalItem, 'approvers' | 'canDecide'> {
  const approvers = row.approvers !== undefined ? row.approvers : (row.requirement['approvers'] as string[] | null | undefined);
  const canDecide = row.canDecide ?? (row.requirement['canDecide'] as boolean | undefined);
  return { ...(approvers === undefined ? {} : { approvers }), ...(typeof canDecide === 'boolean' ? { canDecide } : {}) };
}

/** Filters of the approval tools. */
export interface ApprovalFilters {
  runId?: string;
  workflowName?: string;
  nodeId?: string;
  iteration?: IterationArg;
  stepId?: string;
  /** Only the gates the caller may decide (`?mine=true`, issue #18). */
  mine?: boolean;
}

/** The filter arguments, as both approval tools take them. */
export const approvalFilterArgs = {
  runId: id('Run id').optional().describe('Only gates of this run'),
  workflowName: z.string().min(1).optional().describe('Only gates of runs of the workflow of this exact name'),
  nodeId: z.string().min(1).optional().describe('Only gates of this node'),
  iteration: IterationArg.optional(),
};

/** Pages of the inbox read at the most (100 gates each). */
const MAX_PAGES = 20;

/** The query of one inbox page: the filters the API applies (`mine=true` only when asked). */
export function inboxQuery(filters: Pick<ApprovalFilters, 'runId' | 'nodeId' | 'mine'>, workflowId: string | undefined, page: number): Query {
  return { runId: filters.runId, workflowId, nodeId: filters.nodeId, ...(filters.mine ? { mine: true } : {}), page, perPage: 100 };
}

/**
 * Every pending gate matching `filters` (oldest request first). An unknown `workflowName` is
 * WORKFLOW_NOT_FOUND; an unknown `runId` RUN_NOT_FOUND (checked only when nothing matched).
 * `truncated` says the inbox had more than was read.
 */
export async function findPendingApprovals(api: ApiClient, filters: ApprovalFilters): Promise<{ items: ApprovalItem[]; truncated: boolean }> {
  let workflowId: string | undefined;
  if (filters.workflowName !== undefined) {
    const workflow = await findWorkflowByName(api, filters.workflowName);
    if (!workflow) throw new ToolError('WORKFLOW_NOT_FOUND', `No workflow is named '${filters.workflowName}'`, { workflowName: filters.workflowName, fields: ['workflowName'] });
    workflowId = workflow.id;
  }
  const rows: RestApproval[] = [];
  let truncated = false;
  for (let page = 1; ; page++) {
    const answer = await api.get<{ approvals: RestApproval[]; pagination: { totalPages: number } }>(APPROVALS, inboxQuery(filters, workflowId, page));
    rows.push(...answer.approvals);
    if (page >= answer.pagination.totalPages) break;
    if (page >= MAX_PAGES) {
      truncated = true;
      break;
    }
  }
  const items = rows.map(toApprovalItem).filter((item) => matchesIteration(item, filters.iteration) && (filters.stepId === undefined || item.stepId === filters.stepId));
  if (items.length === 0 && filters.runId !== undefined) await getRun(api, filters.runId); // RUN_NOT_FOUND for an unknown run
  return { items, truncated };
}

function matchesIteration(item: ApprovalItem, iteration: IterationArg | undefined): boolean {
  if (iteration === undefined) return true;
  return typeof iteration === 'number' ? item.iteration === iteration : item.iterationPath === iteration;
}
