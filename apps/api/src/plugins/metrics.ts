/**
 * Prometheus at the HTTP layer (docs/operations/metrics.md): an `onResponse` hook that times every
 * answered request by method, route pattern (never the raw URL: its values are unbounded) and
 * status code, and `GET /metrics`, the exposition text (`text/plain; version=0.0.4`).
 *
 * `/metrics` is outside `/api/`, so it needs no scope and no API credential. It is public unless
 * `SWITCHYARD_METRICS_TOKEN` is set; then it requires `Authorization: Bearer <token>` (compared in
 * constant time) and answers 401 `authentication_required` otherwise. It is not in the OpenAPI
 * document (not part of the JSON API).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/metrics.ts';
import { errorBody } from './error-body.ts';

/** Path of the exposition endpoint. */
export const METRICS_PATH = '/metrics';

/** True when `header` is `Bearer <token>` (scheme in any case) for exactly `token`; in constant time for tokens of any length. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^bearer +(\S+) *$/i.exec(header ?? '');
  const given = createHash('sha256').update(match?.[1] ?? '').digest();
  const expected = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, expected) && match !== null;
}

async function metricsPlugin(app: FastifyInstance, options: { metrics: Metrics }): Promise<void> {
  const { metrics } = options;
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
  });
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (metrics.scrapeToken !== null && !bearerMatches(request.headers.authorization, metrics.scrapeToken)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="metrics"')
        .send(errorBody('authentication_required', 'GET /metrics requires Authorization: Bearer <SWITCHYARD_METRICS_TOKEN>'));
    }
    const text = await metrics.render();
    return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
  });
}

/** Registers the request timing hook (on every route of the app) and `GET /metrics`. */
export default fp(metricsPlugin, { name: 'switchyard-metrics' });
