import * as z from 'zod/v4';
import { ToolError } from '../../../envelope.ts';
import { defineTool } from '../../../tool.ts';
import { RunSummarySchema, getRun, runPath, toRunSummary } from '../../shared.ts';
import { ApprovalItemSchema, RESOLUTIONS, approvalFilterArgs, findPendingApprovals, toApprovalItem, type ApprovalItem, type RestRequirement, type Resolution } from './approvals.ts';

/** The spec's shorthands. */
const ACTIONS = { approve: 'confirm', deny: 'reject' } as const;

/** The payload field each resolution needs (and that no other resolution takes). */
const PAYLOAD_OF: Partial<Record<Resolution, 'editedOutput' | 'userInput' | 'selectedChoices'>> = { edit: 'editedOutput', user_input: 'userInput', route_select: 'selectedChoices' };

/** A run's gate on the record, decided or not (RequirementRecordView). */
type RecordedRequirement = RestRequirement & {
  nodeId: string;
  requestedAt: string;
  decidedBy: string | null;
  /** Who decided (issue #18: `{ userId, username, via }`), when the API shows it. */
  decidedByUser?: unknown;
  decidedAt: string | null;
  rejectionFeedback?: string | null;
  editedOutput?: unknown;
  userInput?: Record<string, unknown> | null;
  selectedChoices?: string[] | null;
};

export const resolveApproval = defineTool({
  name: 'resolve_approval',
  title: 'Resolve an approval',
  description:
    'Decides one pending human gate; the run then continues by itself (no second call; follow it with get_run or watch_run). Give ' +
    '`resolution` (confirm | reject | edit + editedOutput | user_input + userInput | route_select + selectedChoices) or the shorthand ' +
    '`action` (approve = confirm, deny = reject), exactly one, and pick the gate with `runId`, `workflowName`, `nodeId`, `iteration` ' +
    'and/or the exact `stepId` from list_pending_approvals. It never guesses: when zero or several pending gates match, it fails with ' +
    'INVALID_INPUT and lists the candidates in `details.matches` — narrow the filters and call again. `feedback` (or `note`) is ' +
    'recorded with a rejection; `decidedBy` names who decides. A gate decided by someone else meanwhile is CONFLICT. Returns the ' +
    'decision as recorded, the gate it decided, and the run summary after it. Rejecting may cancel the run (see the gate\'s onReject).',
  kind: 'irreversible',
  input: z.object({
    resolution: z.enum(RESOLUTIONS).optional().describe('The decision (or give `action`)'),
    action: z.enum(['approve', 'deny']).optional().describe('Shorthand: approve = confirm, deny = reject'),
    ...approvalFilterArgs,
    stepId: z.string().min(1).optional().describe('Exact gate address (stepId of list_pending_approvals)'),
    feedback: z.string().max(10_000).optional().describe('Why (recorded with a rejection; a retried step sees it)'),
    note: z.string().max(10_000).optional().describe('Same as feedback (used when feedback is absent)'),
    editedOutput: z.unknown().optional().describe("resolution 'edit': the output to use instead of the reviewed one"),
    userInput: z.record(z.string(), z.unknown()).optional().describe("resolution 'user_input': the form values by field name"),
    selectedChoices: z.array(z.string()).min(1).optional().describe("resolution 'route_select': the chosen route(s)"),
    decidedBy: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('Who decides, sent as X-Switchyard-Username: recorded only when the API trusts proxy identity headers; otherwise the decider is whom the API credential names (the bridge\'s --api-token; over HTTP in bearer mode, the caller\'s own token)'),
  }),
  output: z.object({
    decision: z.object({
      resolution: z.enum(RESOLUTIONS),
      action: z.enum(['approve', 'deny']).nullable(),
      stepId: z.string(),
      feedback: z.string().nullable().describe('Recorded rejection feedback'),
      editedOutput: z.unknown(),
      userInput: z.record(z.string(), z.unknown()).nullable().describe('The form values applied (confirm applies the defaults)'),
      selectedChoices: z.array(z.string()).nullable(),
      decidedBy: z.string().nullable().describe('human | timeout | run_ended'),
      decidedByUser: z.unknown().describe('Who decided, as the API records it (null when it does not say)'),
      decidedAt: z.string().nullable(),
      message: z.string(),
    }),
    approval: ApprovalItemSchema.describe('The gate that was decided, as it was pending'),
    run: RunSummarySchema.describe('The run right after the decision (it continues by itself)'),
  }),
  async run(args, { api }) {
    const resolution = resolutionOf(args);
    const feedback = args.feedback ?? args.note;
    const { items, truncated } = await findPendingApprovals(api, args);
    if (truncated) throw new ToolError('INVALID_INPUT', 'Too many pending gates match to be sure which one is meant; narrow with runId, nodeId or stepId', { fields: ['runId', 'nodeId', 'stepId'] });
    let approval: ApprovalItem | undefined = items.length === 1 ? items[0] : undefined;
    if (!approval) {
      // An exact gate that is no longer pending: let the API say why (409: decided, or its run ended).
      const decided = items.length === 0 && args.runId && args.stepId ? await recordedGate(api, args.runId, args.stepId) : undefined;
      if (!decided) throw ambiguous(items, args);
      approval = decided;
    }
    const body = {
      stepId: approval.stepId,
      resolution,
      ...(feedback === undefined ? {} : { feedback }),
      ...(args.editedOutput === undefined ? {} : { editedOutput: args.editedOutput }),
      ...(args.userInput === undefined ? {} : { userInput: args.userInput }),
      ...(args.selectedChoices === undefined ? {} : { selectedChoices: args.selectedChoices }),
    };
    const headers = args.decidedBy ? { 'x-switchyard-username': args.decidedBy } : undefined;
    const answer = await api.post<{ message: string }>(runPath(approval.workflowId, approval.runId, '/approve'), body, headers);
    const run = await getRun(api, approval.runId);
    const recorded = (run.requirements as RecordedRequirement[] | undefined)?.find((r) => r.stepId === approval.stepId);
    return {
      decision: {
        resolution,
        action: args.action ?? null,
        stepId: approval.stepId,
        feedback: recorded?.rejectionFeedback ?? null,
        editedOutput: recorded?.editedOutput ?? null,
        userInput: recorded?.userInput ?? null,
        selectedChoices: recorded?.selectedChoices ?? null,
        decidedBy: recorded?.decidedBy ?? null,
        decidedByUser: recorded?.decidedByUser ?? null,
        decidedAt: recorded?.decidedAt ?? null,
        message: answer.message,
      },
      approval,
      run: toRunSummary(run),
    };
  },
});

/** The resolution from `resolution` or `action` (exactly one), with the payload it needs and no other. */
function resolutionOf(args: { resolution?: Resolution; action?: keyof typeof ACTIONS; editedOutput?: unknown; userInput?: unknown; selectedChoices?: unknown }): Resolution {
  if ((args.resolution === undefined) === (args.action === undefined)) {
    throw new ToolError('INVALID_INPUT', 'Give exactly one of resolution (confirm | reject | edit | user_input | route_select) and action (approve | deny)', { fields: ['resolution', 'action'] });
  }
  const resolution = args.resolution ?? ACTIONS[args.action!];
  const needed = PAYLOAD_OF[resolution];
  if (needed && (args[needed] === undefined || args[needed] === null)) {
    throw new ToolError('INVALID_INPUT', `Resolution '${resolution}' requires ${needed}`, { fields: [needed] });
  }
  for (const [other, field] of Object.entries(PAYLOAD_OF)) {
    if (other !== resolution && args[field] !== undefined) {
      throw new ToolError('INVALID_INPUT', `${field} goes with resolution '${other}', not '${resolution}'`, { fields: [field] });
    }
  }
  return resolution;
}

/** The run's gate `stepId` when the run has one (decided: not in the inbox any more), as an item. */
async function recordedGate(api: Parameters<typeof getRun>[0], runId: string, stepId: string): Promise<ApprovalItem | undefined> {
  const run = await getRun(api, runId);
  const requirement = (run.requirements as RecordedRequirement[] | undefined)?.find((r) => r.stepId === stepId);
  if (!requirement) return undefined;
  return toApprovalItem({ runId, workflowId: run.workflowDefinitionId, workflowName: run.workflowName ?? null, runStatus: run.status, nodeId: requirement.nodeId, requestedAt: requirement.requestedAt, requirement });
}

/** INVALID_INPUT for zero or several matching gates, with the candidates. */
function ambiguous(items: ApprovalItem[], args: Record<string, unknown>): ToolError {
  const filters = ['runId', 'workflowName', 'nodeId', 'iteration', 'stepId'].filter((name) => args[name] !== undefined);
  const given = filters.length > 0 ? filters.map((name) => `${name}=${JSON.stringify(args[name])}`).join(', ') : 'no filters';
  const matches = items.map(({ runId, stepId, nodeId, workflowName, iteration, iterationPath, requestedAt, prompt }) => ({ runId, stepId, nodeId, workflowName, iteration, iterationPath, requestedAt, prompt }));
  const message =
    items.length === 0
      ? `No pending gate matches ${given}; call list_pending_approvals to see what waits`
      : `${items.length} pending gates match ${given}; narrow with runId, nodeId, iteration or stepId (candidates in details.matches)`;
  return new ToolError('INVALID_INPUT', message, { matches, fields: filters });
}
