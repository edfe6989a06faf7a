/**
 * Downstream tokens (issue 9 item 7; security issue item 7: bound to their receiver): what the minter signs, and that a webhook receives the
 * call's token as its bearer unless its entry sets Authorization. MCP over HTTP:
 * executors/mcp-http.test.ts; A2A: executors/a2a.test.ts; through runs and a HITL pause:
 * test/downstream-token.e2e.test.ts.
 */
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HmacTokenMinter, downstreamAuthorization } from './downstream-token.ts';
import { createExecutorRegistry } from './executors/registry.ts';
import type { ExecutorCall, ExecutorRegistry } from './executors/types.ts';
import { ManualClock } from './testing/manual-clock.ts';
import { WebhookServer, json } from './testing/webhook-server.ts';

const SECRET = 'downstream-secret-of-32-bytes-or-more';
const key = new TextEncoder().encode(SECRET);

describe('HmacTokenMinter', () => {
  it('signs sub, preferred_username, iss, aud and azp of the executor, its declared scopes, iat/exp (lifetime from the clock) and what the call is for', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 12));
    const minter = new HmacTokenMinter({ secret: SECRET, audience: 'tools', ttlSeconds: 120, clock });
    const token = await minter.mint(
      { userId: 'u-1', username: 'ada', scopes: ['workflows-read', 'workflows-control'] },
      { runId: 'r-1', nodeId: 'n-1', executorKey: 'crm-hook', audience: 'https://crm.example.org', scopes: ['workflows-read'] },
    );
    expect(decodeProtectedHeader(token!)).toMatchObject({ alg: 'HS256', typ: 'JWT' });
    const { payload } = await jwtVerify(token!, key, { audience: 'https://crm.example.org', issuer: 'switchyard', currentDate: clock.now() });
    expect(payload).toMatchObject({
      sub: 'u-1',
      aud: 'https://crm.example.org',
      azp: 'crm-hook',
      preferred_username: 'ada',
      scope: 'workflows-read',
      switchyard_run_id: 'r-1',
      switchyard_node_id: 'n-1',
      iat: Date.UTC(2026, 10, 23, 12) / 1000,
      exp: Date.UTC(2026, 10, 23, 12) / 1000 + 120,
    });
    expect(typeof payload.jti).toBe('string');
    // Expired once its lifetime is over.
    await clock.advance(121_000);
    await expect(jwtVerify(token!, key, { currentDate: clock.now() })).rejects.toThrow(/exp/);
  });

  it('is refused by a receiver checking aud for another audience', async () => {
    const minter = new HmacTokenMinter({ secret: SECRET, audience: 'tools' });
    const token = await minter.mint({ userId: 'u-1', username: null, scopes: [] }, { runId: 'r', nodeId: 'n', executorKey: 'a', audience: 'https://a.example.org' });
    await expect(jwtVerify(token!, key, { audience: 'https://b.example.org' })).rejects.toThrow(/unexpected "aud" claim value/);
    await expect(jwtVerify(token!, key, { audience: 'tools' })).rejects.toThrow(/unexpected "aud" claim value/);
  });

  it('carries no scope by default, and only declared scopes the identity holds; the configured audience without one of the executor', async () => {
    const minter = new HmacTokenMinter({ secret: SECRET, audience: 'tools' });
    const identity = { userId: 'u-1', username: null, scopes: ['workflows-read', 'workflows-control'] };
    const plain = await jwtVerify((await minter.mint(identity, { runId: 'r', nodeId: 'n', executorKey: 'builtin.echo' }))!, key, { audience: 'tools' });
    expect(plain.payload.scope).toBeUndefined();
    expect(plain.payload.azp).toBe('builtin.echo');
    const declared = await minter.mint(identity, { runId: 'r', nodeId: 'n', executorKey: 'k', audience: 'x', scopes: ['workflows-control', 'workflows-admin'] });
    expect((await jwtVerify(declared!, key, { audience: 'x' })).payload.scope).toBe('workflows-control');
  });

  it('mints nothing for a run without an identity, and refuses a key shorter than 32 bytes', async () => {
    const minter = new HmacTokenMinter({ secret: SECRET, audience: 'tools' });
    await expect(minter.mint({ userId: null, username: null, scopes: [] }, { runId: 'r', nodeId: 'n', executorKey: 'k' })).resolves.toBeUndefined();
    expect(() => new HmacTokenMinter({ secret: 'short', audience: 'tools' })).toThrow(/32 bytes/);
  });

  it('adds the bearer unless the configured headers set Authorization (any case)', () => {
    expect(downstreamAuthorization('t', {})).toEqual({ authorization: 'Bearer t' });
    expect(downstreamAuthorization('t', { AUTHORIZATION: 'Basic x' })).toEqual({});
    expect(downstreamAuthorization(undefined, {})).toEqual({});
  });
});

describe('http executor with a downstream token', () => {
  let server: WebhookServer;
  let registry: ExecutorRegistry;
  const call = (downstreamToken?: string): ExecutorCall => ({
    arguments: {},
    input: null,
    attempt: 1,
    signal: new AbortController().signal,
    ...(downstreamToken === undefined ? {} : { downstreamToken }),
    context: { runId: 'r', nodeId: 'n', nodeName: 'Hook' },
  });
  beforeAll(async () => {
    server = await WebhookServer.start();
    server.respond(json(200, { ok: true }));
    registry = createExecutorRegistry(
      { executors: { open: { kind: 'http', url: server.url('/open') }, keyed: { kind: 'http', url: server.url('/keyed'), headers: { Authorization: 'Bearer static' } } } },
      { baseDir: '.', env: {} },
    );
  });
  afterAll(async () => {
    await registry.close();
    await server.close();
  });

  it('sends the token as the bearer; the entry\'s own Authorization wins; no token, no header', async () => {
    await registry.get('open').invoke(call('minted'));
    expect(server.requests.at(-1)!.headers.authorization).toBe('Bearer minted');
    await registry.get('keyed').invoke(call('minted'));
    expect(server.requests.at(-1)!.headers.authorization).toBe('Bearer static');
    await registry.get('open').invoke(call());
    expect(server.requests.at(-1)!.headers.authorization).toBeUndefined();
  });
});

describe('what each executor binds its tokens to', () => {
  it('aud: the target origin by default (http, a2a, mcp over HTTP), tokenAudience when set, none for built-ins and stdio MCP; scopes: tokenScopes, none by default', async () => {
    const registry = createExecutorRegistry(
      {
        mcpServers: { remote: { url: 'https://mcp.example.org:8443/mcp' }, local: { command: 'node', args: ['server.js'] } },
        executors: {
          hook: { kind: 'http', url: 'https://hooks.example.org/in?key=1' },
          custom: { kind: 'http', url: 'https://hooks.example.org/other', tokenAudience: 'urn:crm', tokenScopes: ['crm.write', 'crm.write'] },
          agent: { kind: 'a2a', url: 'http://agents.example.org:9000/summarizer', tokenScopes: ['workflows-read'] },
          tool: { kind: 'mcp', server: 'remote', tool: 'search' },
          localTool: { kind: 'mcp', server: 'local', tool: 'search' },
        },
      },
      { baseDir: '.', env: {} },
    );
    try {
      expect(registry.get('hook').token).toEqual({ audience: 'https://hooks.example.org', scopes: [] });
      expect(registry.get('custom').token).toEqual({ audience: 'urn:crm', scopes: ['crm.write'] });
      expect(registry.get('agent').token).toEqual({ audience: 'http://agents.example.org:9000', scopes: ['workflows-read'] });
      expect(registry.get('tool').token).toEqual({ audience: 'https://mcp.example.org:8443', scopes: [] });
      expect(registry.get('localTool').token).toEqual({ scopes: [] });
      expect(registry.get('builtin.echo').token).toBeUndefined();
    } finally {
      await registry.close();
    }
  });
});
