/**
 * The auth plugin (issue 9 item 7): authenticates every `/api/` request in `onRequest` (before
 * its body is read, before rate limits, which count per identity) and checks the scope the route
 * requires (auth/scopes.ts); sets `request.identity` for the handlers (who triggers, decides,
 * cancels). Public routes (the probes, `/docs`) get the anonymous identity.
 *
 * In OpenAPI every `/api/` operation lists its scope as the role of both security schemes
 * (`bearerAuth`: a JWT or an API key; `apiKeyHeader`: `X-API-Key`) and declares 401 and 403.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { Authenticator, NO_AUTH, authorize } from '../auth/authenticator.ts';
import { ANONYMOUS, type CallerIdentity } from '../auth/identity.ts';
import { KeySetUnavailableError } from '../auth/jwt.ts';
import { requiredScopeOf } from '../auth/scopes.ts';
import { AuthenticationError } from '@switchyard/domain';
import { errorBody } from './error-body.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller (plugins/auth.ts); anonymous on public routes and without authentication. */
    identity: CallerIdentity;
  }
}

/** Names of the security schemes in the OpenAPI document. */
export const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'A JWT (SWITCHYARD_AUTH=jwt) or an API key (SWITCHYARD_AUTH=api-key)' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (SWITCHYARD_AUTH=api-key)' },
} as const;

export interface AuthPluginOptions {
  /** Default: no authentication, proxy headers ignored ({@link NO_AUTH}). */
  authenticator?: Authenticator;
}

/** Sets the route's scope in its config and documents it (the `onRoute` hook). */
function declareScope(route: RouteOptions): void {
  const scope = requiredScopeOf(route);
  if (scope === null) return;
  route.config = { ...route.config, scope };
  const schema = route.schema as (RouteOptions['schema'] & { hide?: boolean; security?: unknown; response?: Record<string, unknown> }) | undefined;
  if (schema === undefined || schema.hide === true) return;
  route.schema = { ...schema, security: [{ bearerAuth: [scope] }, { apiKeyHeader: [scope] }] } as RouteOptions['schema'];
}

export default fp(
  async function auth(app: FastifyInstance, options: AuthPluginOptions) {
    const authenticator = options.authenticator ?? (await Authenticator.create(NO_AUTH));
    app.decorateRequest('identity', null as unknown as CallerIdentity);
    app.addHook('onRoute', declareScope);
    app.addHook('onRequest', async (request, reply) => {
      request.identity = ANONYMOUS;
      const scope = request.routeOptions.config?.scope;
      if (scope === undefined) return;
      try {
        request.identity = await authenticator.authenticate(request.headers, request.raw.rawHeaders);
      } catch (error) {
        if (error instanceof KeySetUnavailableError) {
          request.log.warn({ err: error.cause }, 'JWKS unavailable');
          return reply.code(503).header('retry-after', '30').send(errorBody('service_unavailable', error.message));
        }
        if (error instanceof AuthenticationError) reply.header('www-authenticate', 'Bearer realm="switchyard"');
        throw error;
      }
      authorize(request.identity, scope);
    });
  },
  { name: 'switchyard-auth', dependencies: ['error-handler'] },
);
