/**
 * The per-workflow role each route needs (issue #18; domain access.ts). A route states it with
 * `config: { workflowRole }`; the access plugin (access/plugin.ts) checks it after the scope:
 *
 * - routes with a `:workflow_id` parameter: the caller's role on that workflow;
 * - `/api/v1/runs/:run_id`: the role on the run's workflow;
 * - `'admin'`: only callers with the `workflows-admin` scope (or without authentication).
 *
 * A workflow or run that does not exist is left to the handler (its 404).
 */
import type { Role } from '@switchyard/domain';

/** What {@link FastifyContextConfig.workflowRole} may name. */
export type RouteRole = Role | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The role on the addressed workflow this route needs (access/route-roles.ts); none: no per-workflow check. */
    workflowRole?: RouteRole;
  }
}
