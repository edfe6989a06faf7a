/**
 * The `mcp` executor over Streamable HTTP, against an in-process MCP server (SDK `Server` +
 * `StreamableHTTPServerTransport`, stateless) on an ephemeral port.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutorRegistry } from '../registry.ts';
import { ExecutorError } from '../types.ts';
import type { ExecutorCall, ExecutorRegistry } from '../types.ts';

/** A stateless MCP server with one tool, `lookup({ id })` -> structuredContent `{ id, found }`. */
function mcpServer(): Server {
  const server = new Server({ name: 'lookup-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: 'lookup',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        outputSchema: { type: 'object', properties: { id: { type: 'string' }, found: { type: 'boolean' } }, required: ['id', 'found'] },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const id = String(request.params.arguments?.['id']);
    return { content: [{ type: 'text', text: `found ${id}` }], structuredContent: { id, found: true } };
  });
  return server;
}

const requestHeaders: IncomingHttpHeaders[] = [];

async function listen(port = 0): Promise<HttpServer> {
  const http = createServer((req, res) => {
    requestHeaders.push({ ...req.headers, 'x-test-method': req.method });
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = mcpServer();
    res.on('close', () => void server.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return http;
}

async function stop(http: HttpServer): Promise<void> {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
}

function call(args: Record<string, unknown>): ExecutorCall {
  return { arguments: args, input: null, attempt: 1, signal: new AbortController().signal, context: { runId: 'r', nodeId: 'n', nodeName: 'step' } };
}

describe('mcp executor over Streamable HTTP', () => {
  let http: HttpServer;
  let port: number;
  let registry: ExecutorRegistry;

  beforeAll(async () => {
    http = await listen();
    port = (http.address() as AddressInfo).port;
    registry = createExecutorRegistry(
      {
        mcpServers: { remote: { url: 'http://127.0.0.1:${PORT}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } } },
        executors: { lookup: { kind: 'mcp', server: 'remote', tool: 'lookup' } },
      },
      { baseDir: '.', env: { PORT: String(port), TOKEN: 's3cret' } },
    );
  });
  afterAll(async () => {
    await registry.close();
    await stop(http);
  });

  it('calls the tool with the configured headers and returns its structuredContent', async () => {
    await expect(registry.get('lookup').invoke(call({ id: 'a-1' }))).resolves.toEqual({ id: 'a-1', found: true });
    expect(requestHeaders.length).toBeGreaterThan(0);
    expect(requestHeaders.every((headers) => headers.authorization === 'Bearer s3cret')).toBe(true);
  });

  it('sends each call\'s downstream token as the bearer when the server has no Authorization header configured', async () => {
    const open = createExecutorRegistry(
      { mcpServers: { remote: { url: `http://127.0.0.1:${port}/mcp` } }, executors: { lookup: { kind: 'mcp', server: 'remote', tool: 'lookup' } } },
      { baseDir: '.', env: {} },
    );
    try {
      const before = requestHeaders.length;
      await open.get('lookup').invoke({ ...call({ id: 'a' }), downstreamToken: 'token-one' });
      // Every POST of the first call carries its token, initialize and tools/list included (a server
      // that requires it can be connected to); the connection's GET event stream never does.
      const first = requestHeaders.slice(before);
      const posts = first.filter((h) => h['x-test-method'] === 'POST');
      expect(posts.length).toBeGreaterThan(1);
      expect(posts.map((h) => h.authorization)).toEqual(posts.map(() => 'Bearer token-one'));
      expect(first.filter((h) => h['x-test-method'] === 'GET').every((h) => h.authorization === undefined)).toBe(true);
      const middle = requestHeaders.length;
      await open.get('lookup').invoke({ ...call({ id: 'b' }), downstreamToken: 'token-two' });
      expect(requestHeaders.slice(middle).map((h) => h.authorization)).toEqual(['Bearer token-two']);
      const last = requestHeaders.length;
      await open.get('lookup').invoke(call({ id: 'c' }));
      expect(requestHeaders.slice(last).map((h) => h.authorization)).toEqual([undefined]);
    } finally {
      await open.close();
    }
    // A configured Authorization wins over the downstream token.
    const before = requestHeaders.length;
    await registry.get('lookup').invoke({ ...call({ id: 'd' }), downstreamToken: 'ignored' });
    expect(requestHeaders.slice(before).every((h) => h.authorization === 'Bearer s3cret')).toBe(true);
  });

  it('validates arguments against the remote inputSchema', async () => {
    const error: unknown = await registry.get('lookup').invoke(call({ id: 7 })).catch((reason: unknown) => reason);
    expect(error).toMatchObject({ message: 'invalid arguments for MCP tool "lookup" of server "remote": /id: must be string', retryable: false });
  });

  it('reports an unreachable server as retryable, then recovers when it is back', async () => {
    await stop(http);
    const error: unknown = await registry.get('lookup').invoke(call({ id: 'a-2' })).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ExecutorError);
    expect(error).toMatchObject({ retryable: true, message: 'MCP tool "lookup" of server "remote" failed: fetch failed' });
    http = await listen(port);
    await expect(registry.get('lookup').invoke(call({ id: 'a-3' }))).resolves.toEqual({ id: 'a-3', found: true });
  });
});
