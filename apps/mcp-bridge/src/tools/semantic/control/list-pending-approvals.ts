import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { ApprovalItemSchema, approvalFilterArgs, findPendingApprovals } from './approvals.ts';

export const listPendingApprovals = defineTool({
  name: 'list_pending_approvals',
  title: 'List pending approvals',
  description:
    'Lists the human gates (HITL approvals, forms, output reviews, route selections, and questions agents asked with ask_human) that ' +
    'wait for a decision now, oldest first, across all runs or filtered by `runId`, `workflowName`, `nodeId` and `iteration`. Call it ' +
    'when a run is awaiting_approval, before resolve_approval. Each item says where the gate is (runId, workflowName, nodeId, stepId, ' +
    'iteration), what is asked (`prompt`, the flags, `choices`, `formFields` with their defaults, `stepOutput` under review) and ' +
    '`allowedResolutions`, so you can decide without another call, and who may decide it (`approvers`; `canDecide` for you). ' +
    '`mine: true` lists only the gates you may decide.',
  kind: 'read',
  input: z.object({
    ...approvalFilterArgs,
    mine: z.boolean().optional().describe('Only the gates you (the bridge\'s credential) may decide, as the API judges it (GET /api/v1/approvals?mine=true)'),
    limit: z.number().int().min(1).max(200).optional().describe('Gates to return (default 50)'),
  }),
  output: z.object({
    approvals: z.array(ApprovalItemSchema),
    total: z.number().int().describe('How many pending gates match (approvals holds the first `limit`)'),
    truncated: z.boolean().describe('True when the inbox was too large to read in full: narrow the filters'),
  }),
  async run(args, { api }) {
    const { items, truncated } = await findPendingApprovals(api, args);
    return { approvals: items.slice(0, args.limit ?? 50), total: items.length, truncated };
  },
});
