/**
 * Where a request comes from (issue #16 item 3): refuses requests a web page could make through a
 * user's browser against the user's will, before authentication and before the body is read.
 *
 * - **`Host` allow-list** (DNS rebinding): a page on `evil.example` that rebinds its name to
 *   127.0.0.1 reaches a loopback service with `Host: evil.example`. When the list is on, a request
 *   whose `Host` is neither a loopback name on the port the connection arrived at nor an entry of
 *   `allowedHosts` (`name` for any port, `name:port` for one) gets 403 `host_not_allowed`. It is
 *   on whenever `allowedHosts` is non-empty, and always without a credential mode — trusted-proxy
 *   mode included, since a rebound page can send the proxy's headers too (then only loopback names
 *   pass, unless listed).
 * - **`Origin` check** (cross-site requests): browsers send `Origin` with every cross-site request
 *   and with every POST, PUT and DELETE, so a state-changing request (any method but GET, HEAD and
 *   OPTIONS) whose `Origin` is neither the service's own (the same host and port as its `Host`)
 *   nor a listed CORS origin gets 403 `origin_not_allowed` — including body-less POSTs such as
 *   `/cancel`, which need no CORS preflight. curl, SDKs and the MCP bridge send no `Origin` and are
 *   not affected. `Origin: null` (sandboxed frames, `file:` pages) is refused.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLoopback } from '../config.ts';
import { errorBody } from './error-body.ts';

export interface RequestOriginOptions {
  /** Host names (`name` or `name:port`, lower case) accepted besides loopback names; see config.ts. */
  allowedHosts: readonly string[];
  /** True without a credential mode (`none`, trusted-proxy mode too): the `Host` check is on even when `allowedHosts` is empty. */
  unauthenticated: boolean;
  /** CORS origins (exact, or `['*']`): their pages may make state-changing requests. */
  corsOrigins: readonly string[];
}

/** Methods that never change state (and that browsers send cross-site without an `Origin` for GET/HEAD). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `name`, `port` ('' when absent) and `host` (`name[:port]`, normalized) of a `Host` header value; null when it is not a host. */
function parseHost(value: string): { name: string; port: string; host: string } | null {
  try {
    const url = new URL(`http://${value}`);
    if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '') return null;
    return { name: url.hostname.toLowerCase(), port: url.port, host: url.host };
  } catch {
    return null;
  }
}

/** True when `host` may be answered (see the module comment). */
export function hostAllowed(host: string | undefined, localPort: number | undefined, allowedHosts: readonly string[]): boolean {
  if (host === undefined) return false;
  const parsed = parseHost(host);
  if (parsed === null) return false;
  const port = parsed.port === '' ? '80' : parsed.port;
  // No local port: an injected request (tests), which came over no network.
  if (isLoopback(parsed.name) && (localPort === undefined || port === String(localPort))) return true;
  return listed(parsed, allowedHosts);
}

/** True when `allowedHosts` lists the host `name` (any port) or `name:port` (an absent port is 80). */
function listed(parsed: { name: string; port: string }, allowedHosts: readonly string[]): boolean {
  const port = parsed.port === '' ? '80' : parsed.port;
  return allowedHosts.some((entry) => entry === parsed.name || entry === `${parsed.name}:${port}`);
}

/**
 * True when a state-changing request with `origin` (absent: not a browser) may go on: a listed CORS
 * origin, the request's own `Host`, or a host of `allowedHosts` (the service's public name, when a
 * proxy forwards another `Host`).
 */
export function originAllowed(origin: string | undefined, host: string | undefined, corsOrigins: readonly string[], allowedHosts: readonly string[] = []): boolean {
  if (origin === undefined) return true;
  if (corsOrigins.includes('*') || corsOrigins.includes(origin)) return true;
  if (origin === 'null') return false;
  let page: URL;
  try {
    page = new URL(origin);
  } catch {
    return false;
  }
  if (host !== undefined && page.host === parseHost(host)?.host) return true;
  return listed({ name: page.hostname.toLowerCase(), port: page.port === '' ? (page.protocol === 'https:' ? '443' : '80') : page.port }, allowedHosts);
}

function refuse(reply: FastifyReply, code: string, message: string): FastifyReply {
  return reply.code(403).header('connection', 'close').send(errorBody(code, message));
}

/** Most `Host` verdicts remembered: clients send a handful of distinct values, so parsing each once is enough. */
const HOST_VERDICTS_KEPT = 256;

export default fp(
  async function requestOrigin(app: FastifyInstance, options: RequestOriginOptions) {
    const checkHost = options.unauthenticated || options.allowedHosts.length > 0;
    /** Verdicts by `<local port> <Host>`; cleared when full (a flood of distinct hosts is refused anyway). */
    const verdicts = new Map<string, boolean>();
    const allowed = (host: string | undefined, localPort: number | undefined): boolean => {
      const key = `${localPort} ${host}`;
      let verdict = verdicts.get(key);
      if (verdict === undefined) {
        verdict = hostAllowed(host, localPort, options.allowedHosts);
        if (verdicts.size >= HOST_VERDICTS_KEPT) verdicts.clear();
        verdicts.set(key, verdict);
      }
      return verdict;
    };
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const host = request.headers.host;
      if (checkHost && !allowed(host, request.socket.localPort)) {
        return refuse(
          reply,
          'host_not_allowed',
          `This service does not answer to the host '${host ?? ''}': use a loopback address (127.0.0.1, localhost) or add the name to SWITCHYARD_ALLOWED_HOSTS`,
        );
      }
      if (SAFE_METHODS.has(request.method)) return;
      const origin = request.headers.origin;
      if (!originAllowed(origin, host, options.corsOrigins, options.allowedHosts)) {
        return refuse(
          reply,
          'origin_not_allowed',
          `A ${request.method} from a page on '${origin}' is refused: only this service's own pages and the origins of SWITCHYARD_CORS_ORIGINS may change state`,
        );
      }
    });
  },
  { name: 'request-origin' },
);
