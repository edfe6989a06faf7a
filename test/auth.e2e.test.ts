/**
 * Authentication and scopes (issue 9 item 7) through the real app over HTTP: JWT (HS256 and a
 * JWKS served in-test), API keys, both at once, trusted-proxy headers; 401/403 for every operation
 * of the OpenAPI document by the scope it declares; who triggered, decided and cancelled comes
 * from the credential, never from headers or the body; the MCP bridge's --api-token.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier, Authenticator, SCOPES, newApiKey, renderOpenApi, type AuthConfig } from '@switchyard/api';
import { bridgeInProcess } from './support/bridge.ts';
import { startServerProcess } from './support/server-process.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const ALL = [...SCOPES];

/** An HS256 token for `sub` with `scopes` (claims override anything). */
function hsToken(sub: string, scopes: readonly string[], claims: Record<string, unknown> = {}, expiresIn: string | number = '5m'): Promise<string> {
  return new SignJWT({ scope: scopes.join(' '), preferred_username: `${sub}-name`, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(SECRET));
}

/** fetch with a bearer (or other) headers against `svc`. */
async function call(svc: TestService, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await fetch(`${svc.baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text), headers: response.headers };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function serviceWith(config: AuthConfig): Promise<TestService> {
  return startService({ edge: { authenticator: await Authenticator.create(config) } });
}

/** Creates and enables a one-step workflow with `token` (all scopes). */
async function echoWorkflow(svc: TestService, token: string, nodes: unknown[] = [echoStep('A')]): Promise<string> {
  const created = await call(svc, 'POST', wf(), bearer(token), { name: uniqueName('auth'), canvas: CANVAS, nodes });
  expect(created.status).toBe(201);
  expect((await call(svc, 'POST', wf(`/${created.body.id}/toggle`), bearer(token), { enabled: true })).status).toBe(200);
  return created.body.id as string;
}

describe('JWT (HS256)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await serviceWith({ modes: ['jwt'], jwt: { secret: SECRET, audience: 'switchyard-api' }, trustProxyIdentity: false });
  });
  afterAll(() => svc.close());

  it('401 authentication_required without a token, with a bad signature, expired, or for another audience', async () => {
    const missing = await call(svc, 'GET', wf());
    expect(missing.status).toBe(401);
    expect(missing.body.detail).toMatchObject({ error: 'authentication_required' });
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const forged = await new SignJWT({ aud: 'switchyard-api' }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setExpirationTime('5m').sign(new TextEncoder().encode('x'.repeat(40)));
    const expired = await hsToken('u', ALL, { aud: 'switchyard-api', iat: Math.floor(Date.now() / 1000) - 7200 }, Math.floor(Date.now() / 1000) - 3600);
    const otherAudience = await hsToken('u', ALL, { aud: 'someone-else' });
    const neverExpires = await new SignJWT({ aud: 'switchyard-api', scope: ALL.join(' ') }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').sign(new TextEncoder().encode(SECRET));
    const now = Math.floor(Date.now() / 1000);
    const issuedInFuture = await new SignJWT({ aud: 'switchyard-api' }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setIssuedAt(now + 3600).setExpirationTime(now + 7200).sign(new TextEncoder().encode(SECRET));
    const livesTooLong = await hsToken('u', ALL, { aud: 'switchyard-api' }, '400d');
    const livesTooLongWithoutIat = await new SignJWT({ aud: 'switchyard-api' }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setExpirationTime('2d').sign(new TextEncoder().encode(SECRET));
    const cases: Array<[Record<string, string>, RegExp]> = [
      [bearer(forged), /signature/],
      [bearer(expired), /expired/],
      [bearer(otherAudience), /'aud' claim/],
      [bearer(neverExpires), /'exp' claim/],
      [bearer(issuedInFuture), /'iat' claim lies in the future/],
      [bearer(livesTooLong), /longer than the 86400 s accepted \(SWITCHYARD_JWT_MAX_TTL_SECONDS\)/],
      [bearer(livesTooLongWithoutIat), /longer than the 86400 s accepted/],
      [{ authorization: 'Basic dTpw' }, /Bearer/],
      [bearer('not-a-jwt'), /not a JWT/],
    ];
    for (const [headers, message] of cases) {
      const response = await call(svc, 'GET', wf(), headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.body.detail.error).toBe('authentication_required');
      expect(response.body.detail.message).toMatch(message);
      // The credential is never echoed back.
      expect(JSON.stringify(response.body)).not.toContain(Object.values(headers)[0]!.slice(7, 40));
    }
  });

  it('401 and 403 for every operation of the OpenAPI document, by the scope its security requirement names', async () => {
    const document = JSON.parse(await renderOpenApi()) as { paths: Record<string, Record<string, { security?: Array<Record<string, string[]>> }>> };
    const none = await hsToken('nobody', [], { aud: 'switchyard-api' });
    const tokens = Object.fromEntries(await Promise.all(ALL.map(async (scope) => [scope, await hsToken(`only-${scope}`, [scope], { aud: 'switchyard-api' })])));
    let checked = 0;
    for (const [template, operations] of Object.entries(document.paths)) {
      const path = template.replace(/\{[^}]+\}/g, '0123456789abcdef01234567');
      for (const [method, operation] of Object.entries(operations)) {
        const scope = operation.security?.[0]?.bearerAuth?.[0];
        // The probes are public (outside /api/): answered without a credential, whatever it is.
        if (!template.startsWith('/api/')) {
          expect(scope, `${method} ${template} is public`).toBeUndefined();
          expect((await call(svc, method.toUpperCase(), path, { accept: 'application/json' })).status, `${method} ${template} without a token`).toBe(200);
          expect((await call(svc, method.toUpperCase(), path, { accept: 'application/json', ...bearer(none) })).status, `${method} ${template} without scopes`).toBe(200);
          continue;
        }
        expect(scope, `${method} ${template} declares a scope`).toBeDefined();
        const headers = { accept: 'text/event-stream, application/json' };
        expect((await call(svc, method.toUpperCase(), path, headers)).status, `${method} ${template} without a token`).toBe(401);
        const denied = await call(svc, method.toUpperCase(), path, { ...headers, ...bearer(none) });
        expect(denied.status, `${method} ${template} without scopes`).toBe(403);
        expect(denied.body.detail).toMatchObject({ error: 'permission_denied', details: { requiredScope: scope, grantedScopes: [] } });
        for (const other of ALL.filter((s) => s !== scope)) {
          expect((await call(svc, method.toUpperCase(), path, { ...headers, ...bearer(tokens[other]!) })).status, `${method} ${template} with ${other}`).toBe(403);
        }
        // With its scope the request gets past authorization (the dummy ids then give 400/404/...).
        const allowed = await call(svc, method.toUpperCase(), path, { ...headers, ...bearer(tokens[scope!]!) });
        expect([401, 403], `${method} ${template} with ${scope}`).not.toContain(allowed.status);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(25);
  });

  it('maps each endpoint group to its scope: reads, definition changes, run control', () => {
    return renderOpenApi().then((text) => {
      const paths = JSON.parse(text).paths as Record<string, Record<string, { security: Array<Record<string, string[]>> }>>;
      const scopeOf = (method: string, path: string) => paths[path]?.[method]?.security[0]?.bearerAuth?.[0];
      const p = '/api/v1/workflows';
      expect(scopeOf('get', p)).toBe('workflows-read');
      expect(scopeOf('get', `${p}/{workflow_id}/runs/{run_id}/events/stream`)).toBe('workflows-read');
      expect(scopeOf('get', '/api/v1/executors')).toBe('workflows-read');
      expect(scopeOf('post', p)).toBe('workflows-write');
      expect(scopeOf('put', `${p}/{workflow_id}`)).toBe('workflows-write');
      expect(scopeOf('post', `${p}/{workflow_id}/toggle`)).toBe('workflows-write');
      expect(scopeOf('post', `${p}/validate`)).toBe('workflows-write');
      expect(scopeOf('delete', `${p}/{workflow_id}/runs/{run_id}`)).toBe('workflows-write');
      for (const action of ['runs', 'runs/{run_id}/approve', 'runs/{run_id}/pause', 'runs/{run_id}/resume', 'runs/{run_id}/cancel', 'runs/{run_id}/retry', 'runs/{run_id}/replay', 'runs/{run_id}/nodes/{node_id}/rerun', 'runs/{run_id}/human-requests']) {
        expect(scopeOf('post', `${p}/{workflow_id}/${action}`), action).toBe('workflows-control');
      }
    });
  });

  it('stores the identity of the token on the run, ignores identity headers, and records the decider and the canceller from the token', async () => {
    const admin = await hsToken('admin', ALL, { aud: 'switchyard-api' });
    const workflowId = await echoWorkflow(svc, admin, [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Go?' } })]);
    // Every caller may run it and decide its gates (issue #18: per-workflow roles).
    expect((await call(svc, 'PUT', wf(`/${workflowId}/access`), bearer(admin), { owners: ['user:admin'], operators: ['*'] })).status).toBe(200);
    const ada = await hsToken('u-ada', ['workflows-control', 'workflows-read'], { aud: 'switchyard-api', preferred_username: 'ada' });
    const triggered = await call(svc, 'POST', wf(`/${workflowId}/runs`), { ...bearer(ada), 'x-switchyard-user-id': 'mallory', 'x-switchyard-scopes': 'everything' }, {});
    expect(triggered.status).toBe(202);
    const runId = triggered.body.runId as string;
    const doc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === runId);
    expect(doc).toMatchObject({ triggering_user_id: 'u-ada', triggering_username: 'ada', triggering_scopes: ['workflows-control', 'workflows-read'] });
    expect(JSON.stringify(doc)).not.toContain(ada);

    const grace = await hsToken('u-grace', ['workflows-control', 'workflows-read'], { aud: 'switchyard-api', preferred_username: undefined, name: 'Grace' });
    let gate: any;
    for (let i = 0; i < 200; i++) {
      gate = (await call(svc, 'GET', wf(`/${workflowId}/runs/${runId}`), bearer(admin))).body;
      if (gate.pendingRequirements?.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const stepId = gate.pendingRequirements[0].stepId as string;
    const decided = await call(svc, 'POST', wf(`/${workflowId}/runs/${runId}/approve`), { ...bearer(grace), 'x-switchyard-username': 'mallory' }, { stepId, resolution: 'confirm' });
    expect(decided.status).toBe(200);
    const runDoc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === runId) as any;
    expect(runDoc.pending_requirements[0].decided_by_user).toEqual({ user_id: 'u-grace', username: 'Grace', via: 'jwt' });
    expect(JSON.stringify(runDoc)).not.toContain('mallory');

    // Cancel: the canceller is the token's user.
    const second = await call(svc, 'POST', wf(`/${workflowId}/runs`), bearer(ada), {});
    const cancelled = await call(svc, 'POST', wf(`/${workflowId}/runs/${second.body.runId}/cancel`), { ...bearer(grace), 'x-switchyard-username': 'mallory' }, { reason: 'test' });
    expect(cancelled.status).toBe(200);
    const secondDoc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === second.body.runId) as any;
    expect(secondDoc.cancelled_by).toEqual({ user_id: 'u-grace', username: 'Grace', via: 'jwt' });
  });

  it('leaves /healthz, the OpenAPI document and CORS-free public routes open', async () => {
    expect((await call(svc, 'GET', '/healthz')).status).toBe(200);
    expect((await call(svc, 'GET', '/docs/json')).status).toBe(200);
  });
});

describe('JWT from a JWKS URL', () => {
  let svc: TestService;
  let jwks: Server;
  let sign: (claims: Record<string, unknown>, key?: KeyLike) => Promise<string>;
  let otherKey: KeyLike;
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    otherKey = (await generateKeyPair('RS256')).privateKey;
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    sign = (claims, key = privateKey) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject('u-rs').setIssuer('https://idp.test').setIssuedAt().setExpirationTime('5m').sign(key);
    svc = await serviceWith({ modes: ['jwt'], jwt: { jwksUrl: url, issuer: 'https://idp.test' }, trustProxyIdentity: false });
  });
  afterAll(async () => {
    await svc.close();
    await new Promise((resolve) => jwks.close(resolve));
  });

  it('accepts a token signed by a key of the set, with scopes from a `scopes` array; refuses another key and an HS256 token', async () => {
    expect((await call(svc, 'GET', wf(), bearer(await sign({ scopes: ['workflows-read'] })))).status).toBe(200);
    expect((await call(svc, 'POST', wf('/validate'), bearer(await sign({ scopes: ['workflows-read'] })), { nodes: [] })).status).toBe(403);
    const wrongKey = await call(svc, 'GET', wf(), bearer(await sign({ scopes: ['workflows-read'] }, otherKey)));
    expect(wrongKey.status).toBe(401);
    expect((await call(svc, 'GET', wf(), bearer(await hsToken('u', ALL, { iss: 'https://idp.test' })))).status).toBe(401);
  });
});

describe('API keys', () => {
  let svc: TestService;
  let dir: string;
  const reader = newApiKey('dashboard', ['workflows-read']);
  const robot = newApiKey('ci-robot', ALL);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-keys-'));
    const file = join(dir, 'keys.json');
    await writeFile(file, JSON.stringify({ keys: [reader.entry, robot.entry] }));
    svc = await serviceWith({ modes: ['jwt', 'api-key'], jwt: { secret: SECRET }, apiKeysFile: file, trustProxyIdentity: false });
  });
  afterAll(async () => {
    await svc.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts a key as a bearer or as X-API-Key, refuses an unknown key and a missing scope; JWTs work alongside', async () => {
    expect((await call(svc, 'GET', wf(), bearer(reader.key))).status).toBe(200);
    expect((await call(svc, 'GET', wf(), { 'x-api-key': reader.key })).status).toBe(200);
    const unknown = await call(svc, 'GET', wf(), bearer(`${reader.key}x`));
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail.message).toBe('Unknown API key');
    const denied = await call(svc, 'POST', wf(), { 'x-api-key': reader.key }, { name: 'x', canvas: CANVAS, nodes: [] });
    expect(denied.status).toBe(403);
    expect(denied.body.detail.details).toEqual({ requiredScope: 'workflows-write', grantedScopes: ['workflows-read'] });
    expect((await call(svc, 'GET', wf(), bearer(await hsToken('u', ['workflows-read'])))).status).toBe(200);
  });

  it('records a service account as `api-key:<name>` on the runs it triggers', async () => {
    const workflowId = await echoWorkflow(svc, robot.key);
    const triggered = await call(svc, 'POST', wf(`/${workflowId}/runs`), bearer(robot.key), {});
    expect(triggered.status).toBe(202);
    const doc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === triggered.body.runId);
    expect(doc).toMatchObject({ triggering_user_id: 'api-key:ci-robot', triggering_username: 'ci-robot' });
    expect(JSON.stringify(doc)).not.toContain(robot.key);
  });

  it('lets the MCP bridge in with --api-token, and answers UNAUTHORIZED without it', async () => {
    const withToken = await bridgeInProcess(svc.baseUrl, ['--api-token', robot.key]);
    const without = await bridgeInProcess(svc.baseUrl);
    try {
      const listed = await withToken.call('list_workflows', {});
      expect(listed.ok).toBe(true);
      const refused = await without.call('list_workflows', {});
      expect(refused.ok).toBe(false);
      expect(refused.error?.code).toBe('UNAUTHORIZED');
      const readOnly = await bridgeInProcess(svc.baseUrl, ['--api-token', reader.key]);
      try {
        const workflowId = await echoWorkflow(svc, robot.key);
        const forbidden = await readOnly.call('toggle_workflow', { workflowId, enabled: false });
        expect(forbidden.ok).toBe(false);
        expect(forbidden.error?.code).toBe('FORBIDDEN');
      } finally {
        await readOnly.close();
      }
    } finally {
      await withToken.close();
      await without.close();
    }
  });

  it('refuses a keys file with a malformed hash or an unknown scope, naming the problem', () => {
    expect(() => new ApiKeyVerifier({ keys: [{ name: 'a', sha256: 'zz', scopes: [] }] })).toThrow(/sha256/);
    expect(() => new ApiKeyVerifier({ keys: [{ name: 'a', sha256: 'a'.repeat(64), scopes: ['admin'] }] })).toThrow(/scopes/);
    expect(() => new ApiKeyVerifier({ keys: [reader.entry, { ...reader.entry }] })).toThrow(/twice/);
  });
});

describe('trusted-proxy identity headers', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await serviceWith({ modes: [], trustProxyIdentity: true });
  });
  afterAll(() => svc.close());

  it('takes the caller from x-switchyard-* and enforces x-switchyard-scopes when the proxy sends them', async () => {
    const created = await call(svc, 'POST', wf(), { 'x-switchyard-user-id': 'u-1', 'x-switchyard-scopes': 'workflows-read' }, { name: uniqueName('proxy'), canvas: CANVAS, nodes: [echoStep('A')] });
    expect(created.status).toBe(403);
    const allowed = await call(svc, 'POST', wf(), { 'x-switchyard-user-id': 'u-1', 'x-switchyard-scopes': 'workflows-write' }, { name: uniqueName('proxy'), canvas: CANVAS, nodes: [echoStep('A')] });
    expect(allowed.status).toBe(201);
  });

  it('refuses a request that did not come through the proxy (401), and grants nothing without scopes (403)', async () => {
    const direct = await call(svc, 'GET', wf());
    expect(direct.status).toBe(401);
    expect(direct.body.detail.message).toMatch(/no identity from the authenticating proxy/);
    // A credential is no way around it: without a mode it is not even looked at.
    expect((await call(svc, 'GET', wf(), bearer('anything'))).status).toBe(401);
    const unscoped = await call(svc, 'GET', wf(), { 'x-switchyard-user-id': 'u-1' });
    expect(unscoped.status).toBe(403);
    expect(unscoped.body.detail.details).toEqual({ requiredScope: 'workflows-read', grantedScopes: [] });
  });

  it('accepts x-switchyard-groups, and answers 401 naming the header when it lists a 10 KB group name or more than 100 groups', async () => {
    const headers = { 'x-switchyard-user-id': 'u-1', 'x-switchyard-scopes': 'workflows-read' };
    expect((await call(svc, 'GET', wf(), { ...headers, 'x-switchyard-groups': 'ops, finance' })).status).toBe(200);
    for (const groups of [`ops,${'x'.repeat(10 * 1024)}`, Array.from({ length: 101 }, (_, i) => `g${i}`).join(',')]) {
      const refused = await call(svc, 'GET', wf(), { ...headers, 'x-switchyard-groups': groups });
      expect(refused.status).toBe(401);
      expect(refused.body.detail).toMatchObject({ error: 'authentication_required', message: expect.stringMatching(/^The X-Switchyard-Groups header/) });
      expect(JSON.stringify(refused.body)).not.toContain('xxxxxxxxxx');
    }
  });
});

describe('JWT with trusted-proxy mode', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await serviceWith({ modes: ['jwt'], jwt: { secret: SECRET }, trustProxyIdentity: true });
  });
  afterAll(() => svc.close());

  it('never lets proxy headers stand in for a missing JWT', async () => {
    const spoofed = await call(svc, 'GET', wf(), { 'x-switchyard-user-id': 'admin', 'x-switchyard-scopes': ALL.join(',') });
    expect(spoofed.status).toBe(401);
    expect(spoofed.body.detail.error).toBe('authentication_required');
    expect((await call(svc, 'GET', wf(), bearer(await hsToken('u', ['workflows-read'])))).status).toBe(200);
  });
});

describe('API keys with trusted-proxy mode', () => {
  let svc: TestService;
  const key = newApiKey('reader', ['workflows-read']);
  beforeAll(async () => {
    svc = await startService({ edge: { authenticator: Authenticator.withKeys(new ApiKeyVerifier({ keys: [key.entry] }), true) } });
  });
  afterAll(() => svc.close());

  it('never lets proxy headers stand in for a missing API key', async () => {
    const spoofed = await call(svc, 'GET', wf(), { 'x-switchyard-user-id': 'admin', 'x-switchyard-scopes': ALL.join(',') });
    expect(spoofed.status).toBe(401);
    expect((await call(svc, 'GET', wf(), bearer(key.key))).status).toBe(200);
  });
});

describe('without authentication (the loopback default)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(() => svc.close());

  it('ignores identity headers: a run triggered with them records the anonymous caller', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('anon'), canvas: CANVAS, nodes: [echoStep('A')] });
    void workflowId;
    const spoofed = await call(svc, 'POST', wf(`/${workflowId}/runs`), { 'x-switchyard-user-id': 'mallory' }, {});
    expect(spoofed.status).toBe(202);
    for (const id of [runId, spoofed.body.runId]) {
      const doc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === id);
      expect(doc).toMatchObject({ triggering_user_id: 'anonymous', triggering_via: 'none' });
    }
  });
});

describe('the server process', () => {
  it('refuses to start on a non-loopback HOST without authentication, saying what to set', async () => {
    await expect(startServerProcess({ HOST: '0.0.0.0', SWITCHYARD_AUTH: 'none' })).rejects.toThrow(/HOST=0\.0\.0\.0 exposes the API beyond this machine, but SWITCHYARD_AUTH is none/);
  });

  it('refuses to start with an unreadable API keys file, naming it', async () => {
    await expect(startServerProcess({ SWITCHYARD_AUTH: 'api-key', SWITCHYARD_API_KEYS_FILE: '/nonexistent/keys.json' })).rejects.toThrow(/SWITCHYARD_API_KEYS_FILE '\/nonexistent\/keys\.json' cannot be read/);
  });
});
