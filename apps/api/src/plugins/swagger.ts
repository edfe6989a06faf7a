/**
 * OpenAPI 3.1 generation from the route schemas (@fastify/swagger) and Swagger UI at /docs.
 * `npm run openapi` writes the document to openapi/openapi.json; a test fails when it is stale.
 * For 3.1, @fastify/swagger keeps JSON Schema as it is (e.g. `type: ['string', 'null']` and
 * numeric `exclusiveMinimum`, which 3.0 forbids) and turns any `nullable` into a `null` type.
 * The error responses of every route are declared by error-responses.ts.
 */
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { SECURITY_SCHEMES } from './auth.ts';

/** Where Swagger UI is served. */
export const DOCS_PREFIX = '/docs';

export default fp(
  async function swaggerPlugin(app: FastifyInstance, options: { ui?: boolean }) {
    await app.register(swagger, {
      // Name shared schemas by their $id (e.g. WorkflowNode) instead of def-0, def-1, ...
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Switchyard workflow API',
          version: '1.0.0',
          description:
            'Workflow definitions, runs and node runs. Errors are `{ "detail": { "error": code, "message": text } }` (ErrorBody), ' +
            'with `resource` on a 404 (what does not exist) and `details` where there are structured facts. Every operation ' +
            'declares the statuses it answers; errors raised before a request is routed (408, 417, 431 from the HTTP parser, ' +
            '404 for an unknown route) carry the same body. With authentication on (SWITCHYARD_AUTH), every /api/ operation ' +
            'needs a credential (`Authorization: Bearer <JWT or API key>`, or `X-API-Key`) carrying the scope its `security` ' +
            'requirement names: workflows-read, workflows-write, workflows-control or events-write.',
        },
        components: { securitySchemes: SECURITY_SCHEMES },
        tags: [
          { name: 'workflows', description: 'Workflow definitions' },
          { name: 'runs', description: 'Runs and node runs' },
          { name: 'schedules', description: 'Schedules: runs started by cron or interval ticks' },
          { name: 'events', description: 'The event inbox: events start runs of workflows with matching triggers' },
          { name: 'health', description: 'Liveness and readiness probes (public)' },
        ],
      },
    });
    if (options.ui !== false) await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });
  },
  { name: 'swagger' },
);
