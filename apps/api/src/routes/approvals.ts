/**
 * HITL decision route (spec endpoint 10): POST /api/v1/workflows/{workflow_id}/runs/{run_id}/approve.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApproveBody, ApproveResponse, ErrorBody } from '@switchyard/domain';
import { resolveRequirement } from '../services/approval-service.ts';
import { deciderOf } from '../access/decision-guard.ts';
import type { AppServices } from '../services/index.ts';
import { RunParams } from './params.ts';

const approvalRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  app.post(
    '/:workflow_id/runs/:run_id/approve',
    {
      schema: {
        tags: ['runs'],
        operationId: 'approveRequirement', summary: 'Resolve a HITL requirement (confirm, reject, edit, user_input, route_select)',
        description:
          'Records one decision on the pending requirement `stepId` with a compare-and-set: of concurrent decisions exactly one gets 200, ' +
          'every other 409 (as does a decision on a requirement decided earlier, by a person or a timeout). The response returns at once; ' +
          'the run continues by itself — poll the run detail. The decider (the authenticated caller as `{ userId, username, via }`; never a body field) is recorded as `decidedByUser` ' +
          "(a human request's `answeredBy`). A human request (`stepId` = its `requestId`) is answered the same way: confirm or user_input " +
          '`{"userInput": {"response": "..."}}` for free text, route_select with one of its choices, reject (with optional `feedback`). ' +
          '400 when the resolution does not fit the requirement or its payload is missing or invalid, or when `editedOutput`, `userInput` or ' +
          '`feedback` is over its limit (default 256 KiB of JSON, SWITCHYARD_MAX_DECISION_BYTES; 12 KiB for the answer to a human request; ' +
          '`detail.details.field`); 409 `document_too_large` when the decision would make the run document larger than 16 MiB (nothing ' +
          'recorded; a smaller decision may fit); 404 for an unknown workflow, run or stepId. Who may decide (checked before anything is ' +
          "written): the gate's `approvers` when it names them (else 403 `not_an_approver`), otherwise the workflow's operators (403 " +
          '`permission_denied`, `requiredRole: operator`); with `allowSelfApproval: false` never the run\'s trigger (403 `self_approval_forbidden`).',
        params: RunParams,
        body: ApproveBody,
        response: { 200: ApproveResponse, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      config: { rateLimitGroup: 'approvals', scope: 'workflows-control', workflowRole: 'viewer' },
    },
    async (request) => {
      const { run, requirement } = await resolveRequirement(services, request.params.workflow_id, request.params.run_id, request.body, deciderOf(request.identity, request.workflowRole));
      return {
        runId: run.id,
        status: run.status,
        resolvedStepId: requirement.stepId,
        message:
          requirement.phase === 'ask'
            ? `Human request answered as ${request.body.resolution}`
            : `Requirement resolved as ${request.body.resolution}; run resuming`,
      };
    },
  );
};

export default approvalRoutes;
