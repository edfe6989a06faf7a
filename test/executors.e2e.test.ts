/**
 * The executor catalogue over the API (issue 9 item 6): `GET /api/v1/executors` against the
 * example registry (real MCP servers `everything` and `files`), and against a registry whose MCP
 * server cannot start.
 */
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppServices } from '@switchyard/api';
import { createExecutorRegistry, type ExecutorRegistry } from '@switchyard/runner';
import { EXAMPLE_REGISTRY, startService, type TestService } from './support/service.ts';

/** The webhook URL of the example `notify` entry: its path and query must never be shown. */
const WEBHOOK_URL = 'http://127.0.0.1:8089/hooks/path-secret-4711?token=query-secret-0815';

let svc: TestService;

beforeAll(async () => {
  // Read by examples/executors.json (`notify`) when the service loads it; this file's process only.
  process.env['SWITCHYARD_EXAMPLE_WEBHOOK_URL'] = WEBHOOK_URL;
  svc = await startService();
});

afterAll(async () => {
  await svc?.close();
  delete process.env['SWITCHYARD_EXAMPLE_WEBHOOK_URL'];
});

const byKey = (executors: any[]) => new Map(executors.map((executor) => [executor.key, executor]));

describe('GET /api/v1/executors (example registry)', () => {
  it('lists every registry key, sorted, with its kind and description', async () => {
    const response = await svc.api.get('/api/v1/executors');
    expect(response.status).toBe(200);
    const keys = response.body.executors.map((executor: any) => executor.key);
    expect(keys).toEqual([...keys].sort());
    expect(keys).toEqual(expect.arrayContaining(['sum', 'echo-tool', 'write-file', 'notify', 'echo', 'flaky', 'sleep', 'builtin.echo', 'builtin.fail', 'builtin.sleep']));
    for (const executor of response.body.executors) {
      expect(typeof executor.description, executor.key).toBe('string');
      expect(executor.description.length, executor.key).toBeGreaterThan(0);
      expect(executor.available, `${executor.key}: ${executor.error}`).toBe(true);
    }
  });

  it('shows an MCP tool with its description and inputSchema from tools/list', async () => {
    const { body } = await svc.api.get('/api/v1/executors');
    const sum = byKey(body.executors).get('sum');
    expect(sum).toMatchObject({ key: 'sum', kind: 'mcp', server: 'everything', available: true, tool: { name: 'get-sum' } });
    expect(sum.tool.description).toEqual(expect.any(String));
    expect(sum.tool.description.length).toBeGreaterThan(0);
    expect(sum.description).toBe(sum.tool.description);
    expect(sum.tool.inputSchema).toMatchObject({ type: 'object', properties: { a: expect.any(Object), b: expect.any(Object) } });
    // The filesystem server is listed too.
    expect(byKey(body.executors).get('write-file')).toMatchObject({ kind: 'mcp', server: 'files', available: true, tool: { name: 'write_file', inputSchema: { type: 'object' } } });
  });

  it('shows a builtin with its name', async () => {
    const { body } = await svc.api.get('/api/v1/executors');
    expect(byKey(body.executors).get('echo')).toMatchObject({ key: 'echo', kind: 'builtin', builtin: 'echo', available: true });
    expect(byKey(body.executors).get('flaky')).toMatchObject({ kind: 'builtin', builtin: 'fail' });
  });

  it('shows an http executor with its method, never its URL or origin', async () => {
    const response = await svc.api.get('/api/v1/executors');
    const notify = byKey(response.body.executors).get('notify');
    expect(notify).toEqual({ key: 'notify', kind: 'http', description: 'Webhook: HTTP POST to [address]', available: true, method: 'POST' });
    expect(response.text).not.toContain('path-secret-4711');
    expect(response.text).not.toContain('query-secret-0815');
    expect(response.text).not.toContain('/hooks');
  });

  it('filters by ?kind=', async () => {
    const mcp = await svc.api.get('/api/v1/executors?kind=mcp');
    expect(mcp.status).toBe(200);
    expect(mcp.body.executors.length).toBeGreaterThan(0);
    expect(new Set(mcp.body.executors.map((executor: any) => executor.kind))).toEqual(new Set(['mcp']));
    expect(mcp.body.executors.map((executor: any) => executor.key)).toContain('sum');

    const builtin = await svc.api.get('/api/v1/executors?kind=builtin');
    expect(builtin.body.executors.map((executor: any) => executor.key)).toEqual(['builtin.echo', 'builtin.fail', 'builtin.sleep', 'echo', 'flaky', 'sleep']);

    const none = await svc.api.get('/api/v1/executors?kind=no-such-kind');
    expect(none).toMatchObject({ status: 200, body: { executors: [] } });
  });

  it('rejects an empty ?kind= in the error format', async () => {
    const response = await svc.api.get('/api/v1/executors?kind=');
    expect(response.status).toBe(400);
    expect(response.body).toHaveProperty('detail');
  });
});

describe('GET /api/v1/executors with an MCP server that cannot start', () => {
  const SECRET = 'launch-secret-9f8e7d';
  let registry: ExecutorRegistry;
  let app: FastifyInstance;
  let baseUrl: string;

  beforeAll(async () => {
    registry = createExecutorRegistry(
      {
        mcpServers: {
          broken: { command: '/nonexistent/switchyard-no-such-mcp-server', args: ['--token', '${BROKEN_TOKEN}'] },
          everything: { command: 'node', args: ['../node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'] },
        },
        executors: {
          'broken-tool': { kind: 'mcp', server: 'broken', tool: 'anything', description: 'A tool of a server that is not installed' },
          'broken-other': { kind: 'mcp', server: 'broken', tool: 'other' },
          'missing-tool': { kind: 'mcp', server: 'everything', tool: 'no-such-tool' },
          'good-sum': { kind: 'mcp', server: 'everything', tool: 'get-sum' },
        },
      },
      { baseDir: dirname(EXAMPLE_REGISTRY), env: { ...process.env, BROKEN_TOKEN: SECRET } },
    );
    app = await buildApp({ services: { executors: registry } as unknown as AppServices, docs: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await app?.close();
    await registry?.close();
  });

  it('answers 200 with available: false and a redacted error for its keys, the others listed', async () => {
    const response = await fetch(`${baseUrl}/api/v1/executors?kind=mcp`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(SECRET);
    const executors = byKey(JSON.parse(text).executors);
    expect([...executors.keys()]).toEqual(['broken-other', 'broken-tool', 'good-sum', 'missing-tool']);
    expect(executors.get('broken-tool')).toMatchObject({
      kind: 'mcp',
      server: 'broken',
      description: 'A tool of a server that is not installed',
      available: false,
      error: expect.stringContaining('cannot connect to MCP server "broken"'),
      tool: { name: 'anything' },
    });
    expect(executors.get('broken-tool').tool).not.toHaveProperty('inputSchema');
    expect(executors.get('broken-other')).toMatchObject({ available: false, description: 'MCP tool other of server broken', error: expect.any(String) });
    expect(executors.get('missing-tool')).toMatchObject({ available: false, error: expect.stringContaining('has no tool "no-such-tool"') });
    expect(executors.get('good-sum')).toMatchObject({ available: true, tool: { name: 'get-sum', inputSchema: { properties: { a: expect.any(Object), b: expect.any(Object) } } } });
    // The built-ins are still there.
    const all = (await (await fetch(`${baseUrl}/api/v1/executors`)).json()) as { executors: any[] };
    expect(byKey(all.executors).get('builtin.echo')).toMatchObject({ kind: 'builtin', available: true });
  });

  it('tries the server again on the next request (a failed connect is not cached)', async () => {
    const response = await fetch(`${baseUrl}/api/v1/executors?kind=mcp`);
    expect(response.status).toBe(200);
    expect(byKey(((await response.json()) as { executors: any[] }).executors).get('broken-tool')).toMatchObject({ available: false });
  });
});
