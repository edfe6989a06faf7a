/**
 * Streamable HTTP transport of the bridge (STYLE.md §3.4, stateless): `POST /mcp` gets a new
 * server, transport and REST client per request, closed when the response ends; `GET`/`DELETE /mcp`
 * answer 405 (no sessions, no server-initiated streams); `GET /livez` is the liveness probe
 * ({@link LIVENESS_PATH}: public, before every check below); anything else 404. JSON answers
 * (`enableJsonResponse`), no SSE framing.
 *
 * Every request passes, in this order: the Host/Origin allow-lists (http-guard.ts; 403), the
 * caller's credential (http-auth.ts; 401 with `WWW-Authenticate`; in bearer mode the API is asked
 * whether it accepts the token, with one small read), then the body (at most
 * {@link MAX_BODY_BYTES}; 413). Refusals close the connection. In `bearer` mode the
 * protected-resource metadata (RFC 9728) is served at `/.well-known/oauth-protected-resource/mcp`.
 *
 * In `bearer` mode on a non-loopback host, right after the Host/Origin check, the bridge also asks
 * whether the API requires a credential at all (one read without any, answer kept 60 s): an API
 * that serves anyone (`SWITCHYARD_AUTH=none`) ignores the callers' tokens, so pass-through would
 * authenticate nobody, and every request gets 503 until the API requires credentials
 * (http-auth.ts {@link bearerModeUsable}). An unreachable API does not trigger this.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ApiClientPool } from './api-client.ts';
import type { HttpConfig } from './config.ts';
import { apiRefusesCredential, bearerModeUsable, challengeOf, createCredentialRequirementCheck, createHttpAuthenticator, type Refused } from './http-auth.ts';
import { checkHostAndOrigin, defaultAllowedHosts, defaultAllowedOrigins, type HostOriginLists } from './http-guard.ts';
import { buildServer, type ServerDeps } from './server.ts';

/** A listening bridge. */
export interface HttpBridge {
  /** `http://host:port/mcp` */
  url: string;
  /** The Host and Origin values accepted (defaults resolved with the real port). */
  allowed: HostOriginLists;
  close(): Promise<void>;
}

/** What {@link startHttp} serves with: the server's dependencies, with REST clients made per request. */
export interface HttpDeps extends Omit<ServerDeps, 'api'> {
  /** One REST client per request, with the credential that request is served with. */
  apis: Pick<ApiClientPool, 'forToken'>;
  /** The bridge's own API token (`tokens` and `none` modes; unused in `bearer` mode). */
  apiToken: string | null;
}

/** Largest request body accepted, bytes. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Time a client has to send its request headers, ms. */
const HEADERS_TIMEOUT_MS = 10_000;
/** Time a client has to send its whole request (headers and body), ms; the answer may take longer. */
const REQUEST_TIMEOUT_MS = 30_000;
/** The 503 answer's message when the API behind a non-loopback bearer bridge needs no credential. */
export const OPEN_API_MESSAGE =
  'Service unavailable: the API behind this bridge accepts unauthenticated calls, so bearer pass-through would authenticate nobody; ' +
  'turn authentication on in the API (SWITCHYARD_AUTH) or bind the bridge to loopback (--host 127.0.0.1)';
/**
 * The liveness probe (issue #20 item 1): `GET /livez` answers 200 `{ "status": "ok" }` while the
 * process answers, before the Host/Origin check and without a credential (it reveals nothing;
 * docker-compose.yml's health check calls it as `127.0.0.1`, whatever names the bridge serves).
 */
export const LIVENESS_PATH = '/livez';

/** Path of the protected-resource metadata of `/mcp` (RFC 9728 §3.1: the resource's path appended). */
const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/**
 * Serves the bridge on `options.host:options.port` (port 0: any free port), with `options.auth`
 * deciding the credential of each request. Rejects when the port cannot be bound.
 */
export async function startHttp(deps: HttpDeps, options: HttpConfig): Promise<HttpBridge> {
  const authenticate = createHttpAuthenticator({ mode: options.auth, bridgeTokens: options.bridgeTokens, apiToken: deps.apiToken });
  const lists: { hosts: string[]; origins: string[] } = { hosts: [], origins: [] };
  // Would this bridge be unusable in front of an API that needs no credential? Then ask the API.
  const checkApi = !bearerModeUsable({ mode: options.auth, host: options.host, apiNeedsCredential: false });
  const anonymousApi = deps.apis.forToken(null);
  const apiNeedsCredential = createCredentialRequirementCheck(anonymousApi);
  let refusingOpenApi = false;
  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      deps.logger?.error({ err: error }, 'MCP HTTP request failed');
      if (!response.headersSent) sendJson(response, 500, rpcError(-32603, 'Internal error'));
      else response.end();
    });
  });
  http.headersTimeout = HEADERS_TIMEOUT_MS;
  http.requestTimeout = REQUEST_TIMEOUT_MS;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // The liveness probe first: it tells nothing but "the process answers", so it needs no credential and no allowed Host.
    if ((request.url ?? '/').split('?')[0] === LIVENESS_PATH) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return sendJson(response, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
      return sendJson(response, 200, { status: 'ok' });
    }
    const refusal = checkHostAndOrigin(request.headers, lists);
    if (refusal) {
      deps.logger?.warn({ host: request.headers.host, origin: request.headers.origin, remote: request.socket.remoteAddress }, 'MCP HTTP request refused: Host or Origin not allowed');
      return sendJson(response, 403, rpcError(-32000, refusal), { connection: 'close' });
    }
    if (checkApi && !(await apiUsable())) return sendJson(response, 503, rpcError(-32000, OPEN_API_MESSAGE), { connection: 'close' });
    const path = (request.url ?? '/').split('?')[0];
    if (path === RESOURCE_METADATA_PATH && options.auth === 'bearer') {
      if (request.method !== 'GET') return sendJson(response, 405, { error: 'method not allowed' }, { allow: 'GET' });
      return sendJson(response, 200, resourceMetadata(publicOrigin(request)));
    }
    if (path !== '/mcp') return sendJson(response, 404, { error: 'not found: the MCP endpoint is /mcp' });
    if (request.method !== 'POST') {
      return sendJson(response, 405, rpcError(-32000, 'Method not allowed: this server is stateless (POST only)'), { allow: 'POST' });
    }
    const admitted = authenticate(request.headers);
    if (!admitted.ok) return unauthorized(request, response, admitted);
    // The caller's credential lives in this client only, which lives as long as this request.
    const api = deps.apis.forToken(admitted.apiToken);
    if (admitted.acting === 'caller' && (await apiRefusesCredential(api))) {
      return unauthorized(request, response, { ok: false, reason: 'invalid_token', description: 'The API does not accept this bearer token' });
    }
    if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge(response);
    const body = await readJson(request);
    if (body === CLOSED) {
      deps.logger?.debug({ remote: request.socket.remoteAddress }, 'MCP HTTP request closed by the client before its body was read');
      return;
    }
    if (body === TOO_LARGE) return tooLarge(response);
    if (body === undefined) return sendJson(response, 400, rpcError(-32700, 'Parse error: the body is not JSON'));
    const server = buildServer({ ...deps, api });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  }

  /**
   * False while the API serves callers without a credential (see the module comment); logs the
   * change at warn once when it starts, at info when it ends.
   */
  async function apiUsable(): Promise<boolean> {
    const needed = await apiNeedsCredential();
    const usable = bearerModeUsable({ mode: options.auth, host: options.host, apiNeedsCredential: needed });
    if (!usable && !refusingOpenApi) {
      deps.logger?.warn(
        { host: options.host, api: anonymousApi.url('/') },
        'MCP HTTP requests refused (503): the API accepts unauthenticated calls, so bearer pass-through would authenticate nobody; turn authentication on in the API (SWITCHYARD_AUTH) or bind the bridge to loopback',
      );
    } else if (usable && refusingOpenApi && needed === true) {
      deps.logger?.info({ host: options.host }, 'MCP HTTP requests served again: the API now requires credentials');
    }
    if (!usable) refusingOpenApi = true;
    else if (needed === true) refusingOpenApi = false;
    return usable;
  }

  /** 401 with the Bearer challenge; the connection closes (an unread body is not waited for). */
  function unauthorized(request: IncomingMessage, response: ServerResponse, refused: Refused): void {
    deps.logger?.info({ reason: refused.reason, remote: request.socket.remoteAddress }, 'MCP HTTP request refused: no valid credential');
    const metadataUrl = options.auth === 'bearer' ? `${publicOrigin(request)}${RESOURCE_METADATA_PATH}` : null;
    sendJson(response, 401, rpcError(-32001, `Unauthorized: ${refused.description}`), { 'www-authenticate': challengeOf(refused, metadataUrl), connection: 'close' });
  }

  /** `--public-url`, else `http://<Host>` (the Host header has passed the allow-list). */
  function publicOrigin(request: IncomingMessage): string {
    return options.publicUrl ?? `http://${request.headers.host}`;
  }

  /** RFC 9728 §2 metadata of the `/mcp` resource. */
  function resourceMetadata(origin: string): Record<string, unknown> {
    return {
      resource: `${origin}/mcp`,
      ...(options.authorizationServers.length > 0 ? { authorization_servers: options.authorizationServers } : {}),
      bearer_methods_supported: ['header'],
      resource_name: 'Switchyard MCP bridge',
    };
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, resolve);
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  lists.hosts = options.allowedHosts ? [...options.allowedHosts] : defaultAllowedHosts(options.host, port);
  lists.origins = options.allowedOrigins ? [...options.allowedOrigins] : defaultAllowedOrigins(lists.hosts);
  const urlHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${urlHost}:${port}/mcp`,
    allowed: lists,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** {@link readJson}'s answer for a body over {@link MAX_BODY_BYTES}. */
export const TOO_LARGE = Symbol('too large');
/** {@link readJson}'s answer when the client went away before the body was read. */
export const CLOSED = Symbol('closed');

/**
 * The request body as JSON; undefined when it is not JSON, {@link TOO_LARGE} past
 * {@link MAX_BODY_BYTES} (reading stops, the socket stays up for the 413), {@link CLOSED} when the
 * client went away first — also when it went away before this call (the request already destroyed
 * or ended while the bridge awaited the API: its 'close' and 'end' have fired and would never
 * fire again). Always settles; never rejects.
 */
export function readJson(request: IncomingMessage): Promise<unknown> {
  if (request.destroyed || request.readableEnded) return Promise.resolve(CLOSED);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (value: unknown) => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('close', onClose);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        request.pause();
        return stop(TOO_LARGE);
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      try {
        stop(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        stop(undefined);
      }
    };
    const onClose = () => stop(CLOSED);
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('close', onClose);
  });
}

function tooLarge(response: ServerResponse): void {
  sendJson(response, 413, rpcError(-32600, `Request body larger than ${MAX_BODY_BYTES} bytes`), { connection: 'close' });
}

function rpcError(code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}
