/**
 * Run directives (issue "Run control" item 1; spec 3.1 "/pause, /resume, /cancel"):
 * POST /api/v1/workflows/{workflow_id}/runs/{run_id}/pause | /resume | /cancel.
 * The semantics live in @switchyard/runner `requestDirective` and domain `planDirective`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CancelRunBody, DirectiveResponse, ErrorBody, NotFoundError, type RunDirective } from '@switchyard/domain';
import { requestDirective, type DirectiveResult } from '@switchyard/runner';
import type { AppServices } from '../services/index.ts';
import { callerActor } from '../auth/identity.ts';
import { requireRun } from '../services/workflow-service.ts';
import { RunParams } from './params.ts';

const tags = ['runs'];

/** What each directive route says about itself in OpenAPI. */
const ROUTES: Record<RunDirective, { operationId: string; summary: string; description: string }> = {
  pause: {
    operationId: 'pauseRun',
    summary: 'Pause a run',
    description:
      'A pending, running or awaiting_approval run stops starting nodes at once; nodes already executing finish and are recorded, then the run ' +
      'is `paused` (`pausedAt`). A run nobody executes (pending, parked at its gates) is paused at once; a running one answers `status: running` ' +
      'with `pendingDirective: pause` until its executing nodes finish. Gates can still be decided while paused; the run goes on only after resume. ' +
      'Pausing a paused run is a no-op (200, `changed: false`); an ended run is 409.',
  },
  resume: {
    operationId: 'resumeRun',
    summary: 'Resume a paused run',
    description:
      'The run continues by re-traversal: nothing completed runs again, decisions taken while paused are consumed, and a gate still undecided ' +
      'puts it back to awaiting_approval. A pause not yet honoured is withdrawn. Resuming a run that is not paused is a no-op (200); an ended run is 409.',
  },
  cancel: {
    operationId: 'cancelRun',
    summary: 'Cancel a run',
    description:
      'Any run that has not ended becomes `cancelled`: in-flight executor calls are aborted (MCP requests are cancelled through the protocol), retry ' +
      'backoff waits end, node runs in flight end `cancelled`, undecided gates are closed (`decidedBy: run_ended`). The optional `reason` and who ' +
      'cancelled (the authenticated caller\'s username, else user id, else `api`) are stored on the run. Cancelling a cancelled run is a no-op (200); ' +
      'a completed or failed run is 409.',
  },
};

function responseOf(result: DirectiveResult, stepsCompleted: number): DirectiveResponse {
  return { runId: result.run.id, status: result.run.status, message: result.message, pendingDirective: result.run.pendingDirective ?? null, changed: result.changed, stepsCompleted };
}

const directiveRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  const deps = { repos: services.repos, clock: services.clock, engine: services.engine, logger: services.logger };
  for (const directive of ['pause', 'resume', 'cancel'] as const) {
    app.post(
      `/:workflow_id/runs/:run_id/${directive}`,
      {
        schema: {
          tags,
          ...ROUTES[directive],
          params: RunParams,
          ...(directive === 'cancel' ? { body: CancelRunBody } : {}),
          response: { 200: DirectiveResponse, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        },
        config: { rateLimitGroup: 'approvals', scope: 'workflows-control', workflowRole: 'operator' },
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => {
        const { workflow_id: workflowId, run_id: runId } = request.params;
        await requireRun(services, workflowId, runId);
        const reason = directive === 'cancel' ? ((request.body as CancelRunBody).reason ?? null) : null;
        const result = await requestDirective(deps, runId, { directive, requestedBy: callerActor(request.identity), reason });
        if (!result) throw new NotFoundError('run');
        return responseOf(result, await services.repos.nodeRuns.countCompletedSteps(runId));
      },
    );
  }
};

export default directiveRoutes;
