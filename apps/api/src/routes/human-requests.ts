/**
 * Human requests (issue #8; the MCP bridge's `ask_human`): POST
 * /api/v1/workflows/{workflow_id}/runs/{run_id}/human-requests and GET .../human-requests/{request_id}.
 * The semantics live in services/human-request-service.ts and domain hitl.ts (`buildAskRequirement`, `askOutcomeOf`).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ErrorBody, HumanRequest, HumanRequestBody, objectIdString as id } from '@switchyard/domain';
import { createHumanRequest, getHumanRequest } from '../services/human-request-service.ts';
import type { AppServices } from '../services/index.ts';
import { RunParams } from './params.ts';

const tags = ['runs'];

/** One human request of a run (`request_id`: its `requestId`, URL-encoded: it may hold '/' inside loops). */
const HumanRequestParams = Type.Object({
  workflow_id: id('Workflow definition id'),
  run_id: id('Run id'),
  request_id: Type.String({ minLength: 1, maxLength: 1024, description: 'The requestId the POST returned' }),
});

const humanRequestRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  app.post(
    '/:workflow_id/runs/:run_id/human-requests',
    {
      schema: {
        tags,
        operationId: 'createHumanRequest',
        summary: 'Ask a person a question on behalf of a step (human request)',
        description:
          "An agent executing node `nodeId` of the run asks a person: the request is stored on the run as a requirement (the run detail's " +
          '`requirements`, the approvals inbox GET /api/v1/approvals) and a person answers it with POST .../approve, `stepId` = `requestId`: ' +
          'free text (`userInput.response`; confirm answers without text) or, with `choices`, route_select of one choice; reject refuses. ' +
          'Nothing in the run waits for it (the run stays `running`); poll GET .../human-requests/{request_id} until it is answered, expired ' +
          '(`timeoutSeconds` after now) or cancelled (the run ended). 409 when the run has ended; 404 for an unknown workflow, run or node ' +
          "(not in the run's definitionSnapshot). Bounds: `prompt` ≤ 8 KiB, `context` ≤ 32 KiB, `choices` ≤ 32 KiB and the request as stored " +
          '(prompt and context count twice) ≤ 64 KiB, bytes of JSON, else 400 naming the field (`detail.details.field`); 409 `limit_reached` ' +
          'when the run has too many open human requests (default 100), stores too many requirements (default 1 000) or its document would ' +
          'grow past its budget for human requests (default 8 MiB; `detail.details.limit` says which); counted in the approvals rate limit (429). ' +
          "`approvers` (principals) name who alone may answer; without them the workflow's operators may (docs/guide/access-control.md).",
        params: RunParams,
        body: HumanRequestBody,
        response: { 201: HumanRequest, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      config: { rateLimitGroup: 'approvals', scope: 'workflows-control', workflowRole: 'operator' },
    },
    async (request, reply) => {
      const created = await createHumanRequest(services, request.params.workflow_id, request.params.run_id, request.body);
      return reply.status(201).send(created);
    },
  );

  app.get(
    '/:workflow_id/runs/:run_id/human-requests/:request_id',
    {
      schema: {
        tags,
        operationId: 'getHumanRequest',
        summary: 'Read a human request: pending, answered, expired or cancelled',
        description:
          'Where the request stands: `status` pending, answered (a person decided: `decision` approved with the `response` — the free text or ' +
          'the picked choice —, or blocked for a rejection, with its feedback as `response`), expired (`decision` blocked) or cancelled (the run ' +
          'ended first; blocked). `answeredBy` names the person. 404 for an unknown workflow, run or request id (`resource: requirement`).',
        params: HumanRequestParams,
        response: { 200: HumanRequest, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => getHumanRequest(services, request.params.workflow_id, request.params.run_id, request.params.request_id),
  );
};

export default humanRequestRoutes;
