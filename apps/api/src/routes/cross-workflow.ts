/**
 * Runs and approvals addressed without their workflow, under /api/v1 (issue "Run control" item
 * 8): `GET /runs` (across workflows), `GET /runs/{run_id}`, and `GET /approvals`, the inbox of
 * undecided HITL gates a person (or the MCP bridge) works through.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AllRunsQuery,
  AllRunsResponse,
  ApprovalListQuery,
  ApprovalListResponse,
  ErrorBody,
  NotFoundError,
  RunDetailWithWorkflow,
  SnapshotBudget,
  pagination,
  toRequirementSummary,
  undecidedRequirements,
  type PendingApproval,
  type RequirementRecord,
} from '@switchyard/domain';
import { API_PREFIX } from '../api-prefix.ts';
import type { AppServices } from '../services/index.ts';
import { runDetail, runListPage } from '../services/run-views.ts';
import { RunIdParams } from './params.ts';
import { roleOn, visibleWorkflowIds } from '../access/visibility.ts';
import { decisionRefusal, deciderOf, type Decider } from '../access/decision-guard.ts';

const tags = ['runs'];

/** Most runs with undecided gates `GET /approvals` looks through (oldest first). */
const APPROVAL_SCAN_RUNS = 1_000;

const crossWorkflowRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  const { repos } = services;

  app.get(
    '/runs',
    {
      schema: {
        tags,
        operationId: 'listAllRuns', summary: 'List runs across workflows',
        description:
          'Newest first; each row is a run summary (as in the run list of a workflow) with its workflow name. Only runs of workflows the caller ' +
          'may view are listed (and counted in `pagination`).',
        querystring: AllRunsQuery,
        response: { 200: AllRunsResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { status, workflowId, triggerSource, includeNodeRuns = true, page = 1, perPage = 20 } = request.query;
      const workflowIds = await visibleWorkflowIds(repos, request.identity);
      const listed = await runListPage(services, API_PREFIX, { status, workflowId, triggerSource, workflowIds }, page, perPage, includeNodeRuns);
      const names = await repos.definitions.namesOf(listed.runs.map((run) => run.workflowDefinitionId));
      return { runs: listed.runs.map((row) => ({ ...row, workflowName: names.get(row.workflowDefinitionId) ?? null })), pagination: listed.pagination };
    },
  );

  app.get(
    '/runs/:run_id',
    {
      schema: {
        tags,
        operationId: 'getRunById', summary: 'Get a run by id alone',
        description: 'The run detail, as under its workflow, with the workflow name.',
        params: RunIdParams,
        response: { 200: RunDetailWithWorkflow, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const run = await repos.runs.get(request.params.run_id);
      if (!run) throw new NotFoundError('run');
      const names = await repos.definitions.namesOf([run.workflowDefinitionId]);
      return { ...(await runDetail(repos, API_PREFIX, run, services.clock.now().getTime())), workflowName: names.get(run.workflowDefinitionId) ?? null };
    },
  );

  app.get(
    '/approvals',
    {
      schema: {
        tags,
        operationId: 'listApprovals', summary: 'List undecided HITL gates across runs',
        description:
          'Every undecided requirement of runs that can still be decided (running, awaiting approval, paused), oldest request first, ' +
          `with its run and workflow; decide one with POST .../runs/{run_id}/approve. Looks through the ${APPROVAL_SCAN_RUNS} oldest such runs. ` +
          'Only runs of workflows the caller may view are listed; each row says who may decide it (`approvers`) and whether the caller may ' +
          '(`canDecide`: approvers, its role on the workflow and four-eyes applied); `mine=true` keeps the rows it may decide.',
        querystring: ApprovalListQuery,
        response: { 200: ApprovalListResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { runId, workflowId, nodeId, mine = false, page = 1, perPage = 20 } = request.query;
      const workflowIds = await visibleWorkflowIds(repos, request.identity);
      const runs = await repos.runs.listWithUndecided({ runId, workflowId, workflowIds }, APPROVAL_SCAN_RUNS);
      const ids = runs.map((run) => run.workflowDefinitionId);
      const [names, accesses] = await Promise.all([repos.definitions.namesOf(ids), repos.definitions.accessesOf(ids)]);
      const deciders = new Map<string, Decider>();
      const deciderFor = (id: string): Decider => {
        let decider = deciders.get(id);
        if (!decider) deciders.set(id, (decider = deciderOf(request.identity, roleOn(request.identity, accesses.get(id)))));
        return decider;
      };
      const gates = runs
        .flatMap((run) =>
          undecidedRequirements(run).map((requirement) => ({ run, requirement, canDecide: decisionRefusal(deciderFor(run.workflowDefinitionId), run, requirement) === null })),
        )
        .filter(({ requirement, canDecide }) => (nodeId === undefined || requirement.nodeId === nodeId) && (!mine || canDecide))
        .sort((a, b) => a.requirement.requestedAt.getTime() - b.requirement.requestedAt.getTime());
      const start = (page - 1) * perPage;
      const shown = gates.slice(start, start + perPage);
      // The scan leaves gate outputs out; read them for the runs on this page only.
      const full = new Map<string, Map<string, RequirementRecord>>();
      for (const runId of new Set(shown.map(({ run }) => run.id))) {
        full.set(runId, new Map((await repos.runs.requirementsOf(runId)).map((requirement) => [requirement.gateKey, requirement])));
      }
      const budget = new SnapshotBudget(); // gate outputs are inlined within the response's budget
      const approvals: PendingApproval[] = shown.map(({ run, requirement, canDecide }) => ({
        runId: run.id,
        workflowId: run.workflowDefinitionId,
        workflowName: names.get(run.workflowDefinitionId) ?? null,
        runStatus: run.status,
        nodeId: requirement.nodeId,
        iterationPath: requirement.iterationPath,
        phase: requirement.phase,
        requestedAt: requirement.requestedAt.toISOString(),
        requirement: toRequirementSummary(full.get(run.id)?.get(requirement.gateKey) ?? requirement, budget),
        approvers: requirement.approvers ?? null,
        canDecide,
      }));
      return { approvals, pagination: pagination(gates.length, page, perPage) };
    },
  );
};

export default crossWorkflowRoutes;
