/**
 * Authentication configuration and its interplay with the edge, through app.inject: the
 * `SWITCHYARD_AUTH` family of variables (config.ts), the loopback rule (`assertSafeBinding`),
 * CORS preflights that carry no credential, rate limits counted per authenticated caller. The
 * modes themselves over real HTTP: test/auth.e2e.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp, type BuildAppOptions } from '../src/app.ts';
import { ApiKeyVerifier, newApiKey } from '../src/auth/api-keys.ts';
import { Authenticator } from '../src/auth/authenticator.ts';
import { assertSafeBinding, isLoopback, loadConfig } from '../src/config.ts';
import type { AppServices } from '../src/services/index.ts';

const ID = '0123456789abcdef01234567';
const services = { repos: { definitions: { get: async () => null, accessOf: async () => null }, runs: { get: async () => null, workflowIdOf: async () => null, getInWorkflow: async () => null } } } as unknown as AppServices;

const apps: FastifyInstance[] = [];
async function app(options: Omit<BuildAppOptions, 'services'>): Promise<FastifyInstance> {
  const built = await buildApp({ services, docs: false, ...options });
  apps.push(built);
  return built;
}
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

describe('configuration', () => {
  it('defaults to none, without proxy headers and without downstream tokens', () => {
    const config = loadConfig({});
    expect(config.auth).toEqual({ modes: [], trustProxyIdentity: false });
    expect(config.downstreamToken).toBeNull();
  });

  it('reads jwt and api-key modes with what each needs', () => {
    const config = loadConfig({
      SWITCHYARD_AUTH: 'jwt, api-key',
      SWITCHYARD_JWT_SECRET: 's'.repeat(32),
      SWITCHYARD_JWT_ISSUER: 'https://idp',
      SWITCHYARD_API_KEYS_FILE: 'keys.json',
      SWITCHYARD_TRUST_PROXY_IDENTITY: 'true',
    });
    expect(config.auth.modes).toEqual(['jwt', 'api-key']);
    expect(config.auth.jwt).toMatchObject({ secret: 's'.repeat(32), issuer: 'https://idp' });
    expect(config.auth.apiKeysFile).toMatch(/\/keys\.json$/);
    expect(config.auth.trustProxyIdentity).toBe(true);
  });

  it('refuses unknown modes, a jwt mode with neither or both key sources, api-key without a file, bad booleans, short secrets', () => {
    expect(() => loadConfig({ SWITCHYARD_AUTH: 'oauth' })).toThrow(/SWITCHYARD_AUTH must be/);
    expect(() => loadConfig({ SWITCHYARD_AUTH: 'jwt' })).toThrow(/exactly one of SWITCHYARD_JWT_SECRET/);
    expect(() => loadConfig({ SWITCHYARD_AUTH: 'jwt', SWITCHYARD_JWT_SECRET: 'x'.repeat(32), SWITCHYARD_JWKS_URL: 'https://idp/jwks' })).toThrow(/exactly one/);
    expect(() => loadConfig({ SWITCHYARD_AUTH: 'jwt', SWITCHYARD_JWKS_URL: 'ftp://idp/jwks' })).toThrow(/SWITCHYARD_JWKS_URL must be an http/);
    expect(() => loadConfig({ SWITCHYARD_AUTH: 'api-key' })).toThrow(/SWITCHYARD_API_KEYS_FILE/);
    expect(() => loadConfig({ SWITCHYARD_TRUST_PROXY_IDENTITY: 'yes' })).toThrow(/true or false/);
    expect(() => loadConfig({ SWITCHYARD_DOWNSTREAM_TOKEN_SECRET: 'short' })).toThrow(/at least 32 bytes/);
    expect(loadConfig({ SWITCHYARD_DOWNSTREAM_TOKEN_SECRET: 'd'.repeat(32) }).downstreamToken).toEqual({
      secret: 'd'.repeat(32),
      audience: 'switchyard-executors',
      issuer: 'switchyard',
      ttlSeconds: 300,
    });
  });

  it('refuses a downstream token key equal to the API\'s JWT secret (a receiver could call the API with it)', () => {
    expect(() =>
      loadConfig({ SWITCHYARD_AUTH: 'jwt', SWITCHYARD_JWT_SECRET: 's'.repeat(32), SWITCHYARD_DOWNSTREAM_TOKEN_SECRET: 's'.repeat(32) }),
    ).toThrow(/must differ from SWITCHYARD_JWT_SECRET/);
  });

  it('refuses a JWT secret shorter than 32 bytes when the authenticator is built', async () => {
    await expect(Authenticator.create({ modes: ['jwt'], jwt: { secret: 'short' }, trustProxyIdentity: false })).rejects.toThrow(/at least 32 bytes/);
  });

  it('refuses to serve beyond loopback without authentication, and says what to set', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopback(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'example.com', '128.0.0.1']) expect(isLoopback(host), host).toBe(false);
    expect(() => assertSafeBinding(loadConfig({ HOST: '0.0.0.0' }))).toThrow(/HOST=0\.0\.0\.0 exposes the API.*SWITCHYARD_AUTH=jwt/);
    expect(() => assertSafeBinding(loadConfig({ HOST: '0.0.0.0', SWITCHYARD_AUTH: 'jwt', SWITCHYARD_JWT_SECRET: 'x'.repeat(32) }))).not.toThrow();
    expect(() => assertSafeBinding(loadConfig({ HOST: '0.0.0.0', SWITCHYARD_TRUST_PROXY_IDENTITY: 'true' }))).not.toThrow();
    expect(() => assertSafeBinding(loadConfig({}))).not.toThrow();
  });

  it("refuses CORS origin '*' without authentication, even on loopback", () => {
    expect(() => assertSafeBinding(loadConfig({ SWITCHYARD_CORS_ORIGINS: '*' }))).toThrow(/SWITCHYARD_CORS_ORIGINS=\* lets every web page call the API/);
    expect(() => assertSafeBinding(loadConfig({ SWITCHYARD_CORS_ORIGINS: 'https://canvas.example.com' }))).not.toThrow();
    expect(() => assertSafeBinding(loadConfig({ SWITCHYARD_CORS_ORIGINS: '*', SWITCHYARD_AUTH: 'jwt', SWITCHYARD_JWT_SECRET: 'x'.repeat(32) }))).not.toThrow();
  });

  it('reads SWITCHYARD_ALLOWED_HOSTS as host names with optional ports and names a malformed entry', () => {
    expect(loadConfig({ SWITCHYARD_ALLOWED_HOSTS: 'API.example.com, api.example.com:8443,[::1]:8080' }).edge.allowedHosts).toEqual([
      'api.example.com',
      'api.example.com:8443',
      '[::1]:8080',
    ]);
    expect(loadConfig({}).edge.allowedHosts).toEqual([]);
    for (const bad of ['https://api.example.com', 'api.example.com/x', '*.example.com', 'user@host']) {
      expect(() => loadConfig({ SWITCHYARD_ALLOWED_HOSTS: bad }), bad).toThrow(/SWITCHYARD_ALLOWED_HOSTS: .* is not a host name/);
    }
  });
});

describe('with authentication on', () => {
  const robot = newApiKey('robot', ['workflows-control', 'workflows-read']);
  const other = newApiKey('other', ['workflows-control']);
  const keys = new ApiKeyVerifier({ keys: [robot.entry, other.entry] });

  it('answers a CORS preflight without a credential (browsers send none), and refuses the request itself', async () => {
    const api = await app({ authenticator: Authenticator.withKeys(keys), corsOrigins: ['https://canvas.example.com'] });
    const preflight = await api.inject({
      method: 'OPTIONS',
      url: `/api/v1/workflows/${ID}/runs`,
      headers: { origin: 'https://canvas.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toContain('authorization');
    const refused = await api.inject({ method: 'POST', url: `/api/v1/workflows/${ID}/runs`, headers: { origin: 'https://canvas.example.com' }, payload: {} });
    expect(refused.statusCode).toBe(401);
    // The browser can read the error: CORS headers are on the 401 too.
    expect(refused.headers['access-control-allow-origin']).toBe('https://canvas.example.com');
  });

  it('counts rate limits per caller: one client with two keys has two budgets', async () => {
    const api = await app({ authenticator: Authenticator.withKeys(keys), rateLimits: { triggers: 2, approvals: 0 } });
    const trigger = (key: string) => api.inject({ method: 'POST', url: `/api/v1/workflows/${ID}/runs`, headers: { authorization: `Bearer ${key}` }, payload: {} });
    expect((await trigger(robot.key)).statusCode).toBe(404);
    expect((await trigger(robot.key)).statusCode).toBe(404);
    expect((await trigger(robot.key)).statusCode).toBe(429);
    expect((await trigger(other.key)).statusCode).toBe(404);
  });

  it('checks the credential before reading the body: a refused request is 401 even with a malformed body', async () => {
    const api = await app({ authenticator: Authenticator.withKeys(keys) });
    const response = await api.inject({ method: 'POST', url: '/api/v1/workflows', headers: { 'content-type': 'application/json' }, payload: '{not json' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ detail: { error: 'authentication_required' } });
  });
});

describe('npm run api-key', () => {
  it('makes a key, adds its hashed entry to the keys file (creating its directory), and the key then verifies with those scopes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-api-key-'));
    const file = join(dir, 'config', 'api-keys.json');
    const script = fileURLToPath(new URL('../src/scripts/api-key.ts', import.meta.url));
    try {
      const key = execFileSync(process.execPath, ['--import', 'tsx', script, 'ci-robot', 'workflows-read', '--file', file], { encoding: 'utf8' }).trim();
      const stored = readFileSync(file, 'utf8');
      expect(stored).not.toContain(key);
      const verifier = new ApiKeyVerifier(JSON.parse(stored));
      expect(verifier.verify(key)).toMatchObject({ userId: 'api-key:ci-robot', scopes: ['workflows-read'] });
      expect(verifier.verify(`${key}x`)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
