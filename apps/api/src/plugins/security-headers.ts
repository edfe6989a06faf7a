/**
 * Security headers on every answer (@fastify/helmet), tuned for a JSON API:
 *
 * - API answers: `Content-Security-Policy: default-src 'none'; base-uri 'none'; form-action 'none';
 *   frame-ancestors 'none'` (a JSON body loads nothing, runs nothing and is never framed) and
 *   `X-Frame-Options: DENY`;
 * - Swagger UI (`/docs` and below, {@link DOCS_CSP}): scripts and styles from the service itself,
 *   data: images (its CSS inlines SVG and PNG icons), inline styles (Swagger UI's React components
 *   set them); no inline script is needed (its page loads swagger-initializer.js as a file) and
 *   nothing is fetched from elsewhere (the validator badge is off). Unlike helmet's default there is
 *   no `upgrade-insecure-requests`, which would break the page of a service reached over plain
 *   HTTP on a non-local host;
 * - the console (`/console` and below, {@link CONSOLE_CSP}; issue #19): scripts, styles, images and
 *   API calls from the service itself only — no inline script or style, no eval, never framed;
 * - helmet's other defaults everywhere: `Strict-Transport-Security` (honoured by browsers over
 *   HTTPS only), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
 *   `Cross-Origin-Opener-Policy` and `Cross-Origin-Resource-Policy: same-origin` (which concerns
 *   no-cors loads only: CORS requests of an allowed origin, see cors.ts, are not affected), ...
 *
 * Answers written on the raw socket before routing (http-errors.ts) carry none of these.
 *
 * None of these headers depends on the request (no CSP nonces), so they are computed once, at
 * start, by @fastify/helmet itself (one answer of a throwaway app per header set), and every answer
 * gets them from one `onRequest` hook: @fastify/helmet would build helmet's middleware chain
 * again on every request, which costs more than a whole small GET.
 */
import fp from 'fastify-plugin';
import Fastify from 'fastify';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/** CSP directives of API answers. */
export const API_CSP = {
  defaultSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};

/** CSP directives of the Swagger UI pages and files. */
export const DOCS_CSP = {
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  fontSrc: ["'self'", 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  imgSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
};

/** CSP directives of the console's page and files: same origin only, no inline code, no eval. */
export const CONSOLE_CSP = {
  defaultSrc: ["'none'"],
  baseUri: ["'none'"],
  connectSrc: ["'self'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
  imgSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'"],
  manifestSrc: ["'self'"],
};

/** The @fastify/helmet options of API answers. */
const API_HELMET: FastifyHelmetOptions = { contentSecurityPolicy: { useDefaults: false, directives: API_CSP }, frameguard: { action: 'deny' } };

/** The @fastify/helmet options of Swagger UI's answers. */
const DOCS_HELMET: FastifyHelmetOptions = { ...API_HELMET, contentSecurityPolicy: { useDefaults: false, directives: DOCS_CSP } };

/** The @fastify/helmet options of the console's answers. */
const CONSOLE_HELMET: FastifyHelmetOptions = { ...API_HELMET, contentSecurityPolicy: { useDefaults: false, directives: CONSOLE_CSP } };

/** Headers of every answer that are not helmet's. */
const NOT_HELMET = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive']);

/**
 * The headers (lower-case name -> value) @fastify/helmet puts on an answer with `options`, read
 * from one answer of a throwaway app. Rejects with Fastify's or helmet's error (bad options).
 */
export async function helmetHeaders(options: FastifyHelmetOptions): Promise<Record<string, string>> {
  const probe = Fastify({ logger: false });
  try {
    await probe.register(helmet, options);
    probe.get('/', async () => 'probe');
    const answer = await probe.inject({ method: 'GET', url: '/' });
    return Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !NOT_HELMET.has(name)).map(([name, value]) => [name, String(value)]));
  } finally {
    await probe.close();
  }
}

export interface SecurityHeadersOptions {
  /** Route prefix of Swagger UI (default `/docs`): its routes get {@link DOCS_CSP}. */
  docsPrefix?: string;
  /** Route prefix of the console (default `/console`): its routes get {@link CONSOLE_CSP}. */
  consolePrefix?: string;
}

/** True when route `url` is `prefix` or below it. */
function under(url: string | undefined, prefix: string): boolean {
  return url !== undefined && (url === prefix || url.startsWith(`${prefix}/`));
}

export default fp(
  async function securityHeaders(app: FastifyInstance, options: SecurityHeadersOptions) {
    const docsPrefix = options.docsPrefix ?? '/docs';
    const consolePrefix = options.consolePrefix ?? '/console';
    const [api, docs, consoleHeaders] = await Promise.all([helmetHeaders(API_HELMET), helmetHeaders(DOCS_HELMET), helmetHeaders(CONSOLE_HELMET)]);
    // Every answer, unknown routes (404) and errors included; Swagger UI's and the console's routes (pages and static files) get theirs.
    app.addHook('onRequest', (request, reply, done) => {
      const url = request.routeOptions.url;
      reply.headers(under(url, docsPrefix) ? docs : under(url, consolePrefix) ? consoleHeaders : api);
      done();
    });
  },
  { name: 'security-headers' },
);
