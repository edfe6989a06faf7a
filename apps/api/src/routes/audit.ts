/**
 * The workflow audit trail (issue #18 item 6; docs/guide/audit.md), under /api/v1:
 *
 * - `GET /workflows/{workflow_id}/audit` — viewers of the workflow read its trail (404 once the
 *   workflow is deleted);
 * - `GET /audit?workflowId=` — admins (`workflows-admin`) read any workflow's trail, also of a
 *   deleted one.
 *
 * Both answer one page (`perPage` ≤ 100), newest entry first. Entries are written by
 * services/audit-trail.ts only.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AdminAuditListQuery, AuditListQuery, AuditListResponse, ErrorBody, MAX_AUDIT_PER_PAGE, pagination, toAuditEntryView, type AuditListResponse as AuditPage } from '@switchyard/domain';
import type { AppServices } from '../services/index.ts';
import { flushAuditOutbox } from '../services/audit-trail.ts';
import { requireWorkflow } from '../services/workflow-service.ts';
import { WorkflowParams } from './params.ts';

const tags = ['workflows'];

const CATALOGUE =
  'Entry types: `workflow.created` {name, version}, `workflow.updated` {fromVersion, toVersion, fields}, `workflow.toggled` {enabled}, ' +
  '`workflow.deleted` {name}, `access.changed` {before, after}, `schedule.created` / `schedule.deleted` {scheduleId, name}, ' +
  '`schedule.updated` {scheduleId, name, fields}, `schedule.paused` / `schedule.resumed` {scheduleId, name, note}; ' +
  'each with its `actor` {userId, username, via} and `createdAt`. ' +
  `Newest first; \`perPage\` 1..${MAX_AUDIT_PER_PAGE} (default 20).`;

const auditRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  /** One page of `workflowId`'s trail as the API shows it. */
  const page = async (workflowId: string, pageNumber: number, perPage: number): Promise<AuditPage> => {
    await flushAuditOutbox(services, workflowId);
    const { items, total } = await services.repos.audit.list(workflowId, pageNumber, perPage);
    return { workflowId, entries: items.map(toAuditEntryView), pagination: pagination(total, pageNumber, perPage) };
  };

  app.get(
    '/workflows/:workflow_id/audit',
    {
      schema: {
        tags,
        operationId: 'listWorkflowAudit',
        summary: "List a workflow's audit trail",
        description: `Who changed the workflow's definition or access, and when. Needs the viewer role on the workflow (else 403). ${CATALOGUE} A deleted workflow answers 404: admins read its trail with GET /api/v1/audit.`,
        params: WorkflowParams,
        querystring: AuditListQuery,
        response: { 200: AuditListResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const { workflow_id: workflowId } = request.params;
      await requireWorkflow(services, workflowId);
      return page(workflowId, request.query.page ?? 1, request.query.perPage ?? 20);
    },
  );

  app.get(
    '/audit',
    {
      schema: {
        tags,
        operationId: 'listAudit',
        summary: "List any workflow's audit trail, also of a deleted one (admins)",
        description: `Only for callers with the \`workflows-admin\` scope (else 403). \`workflowId\` is required (400 without it); a workflow that never existed, or has no entries, answers an empty page. ${CATALOGUE}`,
        querystring: AdminAuditListQuery,
        response: { 200: AuditListResponse, 400: ErrorBody },
      },
      config: { workflowRole: 'admin' },
    },
    async (request) => page(request.query.workflowId, request.query.page ?? 1, request.query.perPage ?? 20),
  );
};

export default auditRoutes;
