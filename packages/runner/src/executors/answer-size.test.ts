/**
 * Answers over the read limit, for every executor kind that reads answers (security issue, item
 * 5): a registry with an output limit of 1 KiB reads at most `answerReadLimit(1024)` (65 KiB) of
 * one answer (or of one event of a streamed answer), then fails the call, not retryable, with
 * `<sender> answer exceeds SWITCHYARD_MAX_OUTPUT_BYTES (1024 bytes): read stopped at <n> bytes`.
 * Answers within the limit, and long streams of small events, still work.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TaskState } from '@a2a-js/sdk';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, textPart, type Behaviour, type TestAgent } from '../../../../test/support/a2a-agents.ts';
import { WebhookServer, text } from '../testing/webhook-server.ts';
import { MAX_AGENT_CARD_BYTES, answerReadLimit } from './shared/answer-limit.ts';
import { createExecutorRegistry } from './registry.ts';
import { ExecutorError } from './types.ts';
import type { ExecutorCall, ExecutorRegistry } from './types.ts';

const MAX_OUTPUT_BYTES = 1024;
const READ_LIMIT = answerReadLimit(MAX_OUTPUT_BYTES);
/** MCP results may carry their output twice (structured content and its JSON text). */
const MCP_READ_LIMIT = answerReadLimit(MAX_OUTPUT_BYTES, 2);
/** Characters of an answer too large: the read stops long before its end. */
const BIG = 4 * 1024 * 1024;

const BIG_ANSWER_SERVER = fileURLToPath(new URL('../testing/big-answer-mcp-server.mjs', import.meta.url));

function call(args: Record<string, unknown> = {}): ExecutorCall {
  return { arguments: args, input: null, attempt: 1, signal: new AbortController().signal, context: { runId: 'run-1', nodeId: 'node-1', nodeName: 'step' } };
}

/**
 * The rejection of `promise`: the error of an answer over the limit from `what` (as the executor's
 * redaction passes it on: an ExecutorError with the same message and details), stopped past the read limit.
 */
async function tooLarge(promise: Promise<unknown>, what: string, readLimit = READ_LIMIT): Promise<ExecutorError> {
  const error: unknown = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ExecutorError);
  const failure = error as ExecutorError;
  const stopped = new RegExp(`^${what.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} exceeds SWITCHYARD_MAX_OUTPUT_BYTES \\(1024 bytes\\): read stopped at (\\d+) bytes$`).exec(failure.message);
  expect(stopped, failure.message).not.toBeNull();
  expect(Number(stopped![1])).toBeGreaterThanOrEqual(readLimit);
  expect(Number(stopped![1])).toBeLessThan(1024 * 1024);
  expect(failure.details).toMatchObject({ maxOutputBytes: MAX_OUTPUT_BYTES, readLimit, bytesRead: Number(stopped![1]) });
  expect(failure.retryable).toBe(false);
  return failure;
}

/**
 * A stateless MCP server over Streamable HTTP with tool `text({ bytes })`; JSON answers, or SSE
 * when `sse`; with `bigList`, its tool list is over any read limit (a description of BIG characters).
 */
async function mcpHttpServer(sse: boolean, bigList = false): Promise<HttpServer> {
  const http = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const server = new Server({ name: 'big-answer', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'text', ...(bigList ? { description: 'd'.repeat(BIG) } : {}), inputSchema: { type: 'object', properties: { bytes: { type: 'number' } }, required: ['bytes'] } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: 'x'.repeat(Number(request.params.arguments?.['bytes'])) }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !sse });
    res.on('close', () => void server.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return http;
}

async function stop(http: HttpServer | undefined): Promise<void> {
  if (http === undefined) return;
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
}

const bigArtifact: Behaviour = async (turn) => {
  turn.start();
  turn.artifact([textPart('x'.repeat(BIG))], 'big');
  turn.status(TaskState.TASK_STATE_COMPLETED);
};

/** 200 status updates of 1,000 characters each (far more than the read limit in all), then a small artifact. */
const chatty: Behaviour = async (turn) => {
  turn.start();
  for (let i = 0; i < 200; i++) turn.status(TaskState.TASK_STATE_WORKING, `step ${i} ${'.'.repeat(1000)}`);
  turn.artifact([textPart('done')], 'result');
  turn.status(TaskState.TASK_STATE_COMPLETED);
};

/** 40 artifacts of 3,000 characters: each event is small, what they add up to is not. */
const manyArtifacts: Behaviour = async (turn) => {
  turn.start();
  for (let i = 0; i < 40; i++) turn.artifact([textPart('y'.repeat(3000))], `part-${i}`);
  turn.status(TaskState.TASK_STATE_COMPLETED);
};

let webhook: WebhookServer;
/** Serves an agent card far over MAX_AGENT_CARD_BYTES at any path. */
let hugeCard: WebhookServer;
let streaming: TestAgent;
let blocking: TestAgent;
let mcpJson: HttpServer;
let mcpSse: HttpServer;
let mcpBigList: HttpServer;
let registry: ExecutorRegistry;

beforeAll(async () => {
  webhook = await WebhookServer.start();
  hugeCard = await WebhookServer.start();
  hugeCard.respond(text(200, JSON.stringify({ name: 'Huge', description: 'd'.repeat(BIG) }), {}, 'application/json'));
  streaming = await startAgent({ name: 'Streaming', behaviour: bigArtifact });
  blocking = await startAgent({ name: 'Blocking', streaming: false, behaviour: bigArtifact });
  mcpJson = await mcpHttpServer(false);
  mcpSse = await mcpHttpServer(true);
  mcpBigList = await mcpHttpServer(true, true);
  const port = (server: HttpServer) => (server.address() as AddressInfo).port;
  registry = createExecutorRegistry(
    {
      mcpServers: {
        json: { url: `http://127.0.0.1:${port(mcpJson)}/mcp` },
        sse: { url: `http://127.0.0.1:${port(mcpSse)}/mcp` },
        'big-list': { url: `http://127.0.0.1:${port(mcpBigList)}/mcp` },
        stdio: { command: process.execPath, args: [BIG_ANSWER_SERVER] },
      },
      executors: {
        hook: { kind: 'http', url: webhook.url('/hook') },
        streaming: { kind: 'a2a', url: streaming.url },
        blocking: { kind: 'a2a', url: blocking.url },
        'huge-card': { kind: 'a2a', url: hugeCard.url('/agent') },
        'mcp-json': { kind: 'mcp', server: 'json', tool: 'text' },
        'mcp-sse': { kind: 'mcp', server: 'sse', tool: 'text' },
        'mcp-stdio': { kind: 'mcp', server: 'stdio', tool: 'text' },
        'mcp-big-list': { kind: 'mcp', server: 'big-list', tool: 'text' },
      },
    },
    { baseDir: '.', env: {}, maxOutputBytes: MAX_OUTPUT_BYTES },
  );
});

afterAll(async () => {
  await registry?.close();
  await webhook?.close();
  await hugeCard?.close();
  await streaming?.close();
  await blocking?.close();
  await stop(mcpJson);
  await stop(mcpSse);
  await stop(mcpBigList);
});

describe('http: a JSON answer', () => {
  it('of exactly the read limit is parsed; one byte more is not', async () => {
    const exact = JSON.stringify('x'.repeat(READ_LIMIT - 2));
    webhook.respond(text(200, exact, {}, 'application/json'));
    await expect(registry.get('hook').invoke(call())).resolves.toHaveLength(READ_LIMIT - 2);
    webhook.respond(text(200, JSON.stringify('x'.repeat(READ_LIMIT - 1)), {}, 'application/json'));
    const error = await tooLarge(registry.get('hook').invoke(call()), 'webhook answer');
    expect(error.details).toMatchObject({ status: 200 });
  });
});

describe('a2a: an agent answer', () => {
  it('over the limit in one stream event fails the call', async () => {
    await tooLarge(registry.get('streaming').invoke(call({ text: 'hi' })), 'A2A agent answer');
  });

  it('over the limit as one JSON answer (no streaming) fails the call', async () => {
    await tooLarge(registry.get('blocking').invoke(call({ text: 'hi' })), 'A2A agent answer');
  });

  it('card over MAX_AGENT_CARD_BYTES fails the call unparsed', async () => {
    const error: unknown = await registry.get('huge-card').invoke(call({ text: 'hi' })).then(() => undefined, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(ExecutorError);
    expect((error as ExecutorError).message).toMatch(new RegExp(`^A2A agent card exceeds ${MAX_AGENT_CARD_BYTES} bytes: read stopped at \\d+ bytes$`));
    expect((error as ExecutorError).retryable).toBe(false);
    expect(hugeCard.requests.map((request) => request.url)).toEqual(['/agent/.well-known/agent-card.json']);
  });

  it('made of many small events is read to its end', async () => {
    streaming.setBehaviour(chatty);
    await expect(registry.get('streaming').invoke(call({ text: 'hi' }))).resolves.toMatchObject({ state: 'completed', text: 'done' });
  });

  it('whose artifact chunks add up to more than the limit fails the call', async () => {
    streaming.setBehaviour(manyArtifacts);
    await tooLarge(registry.get('streaming').invoke(call({ text: 'hi' })), 'A2A agent answer (artifacts of its stream)');
  });
});

describe('mcp: a tool result', () => {
  it.each(['json', 'sse'])('over Streamable HTTP (%s) fails the call; a small one after it works', async (mode) => {
    await tooLarge(registry.get(`mcp-${mode}`).invoke(call({ bytes: BIG })), `MCP server "${mode}" answer`, MCP_READ_LIMIT);
    await expect(registry.get(`mcp-${mode}`).invoke(call({ bytes: 10 }))).resolves.toEqual({ content: [{ type: 'text', text: 'x'.repeat(10) }] });
  });

  it('a tool list over the limit (SSE) fails the call at once, and again on the next call', async () => {
    await tooLarge(registry.get('mcp-big-list').invoke(call({ bytes: 10 })), 'MCP server "big-list" answer', MCP_READ_LIMIT);
    await tooLarge(registry.get('mcp-big-list').invoke(call({ bytes: 10 })), 'MCP server "big-list" answer', MCP_READ_LIMIT);
  });

  it('over stdio closes the connection and fails the call; the next call reconnects', async () => {
    await tooLarge(registry.get('mcp-stdio').invoke(call({ bytes: BIG })), 'MCP server "stdio" answer', MCP_READ_LIMIT);
    await expect(registry.get('mcp-stdio').invoke(call({ bytes: 10 }))).resolves.toEqual({ content: [{ type: 'text', text: 'x'.repeat(10) }] });
  });
});
