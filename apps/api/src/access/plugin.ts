/**
 * The access plugin (issue #18; spec workflow-management-api.md §2.10–2.15 "Required Permission:
 * VIEW on the workflow (enforced via resource ACL)"): after the auth plugin checked the route's
 * scope, checks the caller's role on the addressed workflow (`config.workflowRole`,
 * access/route-roles.ts) in `preHandler`, and sets `request.workflowRole` for handlers that decide
 * more finely (a gate's approvers, services/approval-guard.ts).
 *
 * - No authentication (`SWITCHYARD_AUTH=none`): every caller is `user:anonymous` with every right.
 * - The `workflows-admin` scope acts as owner of every workflow.
 * - A workflow (or run) that does not exist is left to the handler: its 404.
 * - A route under `/api/` whose path addresses a workflow or a run must declare its role: a
 *   route that forgets is refused at start-up, so no door opens by omission.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { AccessDeniedError, PermissionDeniedError, roleIncludes, roleOf, type Role } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import { ADMIN_SCOPE, isAdmin, principalsOf } from '../auth/identity.ts';
import type { RouteRole } from './route-roles.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's role on the workflow the route addresses (set by access/plugin.ts when the route declares `workflowRole`); null otherwise. */
    workflowRole: Role | null;
  }
}

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
 * The caller's role on workflow `workflowId` and whether it includes `required`. Throws
 * {@link AccessDeniedError} (403 `permission_denied`, `details: { requiredRole, workflowId }`)
 * when it does not; returns null when the workflow does not exist.
 */
export async function checkWorkflowRole(
  repos: AccessPluginOptions['repos'],
  identity: Parameters<typeof principalsOf>[0],
  workflowId: string,
  required: Role,
): Promise<Role | null> {
  const access = await repos.definitions.accessOf(workflowId);
  if (access === null) return null;
  const role = isAdmin(identity) ? 'owner' : roleOf(access, principalsOf(identity));
  if (!roleIncludes(role, required)) throw new AccessDeniedError(required, workflowId);
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
      const workflowId = params.workflow_id ?? (params.run_id === undefined ? null : await repos.runs.workflowIdOf(params.run_id));
      if (workflowId === null) return;
      request.workflowRole = await checkWorkflowRole(repos, identity, workflowId, required);
    });
  },
  { name: 'switchyard-access', dependencies: ['switchyard-auth'] },
);
