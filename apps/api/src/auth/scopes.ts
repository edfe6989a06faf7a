/**
 * Scopes (issue 9 item 7; spec "Required Permission/Scope" notes) and which one each route needs:
 *
 * - `workflows-read`: every GET (definitions, runs, node runs, events, approvals inbox, executors);
 * - `workflows-write`: create, update, delete and toggle workflows, validate definitions, delete runs;
 * - `workflows-control`: trigger, approve, pause/resume/cancel, retry/rerun/replay, human requests;
 * - `events-write`: post events (`POST /api/v1/events`), which start runs of every enabled workflow with a
 *   matching trigger whatever the caller's role on it (docs/guide/event-triggers.md); given only when named;
 * - `workflows-admin`: acts as owner of every workflow (issue #18; per-workflow roles: apps/api/src/access/);
 *   it does not stand in for the three scopes above, which a request still needs.
 *
 * A route states its scope with `config: { scope }`; without one, GET/HEAD need `workflows-read`
 * and other methods `workflows-write`. Routes outside `/api/` (the probes `/livez`, `/healthz`, `/readyz`; `/docs`) are public.
 */
import type { RouteOptions } from 'fastify';

/** Every scope, from least to most powerful. */
export const SCOPES = ['workflows-read', 'workflows-write', 'workflows-control', 'events-write', 'workflows-admin'] as const;
export type Scope = (typeof SCOPES)[number];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a caller needs for this route (auth/scopes.ts); set for every `/api/` route by the auth plugin. */
    scope?: Scope;
  }
}

/** True for one of {@link SCOPES}. */
export function isScope(value: unknown): value is Scope {
  return (SCOPES as readonly unknown[]).includes(value);
}

/** The scope `route` requires; null for a public route. */
export function requiredScopeOf(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): Scope | null {
  if (!route.url.startsWith('/api/')) return null;
  if (route.config?.scope !== undefined) return route.config.scope;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.every((method) => method === 'GET' || method === 'HEAD') ? 'workflows-read' : 'workflows-write';
}
