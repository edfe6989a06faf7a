/**
 * Workflow definition routes (spec endpoints 1-6) under /api/v1/workflows.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  ErrorBody,
  ToggleBody,
  ValidationResult,
  WorkflowCreateBody,
  WorkflowDetail,
  WorkflowListQuery,
  WorkflowListResponse,
  WorkflowUpdateBody,
  pagination,
  toWorkflowDetail,
  toWorkflowSummary,
} from '@switchyard/domain';
import type { AppServices } from '../services/index.ts';
import { createWorkflow, deleteWorkflow, requireWorkflow, toggleWorkflow, updateWorkflow } from '../services/workflow-service.ts';
import { validateDefinition } from '../services/validation-service.ts';
import { WorkflowParams } from './params.ts';
import { callerActor, creatorPrincipal, isAdmin, principalsOf } from '../auth/identity.ts';
import { YAML_MEDIA_TYPES, installYamlParser } from '../plugins/yaml-body.ts';
import type { YamlParsePoolOptions } from '../plugins/yaml-parse-pool.ts';
import { ANSWER_MEDIA_TYPES, sendNegotiated } from '../plugins/yaml-reply.ts';

const tags = ['workflows'];

/** Body types of the routes that take a definition (create, update, validate): JSON or YAML (plugins/yaml-body.ts). */
const DEFINITION_BODY_TYPES = ['application/json', ...YAML_MEDIA_TYPES];

/** What the OpenAPI document says about YAML bodies. */
const YAML_BODY_NOTE =
  ' The body may be YAML instead of JSON (`Content-Type: application/yaml`, `application/x-yaml` or `text/yaml`, UTF-8): one ' +
  'document, YAML 1.2 core schema, same limits and errors as JSON; a YAML error is a 400 naming its line and column ' +
  '(docs/guide/yaml.md).';

const workflowRoutes: FastifyPluginAsyncTypebox<{ services: AppServices; yamlParser?: YamlParsePoolOptions }> = async (app, { services, yamlParser }) => {
  app.get(
    '',
    {
      schema: {
        tags,
        operationId: 'listWorkflows', summary: 'List workflows',
        description:
          '`query` matches name or description (case-insensitive, literal text); `tag` keeps the workflows carrying that tag ' +
          '(exact match); `enabled` keeps enabled (true) or disabled (false) ones; all may be combined. Newest first. `includeRunning=true` adds `runningCount` to each workflow: its ' +
          'runs that have not ended (pending, running, paused, awaiting_approval).',
        querystring: WorkflowListQuery,
        response: { 200: WorkflowListResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { query, tag, enabled, includeRunning = false, page = 1, perPage = 20 } = request.query;
      const visibleTo = isAdmin(request.identity) ? undefined : principalsOf(request.identity);
      const { items, total } = await services.repos.definitions.list({ search: query || undefined, tag, enabled, visibleTo }, page, perPage);
      const running = includeRunning ? await services.repos.runs.countUnfinishedByWorkflow(items.map((item) => item.id)) : null;
      return {
        workflows: items.map((item) => toWorkflowSummary(item, running ? (running.get(item.id) ?? 0) : undefined)),
        pagination: pagination(total, page, perPage),
      };
    },
  );

  app.get(
    '/:workflow_id',
    {
      schema: {
        tags,
        operationId: 'getWorkflow', summary: 'Get workflow detail',
        description:
          'JSON by default; `Accept: application/yaml` (or `application/x-yaml`, `text/yaml`) answers the same document as YAML ' +
          '(`application/yaml; charset=utf-8`), which parses back to a value equal to the JSON answer. `*/*` gets JSON.',
        produces: ANSWER_MEDIA_TYPES,
        params: WorkflowParams,
        response: { 200: WorkflowDetail, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request, reply) => sendNegotiated(request, reply, toWorkflowDetail(await requireWorkflow(services, request.params.workflow_id))),
  );

  // The routes that take a definition, in a scope of their own: only they parse YAML bodies.
  await app.register(definitionRoutes, { services, yamlParser });

  app.delete(
    '/:workflow_id',
    {
      schema: {
        tags,
        operationId: 'deleteWorkflow', summary: 'Delete a workflow with its runs, node runs and run events',
        params: WorkflowParams,
        response: { 204: Type.Null(), 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'editor' },
    },
    async (request, reply) => {
      await deleteWorkflow(services, request.params.workflow_id, callerActor(request.identity));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/:workflow_id/toggle',
    {
      schema: {
        tags,
        operationId: 'toggleWorkflow', summary: 'Enable or disable a workflow',
        params: WorkflowParams,
        body: ToggleBody,
        response: { 200: WorkflowDetail, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'editor' },
    },
    async (request) => toWorkflowDetail(await toggleWorkflow(services, request.params.workflow_id, request.body.enabled, callerActor(request.identity))),
  );
};

/** Create, validate and update: the routes whose body is a definition, JSON or YAML. */
const definitionRoutes: FastifyPluginAsyncTypebox<{ services: AppServices; yamlParser?: YamlParsePoolOptions }> = async (app, { services, yamlParser }) => {
  installYamlParser(app, yamlParser);

  app.post(
    '',
    {
      schema: {
        tags,
        operationId: 'createWorkflow', summary: 'Create a workflow',
        description: 'Workflows are always created disabled; enable them with POST /{workflow_id}/toggle.' + YAML_BODY_NOTE,
        consumes: DEFINITION_BODY_TYPES,
        body: WorkflowCreateBody,
        response: { 201: WorkflowDetail, 400: ErrorBody, 409: ErrorBody },
      },
      config: { rateLimitGroup: 'definitions' },
    },
    async (request, reply) =>
      reply.status(201).send(toWorkflowDetail(await createWorkflow(services, request.body, callerActor(request.identity), creatorPrincipal(request.identity)))),
  );

  app.post(
    '/validate',
    {
      schema: {
        tags,
        operationId: 'validateWorkflow', summary: 'Validate a workflow definition without saving it',
        description:
          'Checks a create body as POST /workflows would (node rules, executors, CEL expressions, limits) and answers 200 ' +
          '`{ valid, problems }`; a body of the wrong shape is still a 400. The name is not checked for uniqueness.' + YAML_BODY_NOTE,
        consumes: DEFINITION_BODY_TYPES,
        body: WorkflowCreateBody,
        response: { 200: ValidationResult, 400: ErrorBody },
      },
      config: { rateLimitGroup: 'definitions' },
    },
    async (request) => validateDefinition(services, request.body),
  );

  app.put(
    '/:workflow_id',
    {
      schema: {
        tags,
        operationId: 'updateWorkflow', summary: 'Update a workflow',
        description:
          'Every field is optional. A change of name, description, canvas or nodes bumps `version`; `enabled` and `tags` do not. Needs the ' +
          "editor role; a change of who decides a gate (any node's `humanReview.approvers` or `allowSelfApproval`) needs the owner role (403 " +
          '`permission_denied`, `requiredRole: owner`, nothing changed).' + YAML_BODY_NOTE,
        params: WorkflowParams,
        consumes: DEFINITION_BODY_TYPES,
        body: WorkflowUpdateBody,
        response: { 200: WorkflowDetail, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      config: { rateLimitGroup: 'definitions', workflowRole: 'editor' },
    },
    async (request) => toWorkflowDetail(await updateWorkflow(services, request.params.workflow_id, request.body, callerActor(request.identity), request.workflowRole)),
  );
};

export default workflowRoutes;
