/**
 * The MCP bridge's Streamable HTTP mode as a caller on the network sees it (security issue, item
 * 1): no credential gets 401 with a Bearer challenge; a foreign Host or Origin is refused; with a
 * bearer token the API sees the CALLER (its scopes and identity), never the bridge's own
 * --api-token; bridge tokens serve with the bridge's key; an unauthenticated bridge beyond
 * loopback does not start. The API requires API keys here, except in the last part: a bearer
 * bridge beyond loopback in front of an API without authentication refuses with 503.
 */
import { spawnSync } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier, Authenticator, SCOPES, newApiKey } from '@switchyard/api';
import { BRIDGE_BIN, bridgeOverHttp, startBridgeHttp } from './support/bridge.ts';
import { CANVAS, echoStep, startService, uniqueName, type TestService } from './support/service.ts';

const reader = newApiKey('dashboard', ['workflows-read']);
const robot = newApiKey('ci-robot', [...SCOPES]);
const author = newApiKey('agent-author', [...SCOPES]);
const BRIDGE_TOKEN = 'bridge-token-0123456789abcdef';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } },
});

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * One HTTP request with full control of its headers (Host included). `declaredLength` announces a
 * body larger than the one written, and the request is never finished: the answer must come anyway.
 */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; declaredLength?: number } = {}): Promise<RawAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: options.method ?? 'POST',
        headers: {
          host: target.host,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          ...(options.declaredLength !== undefined ? { 'content-length': String(options.declaredLength) } : {}),
          ...options.headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text === '' ? null : JSON.parse(text) }));
        response.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.declaredLength !== undefined) req.write(options.body ?? '');
    else req.end(options.body);
  });
}

let svc: TestService;
let workflowId: string;

beforeAll(async () => {
  const keys = new ApiKeyVerifier({ keys: [reader.entry, robot.entry, author.entry] });
  svc = await startService({ edge: { authenticator: Authenticator.withKeys(keys) }, apiHeaders: { authorization: `Bearer ${robot.key}` } });
  const created = await svc.createWorkflow({ name: uniqueName('bridge-http-auth'), canvas: CANVAS, nodes: [echoStep('A')] });
  workflowId = created.id;
  await svc.enable(workflowId);
});
afterAll(() => svc?.close());

/** Who the store says triggered `runId`. */
async function triggeringUser(runId: string): Promise<string> {
  const doc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === runId);
  return doc?.triggering_user_id as string;
}

describe('bearer pass-through (the default)', () => {
  let logs = '';
  let bridge: Awaited<ReturnType<typeof startBridgeHttp>>;
  beforeAll(async () => {
    // The bridge's own key is the all-scope robot's: no HTTP caller may act with it in this mode.
    const logger = pino({ level: 'debug' }, { write: (line: string) => void (logs += line) });
    bridge = await startBridgeHttp(svc.baseUrl, ['--api-token', robot.key], { logger });
  });
  afterAll(() => bridge?.close());

  it('answers 401 with a Bearer challenge and a JSON-RPC error without a credential, and closes the connection', async () => {
    const answer = await raw(bridge.url, { body: INITIALIZE });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, message: expect.stringMatching(/Authorization: Bearer/) }, id: null });
    const origin = new URL(bridge.url).origin;
    expect(answer.headers['www-authenticate']).toBe(`Bearer realm="switchyard-mcp", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`);
    expect(answer.headers.connection).toBe('close');
    // Other schemes are no credential either.
    expect((await raw(bridge.url, { body: INITIALIZE, headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } })).status).toBe(401);
  });

  it('refuses before reading a body: the 401 comes while the announced body is still unsent', async () => {
    const answer = await raw(bridge.url, { body: '{"jsonrpc":', declaredLength: 3 * 1024 * 1024 });
    expect(answer.status).toBe(401);
    expect(answer.headers.connection).toBe('close');
  });

  it('answers 413 to an authenticated request whose body is over 4 MiB', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(4 * 1024 * 1024) } });
    const answer = await raw(bridge.url, { body: huge, headers: { authorization: `Bearer ${reader.key}` } });
    expect(answer.status).toBe(413);
    expect(answer.body.error.message).toMatch(/larger than 4194304 bytes/);
  });

  it('answers GET /livez 200 without a credential, whatever the Host, and nothing else there', async () => {
    const origin = new URL(bridge.url).origin;
    const live = await raw(`${origin}/livez`, { method: 'GET' });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    // The container's health check may call it by any name (the bridge may serve only its public one).
    expect((await raw(`${origin}/livez`, { method: 'GET', headers: { host: 'health-check.internal' } })).status).toBe(200);
    expect((await raw(`${origin}/livez`, { body: INITIALIZE })).status).toBe(405);
    // Nothing else is public: /mcp still wants a credential.
    expect((await raw(bridge.url, { body: INITIALIZE })).status).toBe(401);
  });

  it('serves the protected-resource metadata the challenge points to', async () => {
    const origin = new URL(bridge.url).origin;
    const answer = await raw(`${origin}/.well-known/oauth-protected-resource/mcp`, { method: 'GET' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ resource: `${origin}/mcp`, bearer_methods_supported: ['header'], resource_name: 'Switchyard MCP bridge' });
  });

  it('refuses a foreign Host or Origin with 403 even with a valid token; the same request without Origin works', async () => {
    const auth = { authorization: `Bearer ${reader.key}` };
    const port = new URL(bridge.url).port;
    const foreignHost = await raw(bridge.url, { body: INITIALIZE, headers: { ...auth, host: `evil.example:${port}` } });
    expect(foreignHost.status).toBe(403);
    expect(foreignHost.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/Host header 'evil\.example:\d+' is not allowed/) } });
    const foreignOrigin = await raw(bridge.url, { body: INITIALIZE, headers: { ...auth, origin: 'https://evil.example' } });
    expect(foreignOrigin.status).toBe(403);
    expect(foreignOrigin.body.error.message).toMatch(/Origin 'https:\/\/evil\.example' is not allowed/);
    // DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends its own name as Host.
    expect((await raw(bridge.url, { body: INITIALIZE, headers: { host: `evil.example:${port}`, origin: `http://evil.example:${port}` } })).status).toBe(403);
    // The bridge's own names pass, with or without a same-origin Origin.
    const plain = await raw(bridge.url, { body: INITIALIZE, headers: auth });
    expect(plain.status).toBe(200);
    expect(plain.body.result.serverInfo.name).toBe('switchyard');
    const loopbackName = await raw(bridge.url, { body: INITIALIZE, headers: { ...auth, host: `localhost:${port}`, origin: `http://localhost:${port}` } });
    expect(loopbackName.status).toBe(200);
  });

  it('acts with the caller’s own key: a read-only key lists but may not write, even though the bridge holds an all-scope key', async () => {
    const asReader = await bridgeOverHttp(svc.baseUrl, reader.key, ['--api-token', robot.key]);
    try {
      const listed = await asReader.call('list_workflows', {});
      expect(listed.ok).toBe(true);
      const forbidden = await asReader.call('toggle_workflow', { workflowId, enabled: false });
      expect(forbidden.ok).toBe(false);
      expect(forbidden.error?.code).toBe('FORBIDDEN');
      expect((await svc.api.get(`/api/v1/workflows/${workflowId}`)).body.enabled).toBe(true);
    } finally {
      await asReader.close();
    }
  });

  it('records the caller as who triggered a run', async () => {
    const asAuthor = await bridgeOverHttp(svc.baseUrl, author.key, ['--api-token', robot.key]);
    try {
      const started = await asAuthor.call('run_workflow', { workflowId });
      expect(started.ok).toBe(true);
      expect(await triggeringUser(started.data.runId)).toBe('api-key:agent-author');
    } finally {
      await asAuthor.close();
    }
  });

  it('answers 401 invalid_token to a bearer token the API does not accept, before any MCP work', async () => {
    const origin = new URL(bridge.url).origin;
    for (const token of [`${reader.key}x`, 'not-a-key-at-all']) {
      const answer = await raw(bridge.url, { body: INITIALIZE, headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toBe(
        `Bearer realm="switchyard-mcp", error="invalid_token", error_description="The API does not accept this bearer token", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(answer.body.error.code).toBe(-32001);
    }
    await expect(bridgeOverHttp(svc.baseUrl, `${reader.key}x`)).rejects.toThrow();
  });

  it('never writes a token to its log', () => {
    expect(logs).toContain('MCP HTTP request refused');
    for (const secret of [reader.key, robot.key, author.key]) expect(logs).not.toContain(secret);
  });
});

describe('bridge tokens', () => {
  it('serves a listed token with the bridge’s own key and answers 401 invalid_token to any other', async () => {
    const env = { SWITCHYARD_BRIDGE_TOKENS: `another-token-fedcba9876543210,${BRIDGE_TOKEN}` };
    const client = await bridgeOverHttp(svc.baseUrl, BRIDGE_TOKEN, ['--api-token', robot.key], { env });
    try {
      const started = await client.call('run_workflow', { workflowId });
      expect(started.ok).toBe(true);
      expect(await triggeringUser(started.data.runId)).toBe('api-key:ci-robot');
    } finally {
      await client.close();
    }
    const bridge = await startBridgeHttp(svc.baseUrl, ['--api-token', robot.key], { env });
    try {
      for (const token of [`${BRIDGE_TOKEN}0`, robot.key, reader.key]) {
        const wrong = await raw(bridge.url, { body: INITIALIZE, headers: { authorization: `Bearer ${token}` } });
        expect(wrong.status).toBe(401);
        expect(wrong.headers['www-authenticate']).toBe('Bearer realm="switchyard-mcp", error="invalid_token", error_description="The bearer token is not one of the bridge tokens"');
        expect(wrong.body.error.code).toBe(-32001);
      }
      expect((await raw(bridge.url, { body: INITIALIZE })).status).toBe(401);
      // No OAuth metadata: bridge tokens do not come from an authorization server.
      expect((await raw(`${new URL(bridge.url).origin}/.well-known/oauth-protected-resource/mcp`, { method: 'GET' })).status).toBe(404);
    } finally {
      await bridge.close();
    }
    await expect(bridgeOverHttp(svc.baseUrl, 'not-a-bridge-token-at-all', ['--api-token', robot.key], { env })).rejects.toThrow();
  });
});

describe('--http-auth none', () => {
  it('serves loopback callers without a credential with the bridge’s key (explicit development mode)', async () => {
    const client = await bridgeOverHttp(svc.baseUrl, null, ['--http-auth', 'none', '--api-token', reader.key]);
    try {
      expect((await client.call('list_workflows', {})).ok).toBe(true);
      expect((await client.call('toggle_workflow', { workflowId, enabled: false })).error?.code).toBe('FORBIDDEN');
    } finally {
      await client.close();
    }
  });

  it('does not start beyond loopback: switchyard-mcp exits 2 saying what to set', () => {
    const run = spawnSync(process.execPath, [BRIDGE_BIN, '--http', '0', '--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com', '--http-auth', 'none'], {
      env: { ...process.env, SWITCHYARD_API_URL: svc.baseUrl, SWITCHYARD_API_TOKEN: robot.key },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--host 0\.0\.0\.0 exposes the bridge beyond this machine, but --http-auth is none/);
    expect(run.stderr).toMatch(/--http-auth bearer/);
  });
});

describe('bearer mode in front of an API without authentication (SWITCHYARD_AUTH=none)', () => {
  let open: TestService;
  beforeAll(async () => {
    open = await startService();
  });
  afterAll(() => open?.close());

  /** `/mcp` of a bridge listening on every interface, reached over loopback. */
  const viaLoopback = (bridgeUrl: string) => `http://127.0.0.1:${new URL(bridgeUrl).port}/mcp`;

  it('beyond loopback: answers every request 503 saying why and what to do, and warns once', async () => {
    let logs = '';
    const logger = pino({ level: 'debug' }, { write: (line: string) => void (logs += line) });
    const bridge = await startBridgeHttp(open.baseUrl, ['--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com'], { logger });
    try {
      const url = viaLoopback(bridge.url);
      for (const token of ['x', reader.key]) {
        const answer = await raw(url, { body: INITIALIZE, headers: { host: 'mcp.example.com', authorization: `Bearer ${token}` } });
        expect(answer.status).toBe(503);
        expect(answer.headers.connection).toBe('close');
        expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
        expect(answer.body.error.message).toMatch(/the API behind this bridge accepts unauthenticated calls, so bearer pass-through would authenticate nobody/);
        expect(answer.body.error.message).toMatch(/SWITCHYARD_AUTH.*--host 127\.0\.0\.1/);
      }
      // Without a credential too, and on the metadata path: nothing is served.
      expect((await raw(url, { body: INITIALIZE, headers: { host: 'mcp.example.com' } })).status).toBe(503);
      expect((await raw(`${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`, { method: 'GET', headers: { host: 'mcp.example.com' } })).status).toBe(503);
      // The Host check still comes first.
      expect((await raw(url, { body: INITIALIZE, headers: { host: 'evil.example', authorization: 'Bearer x' } })).status).toBe(403);
      const warnings = logs.split('\n').filter((line) => line.includes('accepts unauthenticated calls'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!).level).toBe(40);
      expect(logs).not.toContain(reader.key);
    } finally {
      await bridge.close();
    }
  });

  it('beyond loopback in front of an API that requires credentials: serves as before', async () => {
    const bridge = await startBridgeHttp(svc.baseUrl, ['--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com']);
    try {
      const answer = await raw(viaLoopback(bridge.url), { body: INITIALIZE, headers: { host: 'mcp.example.com', authorization: `Bearer ${reader.key}` } });
      expect(answer.status).toBe(200);
      expect(answer.body.result.serverInfo.name).toBe('switchyard');
    } finally {
      await bridge.close();
    }
  });

  it('on loopback: no check, local callers are served', async () => {
    const client = await bridgeOverHttp(open.baseUrl, 'anything');
    try {
      expect((await client.call('list_workflows', {})).ok).toBe(true);
    } finally {
      await client.close();
    }
  });
});
