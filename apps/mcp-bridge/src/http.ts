/**
 * Streamable HTTP transport of the bridge (STYLE.md §3.4, stateless): `POST /mcp` gets a new
 * server and transport per request, closed when the response ends; `GET`/`DELETE /mcp` answer 405
 * (no sessions, no server-initiated streams); anything else 404. JSON answers
 * (`enableJsonResponse`), no SSE framing.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { buildServer, type ServerDeps } from './server.ts';

/** A listening bridge. */
export interface HttpBridge {
  /** `http://host:port/mcp` */
  url: string;
  close(): Promise<void>;
}

/** Largest request body accepted, bytes. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Serves the bridge on `host:port` (port 0: any free port). */
export async function startHttp(deps: ServerDeps, listen: { port: number; host: string }): Promise<HttpBridge> {
  const http = createServer((request, response) => {
    handle(deps, request, response).catch((error: unknown) => {
      deps.logger?.error({ err: error }, 'MCP HTTP request failed');
      if (!response.headersSent) sendJson(response, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(listen.port, listen.host, resolve);
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : listen.port;
  return {
    url: `http://${listen.host}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

async function handle(deps: ServerDeps, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/mcp') return sendJson(response, 404, { error: 'not found: the MCP endpoint is /mcp' });
  if (request.method !== 'POST') {
    response.setHeader('allow', 'POST');
    return sendJson(response, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless (POST only)' }, id: null });
  }
  const body = await readJson(request);
  if (body === undefined) return sendJson(response, 400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null });
  const server = buildServer(deps);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  response.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, body);
}

/** The request body as JSON; undefined when it is not JSON (or too large). */
async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
