/**
 * Run routes (spec endpoints 7-9, 11-12, and DELETE of an ended run) under
 * /api/v1/workflows/{workflow_id}/runs.
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { deleteEndedRun, traceContextFromHeaders } from '@switchyard/runner';
import {
  ChildRunResponse,
  ConflictError,
  DryRunResponse,
  ErrorBody,
  NODE_RUN_PAGE_SIZE,
  type RunRecord,
  NodeRunDetail,
  NodeRunListQuery,
  NodeRunListResponse,
  NotFoundError,
  PageQuery,
  RunDetail,
  RunListQuery,
  RunListResponse,
  RetryRunBody,
  RerunNodeBody,
  SnapshotBudget,
  TriggerRunBody,
  TriggerRunResponse,
  pagination,
  requirementsOfNodeRun,
  toNodeRunDetail,
  toRequirementRecordView,
} from '@switchyard/domain';
import { API_PREFIX } from '../api-prefix.ts';
import { nodeRunViews, runDetail, runListPage } from '../services/run-views.ts';
import type { AppServices } from '../services/index.ts';
import { requireRun as requireRunOf, requireRunView, requireWorkflow } from '../services/workflow-service.ts';
import { startOnce } from '../services/idempotency.ts';
import { dryRunTrigger } from '../services/validation-service.ts';
import { replayRun, rerunNode, retryRun, triggerRun, type RetryRequest } from '../services/run-service.ts';
import { triggeringIdentity } from '../auth/identity.ts';
import { IdempotencyHeaders, NodeParams, NodeRunParams, RunParams, WorkflowParams } from './params.ts';

const tags = ['runs'];

/** What the descriptions of retry, replay and node rerun say of `Idempotency-Key` (services/idempotency.ts `startOnce`). */
const ONCE =
  'With an `Idempotency-Key` header the child run starts at most once per workflow and key for 24 h: a repeat gets the same runId (202); ' +
  'the key used for another start (a trigger, another source run or body) is a 409.';

/** The 202 body for a child run started by `what` (Retry, Replay, Node rerun). */
function childRunResponse(child: RunRecord, what: string): ChildRunResponse {
  return {
    runId: child.id,
    run_id: child.id,
    parentRunId: child.parentRunId ?? '',
    status: child.status,
    triggerSource: child.triggerSource,
    message: `${what} queued as run ${child.id}`,
  };
}

const runRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  const { repos } = services;
  const requireRun = (workflowId: string, runId: string) => requireRunOf(services, workflowId, runId);

  app.post(
    '/:workflow_id/runs',
    {
      schema: {
        tags,
        operationId: 'triggerRun', summary: 'Trigger a run',
        description:
          'Queues a run of an enabled workflow and returns at once (202); poll the run detail to follow it. With an `Idempotency-Key` ' +
          'header (1-255 printable ASCII characters) the run starts at most once per workflow and key for 24 h: a repeat with the same ' +
          'body returns the original run (202, same runId); a repeat with another body is a 409. With `dryRun: true` nothing starts: ' +
          '200 `{ valid, problems }` after the checks a trigger makes (enabled, definition still valid, input, dependencies). With tracing on, a ' +
          'valid W3C `traceparent` (and `tracestate`) header joins the run to the caller\'s trace; an invalid one is ignored.',
        params: WorkflowParams,
        headers: IdempotencyHeaders,
        body: TriggerRunBody,
        response: { 200: DryRunResponse, 202: TriggerRunResponse, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      config: { rateLimitGroup: 'triggers', scope: 'workflows-control', workflowRole: 'operator' },
      // Every field is optional, so a request without a body (e.g. `curl -X POST`) triggers with defaults.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const workflowId = request.params.workflow_id;
      if (request.body.dryRun === true) return reply.status(200).send(await dryRunTrigger(services, workflowId, request.body));
      const identity = triggeringIdentity(request.identity);
      // A W3C `traceparent` (+ `tracestate`) joins the run to the caller's trace; an invalid one is ignored (tracing off: always).
      const trace = traceContextFromHeaders(request.headers);
      const run = await startOnce(services, request.headers, workflowId, request.body, (runId) => triggerRun(services, workflowId, request.body, identity, runId, trace));
      return reply.status(202).send({
        runId: run.id,
        workflowDefinitionId: run.workflowDefinitionId,
        status: run.status,
        triggerSource: run.triggerSource,
        startedAt: run.startedAt.toISOString(),
        message: 'Workflow run queued successfully',
      });
    },
  );

  app.get(
    '/:workflow_id/runs',
    {
      schema: {
        tags,
        operationId: 'listRuns', summary: 'List runs of a workflow',
        description:
          'Newest first, each with its first node runs (at most 100; nodeRunCount and nodeRunsUrl tell the rest). ' +
          'Large snapshots are left out (null, sizes in omittedSnapshots): the node run detail has them.',
        params: WorkflowParams,
        querystring: RunListQuery,
        response: { 200: RunListResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const workflowId = request.params.workflow_id;
      await requireWorkflow(services, workflowId);
      const { status, includeNodeRuns = true, page = 1, perPage = 20 } = request.query;
      return runListPage(services, API_PREFIX, { workflowId, status }, page, perPage, includeNodeRuns);
    },
  );

  app.get(
    '/:workflow_id/runs/:run_id',
    {
      schema: {
        tags,
        operationId: 'getRun', summary: 'Get run detail',
        description:
          'The run with its first node runs (at most 100; nodeRunCount and nodeRunsUrl tell the rest). Large snapshots and gate ' +
          'outputs are left out (null, with their sizes): the node run detail has them.',
        params: RunParams,
        response: { 200: RunDetail, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const run = await requireRunView(services, request.params.workflow_id, request.params.run_id);
      return runDetail(repos, API_PREFIX, run, services.clock.now().getTime());
    },
  );

  app.get(
    '/:workflow_id/runs/:run_id/children',
    {
      schema: {
        tags,
        operationId: 'listChildRuns', summary: 'List the child runs of a run',
        description: 'Runs started from this one (retry, node rerun, replay: `parentRunId` is this run), newest first, shaped like the run list.',
        params: RunParams,
        querystring: PageQuery,
        response: { 200: RunListResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const run = await requireRun(request.params.workflow_id, request.params.run_id);
      const { page = 1, perPage = 20 } = request.query;
      // Children share their parent's workflow; the filter says so, so that a list never crosses workflows.
      return runListPage(services, API_PREFIX, { parentRunId: run.id, workflowId: run.workflowDefinitionId }, page, perPage);
    },
  );

  app.post(
    '/:workflow_id/runs/:run_id/retry',
    {
      schema: {
        tags,
        operationId: 'retryRun', summary: 'Retry an ended run',
        description:
          'Starts a child run (triggerSource "retry", parentRunId) on the source run\'s definition snapshot. Without a body, a full ' +
          'retry: the same input, every node run that completed in the source reused and its human decisions replayed, so only what did ' +
          'not complete executes. With a body, `resolvedDependencies` (default none) choose what is reused, as on a trigger, and ' +
          '`initialInput` replaces the input. 400 when the source has not ended or the workflow is disabled. ' + ONCE,
        headers: IdempotencyHeaders,
        params: RunParams,
        body: RetryRunBody,
        response: { 202: ChildRunResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { rateLimitGroup: 'triggers', scope: 'workflows-control', workflowRole: 'operator' },
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { workflow_id: workflowId, run_id: runId } = request.params;
      const identity = triggeringIdentity(request.identity);
      const child = await startOnce(services, request.headers, workflowId, { retry: runId, body: request.body }, (newRunId) =>
        retryRun(services, workflowId, runId, request.body as RetryRequest, identity, newRunId),
      );
      return reply.status(202).send(childRunResponse(child, 'Retry'));
    },
  );

  app.post(
    '/:workflow_id/runs/:run_id/replay',
    {
      schema: {
        tags,
        operationId: 'replayRun', summary: 'Replay a run',
        description:
          'Starts a child run (triggerSource "replay", parentRunId) on the current definition with the source run\'s input; nothing is reused, ' +
          'so the source may still be running. 400 when the workflow is disabled. ' + ONCE,
        headers: IdempotencyHeaders,
        params: RunParams,
        response: { 202: ChildRunResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { rateLimitGroup: 'triggers', scope: 'workflows-control', workflowRole: 'operator' },
    },
    async (request, reply) => {
      const { workflow_id: workflowId, run_id: runId } = request.params;
      const identity = triggeringIdentity(request.identity);
      const child = await startOnce(services, request.headers, workflowId, { replay: runId }, (newRunId) => replayRun(services, workflowId, runId, identity, newRunId));
      return reply.status(202).send(childRunResponse(child, 'Replay'));
    },
  );

  app.post(
    '/:workflow_id/runs/:run_id/nodes/:node_id/rerun',
    {
      schema: {
        tags,
        operationId: 'rerunNode',
        summary: 'Rerun one node of an ended run',
        description:
          'Starts a child run (triggerSource "node_rerun", parentRunId) on the source run\'s definition snapshot and input: everything before the ' +
          'target is reused from the source, the target executes afresh, and the run ends right after it (finalOutput = the target\'s output). ' +
          'Nodes nested in parallel, condition, router and loop containers can be targeted: the walk to the target replays the source\'s recorded ' +
          'branch decisions and reuses its siblings\' outputs; the target\'s own gates are asked again. Inside a loop, `iterationPath` names the ' +
          'iteration (`3`, `2/1`; default the target\'s last). 400 when the source has not ended, the workflow is disabled or the iteration path ' +
          'does not fit; 404 (`resource: node`) when the node is not in the source run\'s definition. ' + ONCE,
        headers: IdempotencyHeaders,
        params: NodeParams,
        body: RerunNodeBody,
        response: { 202: ChildRunResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { rateLimitGroup: 'triggers', scope: 'workflows-control', workflowRole: 'operator' },
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { workflow_id: workflowId, run_id: runId, node_id: nodeId } = request.params;
      const identity = triggeringIdentity(request.identity);
      const child = await startOnce(services, request.headers, workflowId, { rerun: runId, nodeId, body: request.body }, (newRunId) =>
        rerunNode(services, workflowId, runId, nodeId, request.body as RerunNodeBody, identity, newRunId),
      );
      return reply.status(202).send({ ...childRunResponse(child, `Node '${nodeId}' rerun`) });
    },
  );

  app.delete(
    '/:workflow_id/runs/:run_id',
    {
      schema: {
        tags,
        operationId: 'deleteRun', summary: 'Delete an ended run with its node runs and run events',
        description: 'Only a completed, failed or cancelled run can be deleted (409 otherwise). Child runs keep their parentRunId.',
        params: RunParams,
        response: { 204: Type.Null(), 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      config: { workflowRole: 'editor' },
    },
    async (request, reply) => {
      const { workflow_id: workflowId, run_id: runId } = request.params;
      const outcome = await deleteEndedRun(repos, workflowId, runId);
      if (outcome === 'not_found') {
        await requireWorkflow(services, workflowId);
        throw new NotFoundError('run');
      }
      if (outcome === 'not_ended') {
        const run = await repos.runs.get(runId);
        if (!run) throw new NotFoundError('run'); // deleted meanwhile by another request
        throw new ConflictError(`Run is ${run.status}: only an ended run (completed, failed or cancelled) can be deleted`, { currentStatus: run.status });
      }
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/:workflow_id/runs/:run_id/nodes',
    {
      schema: {
        tags,
        operationId: 'listNodeRuns', summary: 'List node runs of a run',
        description:
          'Ordered by startedAt ascending, 100 a page by default (perPage at most 100); an empty list when no node has started yet. ' +
          'Large snapshots are left out (null, sizes in omittedSnapshots): the node run detail has them.',
        params: RunParams,
        querystring: NodeRunListQuery,
        response: { 200: NodeRunListResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const run = await requireRun(request.params.workflow_id, request.params.run_id);
      const { page = 1, perPage = NODE_RUN_PAGE_SIZE } = request.query;
      const [heads, total] = await Promise.all([repos.nodeRuns.listHeads(run.id, (page - 1) * perPage, perPage), repos.nodeRuns.countByRun(run.id)]);
      const nodeRuns = await nodeRunViews(repos, heads, new SnapshotBudget(), run.pendingRequirements);
      return { runId: run.id, workflowId: run.workflowDefinitionId, nodeRuns, pagination: pagination(total, page, perPage) };
    },
  );

  app.get(
    '/:workflow_id/runs/:run_id/nodes/:node_run_id',
    { schema: { tags, operationId: 'getNodeRun', summary: 'Get node run detail', params: NodeRunParams, response: { 200: NodeRunDetail, 400: ErrorBody, 404: ErrorBody } }, config: { workflowRole: 'viewer' } },
    async (request) => {
      const run = await requireRun(request.params.workflow_id, request.params.run_id);
      const nodeRun = await repos.nodeRuns.get(run.id, request.params.node_run_id);
      if (!nodeRun) throw new NotFoundError('node_run');
      return toNodeRunDetail(nodeRun, {}, requirementsOfNodeRun(run.pendingRequirements, nodeRun).map((requirement) => toRequirementRecordView(requirement)));
    },
  );
};

export default runRoutes;
