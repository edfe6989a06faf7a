/**
 * Per-client request limits (@fastify/rate-limit) on the routes that start work or decide it. A
 * route opts in with `config: { rateLimitGroup }`:
 *
 * - `triggers`: trigger, retry, replay, node rerun, event posts (`SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE`);
 * - `approvals`: approve, pause, resume, cancel, and human requests (POST .../human-requests: each
 *   adds to a run document, see domain run-bounds.ts) (`SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE`);
 * - `definitions`: create, update and validate a workflow, whose definition checks (every node,
 *   every CEL expression) cost the most CPU of any request (`SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE`).
 *
 * All routes of a group share one counter per client and minute (a fixed window that starts with
 * the client's first request; in memory, per instance). The request over the limit is refused in
 * `onRequest`, before its body is read: 429 `{ detail: { error: 'rate_limited', message } }` with
 * `Retry-After` (seconds until the window ends); every limited answer also carries
 * `X-RateLimit-Limit`, `-Remaining` and `-Reset`. Other routes (every GET included) are never limited.
 * A limit of 0 turns its group off; with both off the plugin adds nothing.
 *
 * A client is what `keyOf` says; by default its IP address (IPv6 by /64 network, as
 * @fastify/rate-limit does), i.e. the socket's peer, since the server does not trust
 * `X-Forwarded-For`. The app counts an authenticated caller by user id instead (app.ts).
 *
 * The 429 is declared in OpenAPI for every route of a group, whether or not limits are on
 * (error-responses.ts), so the document does not depend on the configuration.
 */
import fp from 'fastify-plugin';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';

/** The groups a route can count against. */
export const RATE_LIMIT_GROUPS = ['triggers', 'approvals', 'definitions'] as const;
export type RateLimitGroup = (typeof RATE_LIMIT_GROUPS)[number];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The per-client limit this route counts against (plugins/rate-limits.ts); none when unset. */
    rateLimitGroup?: RateLimitGroup;
  }
}

/** The window of every limit, ms. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** What each group's 429 message says it counts. */
const GROUP_NAMES: Readonly<Record<RateLimitGroup, string>> = {
  triggers: 'trigger requests (trigger, retry, replay, node rerun, event posts)',
  approvals: 'approval requests (approve, pause, resume, cancel, human requests)',
  definitions: 'definition requests (create, update, validate a workflow)',
};

export interface RateLimitOptions {
  /** Requests of the `triggers` group one client may send a minute; 0: unlimited. */
  triggers: number;
  /** Requests of the `approvals` group one client may send a minute; 0: unlimited. */
  approvals: number;
  /** Requests of the `definitions` group one client may send a minute; 0 or absent: unlimited. */
  definitions?: number;
  /** Who a request counts for (default {@link clientAddress}). */
  keyOf?: (request: FastifyRequest) => string;
}

/** The default client key: the peer's IP address, an IPv6 one reduced to its /64 network. */
export function clientAddress(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}

/** The error a refused request is answered with (the error handler turns it into the 429 body). */
function rateLimitedError(group: RateLimitGroup, max: number, ttlMs: number): Error {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  const error = new Error(`Too many ${GROUP_NAMES[group]}: at most ${max} a minute from one client; retry in ${seconds} s`);
  return Object.assign(error, { statusCode: 429, code: 'SWITCHYARD_RATE_LIMITED' });
}

export default fp(
  async function rateLimits(app: FastifyInstance, options: RateLimitOptions) {
    const limits: Record<RateLimitGroup, number> = { triggers: options.triggers, approvals: options.approvals, definitions: options.definitions ?? 0 };
    if (RATE_LIMIT_GROUPS.every((group) => limits[group] === 0)) return;
    // Not global: only the routes of a group are limited, through the hooks made below.
    await app.register(rateLimit, { global: false, keyGenerator: options.keyOf ?? clientAddress });
    // One limiter per group (one store each), shared by the group's routes: one counter per client.
    const limiters = new Map<RateLimitGroup, onRequestAsyncHookHandler>();
    for (const group of RATE_LIMIT_GROUPS) {
      if (limits[group] === 0) continue;
      const limiter = app.rateLimit({
        max: limits[group],
        timeWindow: RATE_LIMIT_WINDOW_MS,
        errorResponseBuilder: (_request, context) => rateLimitedError(group, context.max, context.ttl),
      });
      limiters.set(group, limiter as unknown as onRequestAsyncHookHandler);
    }
    app.addHook('onRoute', (route: RouteOptions) => {
      const group = route.config?.rateLimitGroup;
      if (group === undefined) return;
      if (!RATE_LIMIT_GROUPS.includes(group)) throw new Error(`Route ${route.url}: unknown rateLimitGroup '${String(group)}'`);
      const limiter = limiters.get(group);
      if (!limiter) return;
      // Route-level onRequest hooks run after the app's (CORS, security headers), so a 429 carries those headers too.
      const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
      route.onRequest = [...existing, limiter];
    });
  },
  { name: 'rate-limits' },
);
