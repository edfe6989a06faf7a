/**
 * The console (issue #19; docs/guide/console.md): the API serves apps/console/dist/ (built and
 * committed: `npm run console:build`) at `/console/` (and `/console`), with @fastify/static; `/`
 * redirects there. Public like /docs: the page holds no data, and every API call it makes is
 * authenticated as usual. Its answers carry the console's Content-Security-Policy
 * (plugins/security-headers.ts `CONSOLE_CSP`).
 */
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where the console is served. */
export const CONSOLE_PREFIX = '/console';

/** The built console (apps/console/dist/). */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

/** Registers the console's files under {@link CONSOLE_PREFIX} and the redirects to it. */
export default async function consoleRoutes(app: FastifyInstance): Promise<void> {
  await app.register(fastifyStatic, {
    root: CONSOLE_DIST,
    prefix: `${CONSOLE_PREFIX}/`,
    // One route per file of the build (and `/console/` for index.html), found at start.
    index: ['index.html'],
    wildcard: false,
    // Files change with each build of the service; revalidate rather than cache for long.
    cacheControl: true,
    maxAge: 0,
    schemaHide: true,
    decorateReply: false,
  });
  // `/console` is `/console/` (the app ignores trailing slashes; the page links its files by
  // absolute path), and `/` leads there.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect(`${CONSOLE_PREFIX}/`, 302));
}
