/**
 * Tracing end to end (docs/operations/tracing.md): the service with the OpenTelemetry SDK as
 * server.ts starts it (`startTracing`), spans collected in memory, and real executors: a webhook,
 * an A2A agent and an MCP server over Streamable HTTP, each an in-test server recording the
 * headers it receives. Tracing off sends no `traceparent`; the OTLP/HTTP exporter delivers spans
 * to an in-test collector.
 */
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../apps/api/src/telemetry/tracing.ts';
import { WebhookServer } from '../packages/runner/src/testing/webhook-server.ts';
import { behaviours, startAgent, type TestAgent } from './support/a2a-agents.ts';
import { CANVAS, startService, uniqueName, wf, type TestService } from './support/service.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

/** A recording HTTP server: a stateless MCP server with one tool `lookup` on POST, or (`collector`) an OTLP receiver answering 200 `{}`. */
interface Recorder {
  url: string;
  requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

function mcpServer(): Server {
  const server = new Server({ name: 'lookup-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'lookup', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } }] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `found ${String(request.params.arguments?.['id'])}` }] }));
  return server;
}

async function startRecorder(kind: 'mcp' | 'collector'): Promise<Recorder> {
  const requests: Recorder['requests'] = [];
  const http: HttpServer = createServer((req, res) => {
    if (kind === 'mcp') {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: '' });
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const server = mcpServer();
      res.on('close', () => void server.close());
      void server.connect(transport).then(() => transport.handleRequest(req, res));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

let webhook: WebhookServer;
let agent: TestAgent;
let mcp: Recorder;
let registryDir: string;
let registryFile: string;

beforeAll(async () => {
  webhook = await WebhookServer.start();
  agent = await startAgent({ name: 'Tracer', behaviour: behaviours.answer('traced', null) });
  mcp = await startRecorder('mcp');
  registryDir = await mkdtemp(join(tmpdir(), 'switchyard-traces-'));
  registryFile = join(registryDir, 'executors.json');
  await writeFile(
    registryFile,
    JSON.stringify({
      mcpServers: { remote: { url: `${mcp.url}/mcp` } },
      executors: {
        hook: { kind: 'http', url: webhook.url('/hook') },
        agent: { kind: 'a2a', url: agent.url },
        lookup: { kind: 'mcp', server: 'remote', tool: 'lookup' },
      },
    }),
  );
});
afterAll(async () => {
  await webhook.close();
  await agent.close();
  await mcp.close();
  await rm(registryDir, { recursive: true, force: true });
});

const NODES = [
  { name: 'Hook', nodeType: 'step', executorKey: 'hook', config: { n: 1 } },
  { name: 'Agent', nodeType: 'step', executorKey: 'agent', config: { message: 'hello' } },
  { name: 'Lookup1', nodeType: 'step', executorKey: 'lookup', config: { id: 'a' } },
  { name: 'Lookup2', nodeType: 'step', executorKey: 'lookup', config: { id: 'b' } },
];

/** Creates and enables a workflow of the three executors; returns its id. */
async function createWorkflow(service: TestService): Promise<string> {
  const created = await service.createWorkflow({ name: uniqueName('traces'), canvas: CANVAS, nodes: NODES });
  await service.enable(created.id);
  return created.id as string;
}

/** Triggers a run with `headers` and waits for its end; returns the run id. */
async function trigger(service: TestService, workflowId: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${service.baseUrl}${wf(`/${workflowId}/runs`)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{}',
  });
  expect(response.status).toBe(202);
  const { runId } = (await response.json()) as { runId: string };
  const run = await service.waitForRun(workflowId, runId);
  expect(run.status, run.errorSummary).toBe('completed');
  return runId;
}

/** The `traceparent` every request recorded since `from` carried (undefined where none). */
const sent = {
  webhook: (from: number) => webhook.requests.slice(from).map((r) => r.headers.traceparent),
  agent: (from: number) => agent.requests.slice(from).filter((r) => r.method === 'POST').map((r) => r.headers.traceparent),
  mcp: (from: number) => mcp.requests.slice(from).filter((r) => r.method === 'POST').map((r) => r.headers.traceparent),
};
const marks = () => ({ webhook: webhook.requests.length, agent: agent.requests.length, mcp: mcp.requests.length });

describe('tracing off (no OTLP endpoint)', () => {
  it('sends no traceparent to any executor, also when the trigger had one', async () => {
    const service = await startService({ registryFile });
    try {
      const workflowId = await createWorkflow(service);
      const from = marks();
      const runId = await trigger(service, workflowId, { traceparent: TRACEPARENT });
      expect(sent.webhook(from.webhook)).toEqual([undefined]);
      expect(sent.agent(from.agent).length).toBeGreaterThan(0);
      expect(sent.agent(from.agent).every((h) => h === undefined)).toBe(true);
      expect(sent.mcp(from.mcp).length).toBeGreaterThan(0);
      expect(sent.mcp(from.mcp).every((h) => h === undefined)).toBe(true);
      // Nothing traced, nothing stored.
      expect((await service.repos.runs.get(runId))!.traceParent ?? null).toBeNull();
    } finally {
      await service.close();
    }
  });
});

describe('tracing on', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let service: TestService;
  let workflowId: string;

  beforeAll(async () => {
    tracing = startTracing({ serviceName: 'switchyard-test', spanProcessor: new SimpleSpanProcessor(exporter) });
    service = await startService({ registryFile });
    workflowId = await createWorkflow(service);
  });
  afterAll(async () => {
    await service.close();
    await tracing.shutdown();
  });
  beforeEach(() => exporter.reset());

  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  const attempts = (key: string) => spans().filter((s) => s.name === `attempt ${key}`);
  const traceparentOf = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

  it("joins the trigger's traceparent: its spans carry that trace id, and every executor receives the attempt span as parent", async () => {
    const from = marks();
    const runId = await trigger(service, workflowId, { traceparent: TRACEPARENT, tracestate: 'caller=1' });
    const execution = spans().find((s) => s.name.startsWith('run '))!;
    expect(execution.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(execution.attributes['switchyard.run.id']).toBe(runId);
    expect(spans().length).toBeGreaterThan(8); // run, 4 nodes, 4 attempts
    expect(spans().every((s) => s.spanContext().traceId === TRACE_ID)).toBe(true);
    expect((await service.repos.runs.get(runId))!).toMatchObject({ traceParent: TRACEPARENT, traceState: 'caller=1' });

    const [hook] = attempts('hook');
    expect(sent.webhook(from.webhook)).toEqual([traceparentOf(hook!)]);
    const [a2a] = attempts('agent');
    const agentSent = sent.agent(from.agent);
    expect(agentSent.length).toBeGreaterThan(0);
    expect(new Set(agentSent)).toEqual(new Set([traceparentOf(a2a!)]));
    // Two calls over one pooled MCP connection: each request carries the attempt that sent it.
    const lookups = attempts('lookup');
    expect(lookups).toHaveLength(2);
    const mcpSent = sent.mcp(from.mcp);
    expect(new Set(mcpSent)).toEqual(new Set(lookups.map(traceparentOf)));
  });

  it('ignores an invalid or oversized traceparent: the run works and starts its own trace', async () => {
    for (const traceparent of ['garbage', `00-${TRACE_ID}-${CALLER_SPAN}-01-extra`, `01-${TRACE_ID}-${CALLER_SPAN}-01-${'x'.repeat(4_000)}`]) {
      exporter.reset();
      const runId = await trigger(service, workflowId, { traceparent });
      const execution = spans().find((s) => s.name.startsWith('run '))!;
      expect(execution.parentSpanContext).toBeUndefined();
      expect(execution.spanContext().traceId).not.toBe(TRACE_ID);
      // The run keeps its first execution's context instead.
      expect((await service.repos.runs.get(runId))!.traceParent).toBe(traceparentOf(execution));
    }
  });
});

describe('the OTLP/HTTP exporter', () => {
  it('posts the spans of a run to <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces, at the latest on shutdown', async () => {
    const collector = await startRecorder('collector');
    const saved = process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = collector.url;
    let tracing: Tracing | undefined;
    try {
      tracing = startTracing({ serviceName: 'switchyard-otlp-test' });
      const service = await startService({ registryFile });
      try {
        await trigger(service, await createWorkflow(service), { traceparent: TRACEPARENT });
      } finally {
        await service.close();
      }
      await tracing.shutdown();
      tracing = undefined;
      const posts = collector.requests.filter((r) => r.method === 'POST' && r.path === '/v1/traces');
      expect(posts.length).toBeGreaterThan(0);
      const body = posts.map((p) => p.body).join('\n');
      expect(body).toContain('switchyard-otlp-test');
      expect(body).toContain('attempt hook');
    } finally {
      await tracing?.shutdown();
      if (saved === undefined) delete process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
      else process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = saved;
      await collector.close();
    }
  });
});
