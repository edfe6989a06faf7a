/**
 * CORS (@fastify/cors), so that a browser app on another origin (a workflow canvas) can call the
 * API, preflight included. Only the origins given are allowed, compared exactly with the request's
 * `Origin`; `['*']` allows any. A request from any other origin, or without one, gets no CORS header
 * at all, and its preflight (`OPTIONS`) is the usual 404 error body, so the browser refuses. No
 * origins (the default): the plugin is not registered and the API is same-origin only.
 *
 * An allowed preflight answers 204 with the methods the API serves, the request headers it reads
 * ({@link CORS_ALLOWED_HEADERS}) and a 10-minute `Access-Control-Max-Age`. Answers expose
 * `Retry-After` and the rate-limit headers ({@link CORS_EXPOSED_HEADERS}) to the page. Credentials
 * (cookies) are not allowed: the API authenticates with the `Authorization` or `X-API-Key` header.
 * An `OPTIONS` without `Access-Control-Request-Method` from an allowed origin is answered as a
 * preflight too (`strictPreflight` off), rather than with the plugin's plain-text 400, which would
 * break the common error body.
 */
import fp from 'fastify-plugin';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { IDENTITY_HEADERS } from '../auth/identity.ts';

/** Methods of the API's routes. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'] as const;

/** Request headers a page on an allowed origin may send (beyond the CORS-safelisted ones). */
export const CORS_ALLOWED_HEADERS = ['content-type', 'authorization', 'x-api-key', 'idempotency-key', 'last-event-id', ...IDENTITY_HEADERS] as const;

/** Response headers a page on an allowed origin may read (beyond the CORS-safelisted ones). */
export const CORS_EXPOSED_HEADERS = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] as const;

/** How long a browser may cache a preflight answer, seconds. */
export const CORS_MAX_AGE_SECONDS = 600;

export interface CorsOptions {
  /** Exact origins (`https://canvas.example.com`), or `['*']` for any; see config.ts. */
  origins: readonly string[];
}

export default fp(
  async function corsPlugin(app: FastifyInstance, options: CorsOptions) {
    if (options.origins.length === 0) return;
    const any = options.origins.includes('*');
    const allowed = new Set(options.origins);
    await app.register(cors, {
      // A function (not the list) so that a refused origin gets no CORS header at all and its
      // preflight falls through to the 404 handler; the plugin then adds `Vary: Origin` to every answer.
      origin: any ? '*' : (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
      methods: [...CORS_METHODS],
      allowedHeaders: [...CORS_ALLOWED_HEADERS],
      exposedHeaders: [...CORS_EXPOSED_HEADERS],
      maxAge: CORS_MAX_AGE_SECONDS,
      credentials: false,
      strictPreflight: false,
    });
  },
  { name: 'cors' },
);
