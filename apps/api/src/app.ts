/**
 * The Fastify application without listening (STYLE.md §2.1): server.ts and the tests build the
 * same app, with the services they choose.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MAX_BODY_BYTES } from '@switchyard/domain';
import errorHandler from './plugins/error-handler.ts';
import httpErrors, { SERVER_ERROR_OPTIONS } from './plugins/http-errors.ts';
import { installJsonParser } from './plugins/json-body.ts';
import { installValidators } from './plugins/validation.ts';
import { installBodyGuard } from './plugins/body-guard.ts';
import { OneLinePerRequest } from './plugins/request-log.ts';
import { ssePlugin } from './plugins/sse.ts';
import swagger, { DOCS_PREFIX } from './plugins/swagger.ts';
import cors from './plugins/cors.ts';
import securityHeaders from './plugins/security-headers.ts';
import rateLimits, { clientAddress, type RateLimitOptions } from './plugins/rate-limits.ts';
import auth from './plugins/auth.ts';
import access from './access/plugin.ts';
import requestOrigin from './plugins/request-origin.ts';
import edgeLimits, { edgeServerOptions } from './plugins/edge-limits.ts';
import metricsPlugin from './plugins/metrics.ts';
import type { YamlParsePoolOptions } from './plugins/yaml-parse-pool.ts';
import { Authenticator, NO_AUTH } from './auth/authenticator.ts';
import { DEFAULT_EDGE, type EdgeConfig } from './config.ts';
import approvalRoutes from './routes/approvals.ts';
import auditRoutes from './routes/audit.ts';
import humanRequestRoutes from './routes/human-requests.ts';
import crossWorkflowRoutes from './routes/cross-workflow.ts';
import eventRoutes from './routes/events.ts';
import inboundEventRoutes from './routes/events-inbound.ts';
import executorRoutes from './routes/executors.ts';
import consoleRoutes from './routes/console.ts';
import runRoutes from './routes/runs.ts';
import scheduleRoutes from './routes/schedules.ts';
import directiveRoutes from './routes/directives.ts';
import workflowRoutes from './routes/workflows.ts';
import accessRoutes from './routes/access.ts';
import healthRoutes from './routes/health.ts';
import type { AppServices } from './services/index.ts';

import { API_PREFIX } from './api-prefix.ts';

export { API_PREFIX };

export interface BuildAppOptions {
  services: AppServices;
  /** A pino logger (the server's), or false for none. */
  logger?: FastifyBaseLogger | false;
  /** Serve Swagger UI at /docs (default true). */
  docs?: boolean;
  /**
   * Browser origins allowed to call the API (CORS, plugins/cors.ts): exact origins, or `['*']`.
   * Default none: no CORS headers, same-origin only.
   */
  corsOrigins?: readonly string[];
  /**
   * Per-client limits of the trigger and approval routes (plugins/rate-limits.ts). Default none:
   * nothing is limited, so tests and benches are never throttled; the server passes the
   * configured limits (on by default, see config.ts).
   */
  rateLimits?: RateLimitOptions;
  /**
   * Who may call what (plugins/auth.ts). Default: no authentication and the `x-switchyard-*`
   * headers ignored, every caller anonymous (what `SWITCHYARD_AUTH=none` means on loopback).
   */
  authenticator?: Authenticator;
  /**
   * Connection bounds, the `Host` allow-list and event-stream caps (config.ts `EdgeConfig`, README
   * "Security"); each field defaults to {@link DEFAULT_EDGE}.
   */
  edge?: Partial<EdgeConfig>;
  /** Bounds of the YAML body parser's threads (plugins/yaml-parse-pool.ts); each field has its default there. */
  yamlParser?: YamlParsePoolOptions;
}

/** Who a rate limit counts a request for: its authenticated user, else its client address. */
function callerKey(request: FastifyRequest): string {
  return request.identity.userId !== null ? `user:${request.identity.userId}` : clientAddress(request);
}

/**
 * Builds the app: error handling, connection bounds, security headers, CORS, the `Host` and
 * `Origin` checks, authentication and scopes, rate limits, OpenAPI, workflow and run routes, the
 * public probes /livez, /healthz and /readyz (routes/health.ts), and — when the services carry
 * {@link AppServices.metrics} — request timing and /metrics. The body limit is 1 MiB; JSON only (UTF-8, see plugins/json-body.ts).
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const edge: EdgeConfig = { ...DEFAULT_EDGE, ...options.edge };
  const serverLimits = edgeServerOptions(edge);
  const authenticator = options.authenticator ?? (await Authenticator.create(NO_AUTH));
  const app = Fastify({
    // At most one line per request at `info` (plugins/request-log.ts).
    ...(options.logger ? { loggerInstance: options.logger, logController: new OneLinePerRequest() } : { logger: false }),
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { ignoreTrailingSlash: true },
    // HTTP parser, router-level and shutdown errors get the common error body too.
    ...SERVER_ERROR_OPTIONS,
    ...serverLimits,
    http: { ...SERVER_ERROR_OPTIONS.http, ...serverLimits.http },
  }).withTypeProvider<TypeBoxTypeProvider>();
  installValidators(app);
  installJsonParser(app);
  installBodyGuard(app);
  await app.register(errorHandler, { publicText: options.services.publicText });
  await app.register(httpErrors);
  // Before every route: its onResponse hook times them all (by route pattern), and GET /metrics.
  if (options.services.metrics !== undefined) await app.register(metricsPlugin, { metrics: options.services.metrics });
  await app.register(edgeLimits, edge);
  // The edge, before any route: their hooks and onRoute hooks must see every route.
  await app.register(securityHeaders, { docsPrefix: DOCS_PREFIX });
  await app.register(cors, { origins: options.corsOrigins ?? [] });
  // Where the request comes from, before who sends it (DNS rebinding, cross-site requests).
  await app.register(requestOrigin, {
    allowedHosts: edge.allowedHosts,
    // Trusted-proxy headers are no credential: a rebound page could send them too.
    unauthenticated: !authenticator.required,
    corsOrigins: options.corsOrigins ?? [],
  });
  // Authentication before rate limits: a limit counts per caller once the caller is known.
  await app.register(auth, { authenticator });
  // Per-workflow roles after scopes (issue #18): every route addressing a workflow declares one.
  await app.register(access, { repos: options.services.repos });
  await app.register(rateLimits, { keyOf: callerKey, ...(options.rateLimits ?? { triggers: 0, approvals: 0 }) });
  await app.register(swagger, { ui: options.docs !== false });
  await app.register(workflowRoutes, { prefix: API_PREFIX, services: options.services, yamlParser: options.yamlParser });
  await app.register(accessRoutes, { prefix: API_PREFIX, services: options.services });
  await app.register(runRoutes, { prefix: API_PREFIX, services: options.services });
  await app.register(directiveRoutes, { prefix: API_PREFIX, services: options.services });
  await app.register(approvalRoutes, { prefix: API_PREFIX, services: options.services });
  await app.register(humanRequestRoutes, { prefix: API_PREFIX, services: options.services });
  await app.register(ssePlugin, { heartbeatInterval: 15_000 });
  await app.register(eventRoutes, {
    prefix: API_PREFIX,
    services: options.services,
    streams: { maxPerCaller: edge.sseMaxStreamsPerCaller, maxLifetimeMs: edge.sseMaxLifetimeMs, keyOf: callerKey },
  });
  await app.register(crossWorkflowRoutes, { prefix: '/api/v1', services: options.services });
  await app.register(executorRoutes, { prefix: '/api/v1', services: options.services });
  await app.register(auditRoutes, { prefix: '/api/v1', services: options.services });
  await app.register(scheduleRoutes, { prefix: '/api/v1', services: options.services });
  await app.register(inboundEventRoutes, { prefix: '/api/v1', services: options.services });
  await app.register(consoleRoutes);
  await app.register(healthRoutes, { services: options.services });
  return app;
}
