/**
 * A workflow's access list (issue #18 item 2): GET and PUT /api/v1/workflows/{workflow_id}/access.
 * Roles, principals and defaults: docs/guide/access-control.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ErrorBody, ROLES, WorkflowAccess, WorkflowAccessBody } from '@switchyard/domain';
import type { AppServices } from '../services/index.ts';
import { getAccess, replaceAccess } from '../services/access-service.ts';
import { WorkflowParams } from './params.ts';
import { recordAudit } from '../services/audit-trail.ts';
import { callerActor } from '../auth/identity.ts';

const tags = ['access'];

/** The answer of both routes. */
const AccessResponse = Type.Object(
  {
    workflowId: Type.String(),
    access: WorkflowAccess,
    callerRole: Type.Union([Type.Enum([...ROLES]), Type.Null()], { description: "The caller's own role on the workflow (admins: owner)" }),
  },
  { title: 'AccessResponse' },
);

const accessRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  app.get(
    '/:workflow_id/access',
    {
      schema: {
        tags,
        operationId: 'getWorkflowAccess',
        summary: "Read a workflow's access list",
        description:
          'Who holds which role: `owners` (change the access), `editors` (update, toggle, delete), `operators` (trigger, control runs, decide gates ' +
          'that name no approvers), `viewers` (read); each role includes the ones after it in this list. Principals are `user:<sub>`, ' +
          '`group:<name>` or `*` (every authenticated caller). Needs the viewer role.',
        params: WorkflowParams,
        response: { 200: AccessResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => getAccess(services, request.params.workflow_id, request.workflowRole),
  );

  app.put(
    '/:workflow_id/access',
    {
      schema: {
        tags,
        operationId: 'replaceWorkflowAccess',
        summary: "Replace a workflow's access list",
        description:
          'Owners only (or the `workflows-admin` scope). The body replaces every list; roles left out become empty; duplicates count once; ' +
          'at most 100 principals a role. 400 when `owners` is empty: a workflow always keeps at least one owner. Recorded in the audit trail ' +
          '(`access.changed`, with the lists before and after).',
        params: WorkflowParams,
        body: WorkflowAccessBody,
        response: { 200: AccessResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'owner', rateLimitGroup: 'definitions' },
    },
    async (request) => {
      const { before, after } = await replaceAccess(services, request.params.workflow_id, request.body);
      // A PUT that changes nothing records nothing, as for the definition itself.
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        await recordAudit(services, request.params.workflow_id, 'access.changed', callerActor(request.identity), { before, after });
      }
      return { workflowId: request.params.workflow_id, access: after, callerRole: request.workflowRole };
    },
  );
};

export default accessRoutes;
