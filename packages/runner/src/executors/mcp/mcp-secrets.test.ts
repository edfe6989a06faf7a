/**
 * A server's secrets (values from `${VAR}` expansion, `env` and `headers` values, URL credentials)
 * never reach what the `mcp` executor reports: connect, spawn and call errors, tool error texts and
 * outputs, and its log records (real pino output, debug level).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../shared/redact.ts';
import { createExecutorRegistry } from '../registry.ts';
import { ExecutorError } from '../types.ts';
import type { ExecutorCall, ExecutorRegistry } from '../types.ts';
import { captureLogs } from '../../testing/log-capture.ts';

const SECRET = `sk-${randomBytes(12).toString('hex')}`;

/** Prints its arguments and API_KEY to stderr, then exits before the MCP handshake. */
const EXIT_AT_START = "console.error('bad token ' + process.argv.slice(1).join(' ') + ' key=' + process.env.API_KEY); process.exit(1)";

/** Tools that echo the Authorization header they were called with: as an error, an output and a JSON-RPC error. */
function echoingServer(authorization: string): Server {
  const server = new Server({ name: 'echoing', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools = ['whoami', 'reveal', 'reject'].map((name) => ({ name, inputSchema: { type: 'object' as const } }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const text = `you sent ${authorization}`;
    if (request.params.name === 'reject') throw new McpError(ErrorCode.InternalError, text);
    return { content: [{ type: 'text', text }], structuredContent: { echoed: authorization }, isError: request.params.name === 'whoami' };
  });
  return server;
}

/** Answers MCP over Streamable HTTP (stateless), or 401 echoing the Authorization header at `/guarded`. */
function handle(req: IncomingMessage, res: ServerResponse): void {
  const authorization = req.headers.authorization ?? '';
  if (req.url === '/guarded') {
    res.writeHead(401, { 'content-type': 'text/plain' }).end(`invalid credentials: ${authorization}`);
    return;
  }
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = echoingServer(authorization);
  res.on('close', () => void server.close());
  void server.connect(transport).then(() => transport.handleRequest(req, res));
}

function call(): ExecutorCall {
  return { arguments: {}, input: null, attempt: 1, signal: new AbortController().signal, context: { runId: 'r', nodeId: 'n', nodeName: 'step' } };
}

async function rejection(promise: Promise<unknown>): Promise<ExecutorError> {
  const error: unknown = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ExecutorError);
  // Nothing anywhere in the error object: message, stack, details, cause chain, extra properties.
  expect(inspect(error, { depth: 20, showHidden: true })).not.toContain(SECRET);
  return error as ExecutorError;
}

let http: HttpServer;
let registry: ExecutorRegistry;
const captured = captureLogs();

beforeAll(async () => {
  http = createServer(handle);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  // Literal, not `${VAR}`: every substituted value counts as a secret, a port too.
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  registry = createExecutorRegistry(
    {
      mcpServers: {
        exits: { command: 'node', args: ['-e', EXIT_AT_START, '--', '--token=${MCP_SECRET}'], env: { API_KEY: '${MCP_SECRET}' } },
        'missing-command': { command: '/nonexistent/${MCP_SECRET}/mcp-server', args: ['--token=${MCP_SECRET}'] },
        'missing-script': { command: 'node', args: ['/nonexistent/${MCP_SECRET}.js'] },
        echoing: { url: `${origin}/mcp`, headers: { Authorization: 'Bearer ${MCP_SECRET}' } },
        guarded: { url: `${origin}/guarded`, headers: { Authorization: 'Bearer ${MCP_SECRET}' } },
        userinfo: { url: `${origin.replace('//', '//agent:${MCP_SECRET}@')}/mcp` },
      },
      executors: {
        exits: { kind: 'mcp', server: 'exits', tool: 't' },
        'missing-command': { kind: 'mcp', server: 'missing-command', tool: 't' },
        'missing-script': { kind: 'mcp', server: 'missing-script', tool: 't' },
        whoami: { kind: 'mcp', server: 'echoing', tool: 'whoami' },
        reveal: { kind: 'mcp', server: 'echoing', tool: 'reveal' },
        reject: { kind: 'mcp', server: 'echoing', tool: 'reject' },
        guarded: { kind: 'mcp', server: 'guarded', tool: 't' },
        userinfo: { kind: 'mcp', server: 'userinfo', tool: 't' },
      },
    },
    {
      baseDir: '.',
      env: { ...process.env, MCP_SECRET: SECRET },
      logger: captured.logger,
    },
  );
});

afterAll(async () => {
  await registry?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
  // Every record the executors wrote, at debug level, across all the tests above.
  expect(captured.text()).toContain('MCP server connection failed');
  expect(captured.text()).not.toContain(SECRET);
  expect(captured.text()).not.toContain('spawnargs');
});

describe('stdio servers that fail to connect', () => {
  it('exit at start: names the server and command, redacts the stderr tail', async () => {
    const error = await rejection(registry.get('exits').invoke(call()));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      'cannot connect to MCP server "exits" (stdio: node): MCP error -32000: Connection closed\n' +
        `server stderr:\nbad token --token=${REDACTED} key=${REDACTED}`,
    );
  });

  it('cannot be spawned: names the command without its arguments', async () => {
    const error = await rejection(registry.get('missing-command').invoke(call()));
    expect(error.message).toBe(`cannot connect to MCP server "missing-command" (stdio: mcp-server): spawn /nonexistent/${REDACTED}/mcp-server ENOENT`);
  });

  it('missing script: the path with the secret is redacted from node\'s error output', async () => {
    const error = await rejection(registry.get('missing-script').invoke(call()));
    expect(error.message).toMatch(/^cannot connect to MCP server "missing-script" \(stdio: node\): MCP error -32000: Connection closed\nserver stderr:\n/);
    expect(error.message).toContain(`Cannot find module '/nonexistent/${REDACTED}.js'`);
  });
});

describe('Streamable HTTP servers', () => {
  it('redacts a tool error text echoing the header, also in its details', async () => {
    const error = await rejection(registry.get('whoami').invoke(call()));
    // The header value is a secret as a whole, so `Bearer` goes too.
    expect(error).toMatchObject({ message: `you sent ${REDACTED}`, retryable: true, details: { content: [{ text: `you sent ${REDACTED}` }] } });
  });

  it('redacts a JSON-RPC error message echoing the header', async () => {
    const error = await rejection(registry.get('reject').invoke(call()));
    expect(error.message).toMatch(/^MCP tool "reject" of server "echoing" failed: MCP error -32603: /);
    expect(error.message).toMatch(/you sent \[REDACTED\]$/);
  });

  it('redacts the secret from a successful output', async () => {
    await expect(registry.get('reveal').invoke(call())).resolves.toEqual({ echoed: REDACTED });
  });

  it('redacts an HTTP error body echoing the header', async () => {
    const error = await rejection(registry.get('guarded').invoke(call()));
    expect(error.message).toMatch(/^cannot connect to MCP server "guarded" \(http: http:\/\/127\.0\.0\.1:\d+\/guarded\): /);
    expect(error.message).toContain(`invalid credentials: ${REDACTED}`);
  });

  it('names a URL with credentials without them', async () => {
    const error = await rejection(registry.get('userinfo').invoke(call()));
    expect(error.message).toMatch(/^cannot connect to MCP server "userinfo" \(http: http:\/\/127\.0\.0\.1:\d+\/mcp\): /);
    expect(error.message).not.toContain('agent');
  });
});
