/**
 * The access plugin (issue #18; spec workflow-management-api.md §2.10–2.15 "Required Permission:
 * VIEW on the workflow (enforced via resource ACL)"): after the auth plugin checked the route's
 * scope, checks the caller's role on the addressed workflow (`config.workflowRole`,
 * access/route-roles.ts) in `preHandler`, and sets `request.workflowRole` for handlers that decide
 * more finely (a gate's approvers, access/decision-guard.ts).
 *
 * - No authentication (`SWITCHYARD_AUTH=none`): every caller is `user:anonymous` with every right.
 * - The `workflows-admin` scope acts as owner of every workflow.
 * - A workflow or run that does not exist is a 404: for a run without its workflow (left behind
 *   by a delete that raced a trigger, or half done), no one but an admin has a role, so no one
 *   else learns of it.
 * - A route under `/api/` whose path addresses a workflow or a run must declare its role: a
 *   route that forgets is refused at start-up, so no door opens by omission.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { AccessDeniedError, NotFoundError, PermissionDeniedError, roleIncludes, type Role } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import { ADMIN_SCOPE, isAdmin, type CallerIdentity } from '../auth/identity.ts';
import { roleOn } from './visibility.ts';
import type { RouteRole } from './route-roles.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's role on the workflow the route addresses (set by access/plugin.ts when the route declares `workflowRole`); null otherwise. */
    workflowRole: Role | null;
  }
}

/** Options of the access plugin: the repositories it reads access lists (and run → workflow) from. */
export interface AccessPluginOptions {
  repos: Pick<Repositories, 'definitions' | 'runs'>;
}

/** Path parameters that address a workflow's resources. */
const ADDRESSING_PARAMS = [':workflow_id', ':run_id'];

/** Throws at start-up for an `/api/` route addressing a workflow or run without a declared role. */
function requireDeclaredRole(route: RouteOptions): void {
  if (!route.url.startsWith('/api/') || route.config?.workflowRole !== undefined) return;
  if (ADDRESSING_PARAMS.some((param) => route.url.includes(param))) {
    throw new Error(`Route ${String(route.method)} ${route.url} addresses a workflow or run but declares no config.workflowRole (access/route-roles.ts)`);
  }
}

/**
 * The caller's role on workflow `workflowId` when it includes `required`. Throws
 * {@link AccessDeniedError} (403 `permission_denied`, `details: { requiredRole, workflowId }`, or
 * `{ requiredRole, runId }` when the workflow was found through run `viaRunId`: its id is not
 * told) when it does not, and NotFoundError (404) when the workflow does not exist — except to
 * an admin, whose request goes on to the handler (null).
 */
async function checkWorkflowRole(repos: AccessPluginOptions['repos'], identity: CallerIdentity, workflowId: string, required: Role, viaRunId?: string): Promise<Role | null> {
  const access = await repos.definitions.accessOf(workflowId);
  if (access === null) {
    if (isAdmin(identity)) return null;
    throw viaRunId === undefined ? new NotFoundError('workflow') : new NotFoundError('run');
  }
  const role = roleOn(identity, access);
  if (!roleIncludes(role, required)) throw viaRunId === undefined ? new AccessDeniedError(required, workflowId) : new AccessDeniedError(required, null, viaRunId);
  return role;
}

export default fp(
  async function access(app: FastifyInstance, options: AccessPluginOptions) {
    const { repos } = options;
    app.decorateRequest('workflowRole', null);
    app.addHook('onRoute', requireDeclaredRole);
    app.addHook('preHandler', async (request) => {
      const required: RouteRole | undefined = request.routeOptions.config?.workflowRole;
      if (required === undefined) return;
      const identity = request.identity;
      if (required === 'admin') {
        if (!isAdmin(identity)) throw new PermissionDeniedError(ADMIN_SCOPE, identity.scopes);
        return;
      }
      if (identity.unrestricted) {
        request.workflowRole = 'owner';
        return;
      }
      const params = request.params as { workflow_id?: string; run_id?: string };
      if (params.workflow_id !== undefined) {
        request.workflowRole = await checkWorkflowRole(repos, identity, params.workflow_id, required);
      } else if (params.run_id !== undefined) {
        // A run addressed alone: the role on its workflow. An unknown run is the handler's 404.
        const workflowId = await repos.runs.workflowIdOf(params.run_id);
        if (workflowId !== null) request.workflowRole = await checkWorkflowRole(repos, identity, workflowId, required, params.run_id);
      }
    });
  },
  { name: 'switchyard-access', dependencies: ['switchyard-auth'] },
);
