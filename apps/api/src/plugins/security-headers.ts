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
 * - helmet's other defaults everywhere: `Strict-Transport-Security` (honoured by browsers over
 *   HTTPS only), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
 *   `Cross-Origin-Opener-Policy` and `Cross-Origin-Resource-Policy: same-origin` (which concerns
 *   no-cors loads only: CORS requests of an allowed origin, see cors.ts, are not affected), ...
 *
 * Answers written on the raw socket before routing (http-errors.ts) carry none of these.
 */
import fp from 'fastify-plugin';
import helmet from '@fastify/helmet';
import type { FastifyInstance, RouteOptions } from 'fastify';

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

export interface SecurityHeadersOptions {
  /** Route prefix of Swagger UI (default `/docs`): its routes get {@link DOCS_CSP}. */
  docsPrefix?: string;
}

export default fp(
  async function securityHeaders(app: FastifyInstance, options: SecurityHeadersOptions) {
    const docsPrefix = options.docsPrefix ?? '/docs';
    // Registered before any route (app.ts), so it sees Swagger UI's routes, static files included;
    // and before helmet's own onRoute hook, which turns a route's `helmet` option into its config.
    app.addHook('onRoute', (route: RouteOptions) => {
      if (route.url === docsPrefix || route.url.startsWith(`${docsPrefix}/`)) {
        route.helmet = { contentSecurityPolicy: { useDefaults: false, directives: DOCS_CSP } };
      }
    });
    await app.register(helmet, {
      contentSecurityPolicy: { useDefaults: false, directives: API_CSP },
      frameguard: { action: 'deny' },
    });
  },
  { name: 'security-headers' },
);
