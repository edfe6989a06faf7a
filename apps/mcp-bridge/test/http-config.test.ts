/**
 * The HTTP mode's start-up rules (authentication modes, bridge tokens, Host/Origin lists, the
 * refusal of an unauthenticated bridge beyond loopback) and its per-request decisions (which
 * credential a request is served with, which Host and Origin pass, whether a bearer bridge may serve
 * in front of an API that needs no credential), without a network.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ApiUnavailableError,
  ConfigError,
  apiNeedsCredential,
  bearerModeUsable,
  checkHostAndOrigin,
  challengeOf,
  createCredentialRequirementCheck,
  createHttpAuthenticator,
  defaultAllowedHosts,
  defaultAllowedOrigins,
  hostKey,
  originKey,
  parseConfig,
  type ApiClient,
} from '@switchyard/mcp-bridge';

const TOKEN_A = 'bridge-token-aaaaaaaaaaaa';
const TOKEN_B = 'bridge-token-bbbbbbbbbbbb';

describe('HTTP configuration', () => {
  it('defaults to bearer pass-through on 127.0.0.1 with default Host/Origin lists', () => {
    expect(parseConfig(['--http', '8090'], {})!.http).toEqual({
      port: 8090,
      host: '127.0.0.1',
      auth: 'bearer',
      bridgeTokens: [],
      allowedHosts: null,
      allowedOrigins: null,
      publicUrl: null,
      authorizationServers: [],
    });
  });

  it('refuses to serve beyond loopback without authentication, saying what to set', () => {
    for (const host of ['0.0.0.0', '192.168.1.10', 'mcp.example.com', '::']) {
      const attempt = () => parseConfig(['--http', '8090', '--host', host, '--http-auth', 'none', '--allowed-hosts', 'mcp.example.com:8090'], {});
      expect(attempt, host).toThrow(ConfigError);
      expect(attempt, host).toThrow(/--http-auth is none.*--http-auth bearer.*SWITCHYARD_BRIDGE_TOKENS.*--host 127\.0\.0\.1/);
    }
    expect(() => parseConfig(['--http', '8090', '--host', '0.0.0.0', '--allowed-hosts', 'x:8090'], { SWITCHYARD_BRIDGE_HTTP_AUTH: 'none' })).toThrow(/--http-auth is none/);
    // Loopback development may run without caller credentials, explicitly.
    for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.2']) {
      expect(parseConfig(['--http', '8090', '--host', host, '--http-auth', 'none'], {})!.http!.auth, host).toBe('none');
    }
    // Authenticated modes may listen anywhere.
    expect(parseConfig(['--http', '8090', '--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com'], {})!.http!.auth).toBe('bearer');
    expect(parseConfig(['--http', '8090', '--host', '10.0.0.5'], { SWITCHYARD_BRIDGE_TOKENS: TOKEN_A })!.http!.auth).toBe('tokens');
  });

  it('needs --allowed-hosts when listening on every interface', () => {
    expect(() => parseConfig(['--http', '8090', '--host', '0.0.0.0'], {})).toThrow(/--allowed-hosts/);
    expect(parseConfig(['--http', '8090', '--host', '0.0.0.0'], { SWITCHYARD_BRIDGE_ALLOWED_HOSTS: 'localhost:8090, MCP.example.com' })!.http!.allowedHosts).toEqual(['localhost:8090', 'mcp.example.com']);
  });

  it('reads bridge tokens from SWITCHYARD_BRIDGE_TOKENS or a file, and refuses weak or misplaced ones', async () => {
    expect(parseConfig(['--http', '0'], { SWITCHYARD_BRIDGE_TOKENS: `${TOKEN_A}, ${TOKEN_B}` })!.http).toMatchObject({ auth: 'tokens', bridgeTokens: [TOKEN_A, TOKEN_B] });
    const dir = await mkdtemp(join(tmpdir(), 'bridge-tokens-'));
    try {
      const file = join(dir, 'tokens');
      await writeFile(file, `# agents\n${TOKEN_A}\n\n${TOKEN_B}\n`);
      expect(parseConfig(['--http', '0', '--bridge-tokens-file', file], {})!.http).toMatchObject({ auth: 'tokens', bridgeTokens: [TOKEN_A, TOKEN_B] });
      expect(() => parseConfig(['--http', '0', '--bridge-tokens-file', join(dir, 'missing')], {})).toThrow(/cannot be read/);
      expect(() => parseConfig(['--http', '0', '--bridge-tokens-file', file], { SWITCHYARD_BRIDGE_TOKENS: TOKEN_A })).toThrow(/not both/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(() => parseConfig(['--http', '0', '--http-auth', 'tokens'], {})).toThrow(/needs bridge tokens/);
    expect(() => parseConfig(['--http', '0'], { SWITCHYARD_BRIDGE_TOKENS: 'short' })).toThrow(/token #1 is shorter than 16/);
    expect(() => parseConfig(['--http', '0', '--http-auth', 'bearer'], { SWITCHYARD_BRIDGE_TOKENS: TOKEN_A })).toThrow(/only used with --http-auth tokens/);
    expect(() => parseConfig(['--http', '0', '--http-auth', 'open'], {})).toThrow(/'open' is not one of bearer, tokens, none/);
    // Stdio ignores the HTTP variables, but HTTP flags without --http are errors.
    expect(parseConfig([], { SWITCHYARD_BRIDGE_TOKENS: 'short' })!.http).toBeNull();
    expect(() => parseConfig(['--http-auth', 'none'], {})).toThrow(/--http-auth needs --http PORT/);
  });

  it('checks origins, the public URL and authorization servers', () => {
    const http = parseConfig(['--http', '0', '--allowed-origins', 'https://App.example.com,http://localhost:3000', '--public-url', 'https://mcp.example.com/', '--authorization-servers', 'https://idp.example.com'], {})!.http!;
    expect(http).toMatchObject({ allowedOrigins: ['https://app.example.com', 'http://localhost:3000'], publicUrl: 'https://mcp.example.com', authorizationServers: ['https://idp.example.com/'] });
    expect(() => parseConfig(['--http', '0', '--allowed-origins', 'https://app.example.com/path'], {})).toThrow(/is not an origin/);
    expect(() => parseConfig(['--http', '0', '--allowed-origins', 'app.example.com'], {})).toThrow(/not an http\(s\) URL/);
    expect(() => parseConfig(['--http', '0', '--allowed-hosts', 'a/b'], {})).toThrow(/is not host\[:port\]/);
  });
});

describe('per-request decisions', () => {
  it('bearer mode passes the caller’s own token through and never the bridge’s', () => {
    const authenticate = createHttpAuthenticator({ mode: 'bearer', bridgeTokens: [], apiToken: 'the-bridge-key' });
    expect(authenticate({ authorization: 'Bearer caller.jwt.value' })).toEqual({ ok: true, apiToken: 'caller.jwt.value', acting: 'caller' });
    expect(authenticate({ authorization: 'bearer  sy_key ' })).toEqual({ ok: true, apiToken: 'sy_key', acting: 'caller' });
    expect(authenticate({})).toMatchObject({ ok: false, reason: 'missing' });
    expect(authenticate({ authorization: 'Basic dTpw' })).toMatchObject({ ok: false, reason: 'missing' });
    expect(authenticate({ authorization: 'Bearer a b' })).toMatchObject({ ok: false, reason: 'invalid_token' });
    expect(authenticate({ authorization: `Bearer ${'x'.repeat(9000)}` })).toMatchObject({ ok: false, reason: 'invalid_token' });
  });

  it('tokens mode serves a listed bridge token with the bridge’s key and refuses others', () => {
    const authenticate = createHttpAuthenticator({ mode: 'tokens', bridgeTokens: [TOKEN_A, TOKEN_B], apiToken: 'the-bridge-key' });
    expect(authenticate({ authorization: `Bearer ${TOKEN_B}` })).toEqual({ ok: true, apiToken: 'the-bridge-key', acting: 'bridge' });
    expect(authenticate({ authorization: `Bearer ${TOKEN_A}x` })).toMatchObject({ ok: false, reason: 'invalid_token' });
    expect(authenticate({ authorization: 'Bearer the-bridge-key' })).toMatchObject({ ok: false, reason: 'invalid_token' });
    expect(authenticate({})).toMatchObject({ ok: false, reason: 'missing' });
    expect(createHttpAuthenticator({ mode: 'none', bridgeTokens: [], apiToken: 'k' })({})).toEqual({ ok: true, apiToken: 'k', acting: 'bridge' });
  });

  it('challenges in RFC 6750 style, with the resource metadata when served', () => {
    expect(challengeOf({ ok: false, reason: 'missing', description: 'x' }, 'http://localhost:8090/.well-known/oauth-protected-resource/mcp')).toBe(
      'Bearer realm="switchyard-mcp", resource_metadata="http://localhost:8090/.well-known/oauth-protected-resource/mcp"',
    );
    expect(challengeOf({ ok: false, reason: 'invalid_token', description: 'Not "one"' }, null)).toBe('Bearer realm="switchyard-mcp", error="invalid_token", error_description="Not one"');
  });

  it('allows the listen Host (and loopback names on loopback) and same-origin or Origin-less requests', () => {
    expect(defaultAllowedHosts('127.0.0.1', 8090)).toEqual(['127.0.0.1:8090', 'localhost:8090', '[::1]:8090']);
    expect(defaultAllowedHosts('::1', 8090)).toEqual(['[::1]:8090', 'localhost:8090', '127.0.0.1:8090']);
    expect(defaultAllowedHosts('10.0.0.5', 8090)).toEqual(['10.0.0.5:8090']);
    const hosts = defaultAllowedHosts('127.0.0.1', 8090);
    const lists = { hosts, origins: defaultAllowedOrigins(hosts) };
    expect(checkHostAndOrigin({ host: 'localhost:8090' }, lists)).toBeNull();
    expect(checkHostAndOrigin({ host: 'LOCALHOST:8090', origin: 'http://localhost:8090' }, lists)).toBeNull();
    expect(checkHostAndOrigin({ host: 'evil.example:8090' }, lists)).toMatch(/Host header 'evil.example:8090' is not allowed/);
    expect(checkHostAndOrigin({}, lists)).toMatch(/Host header/);
    expect(checkHostAndOrigin({ host: 'localhost:8090', origin: 'https://evil.example' }, lists)).toMatch(/Origin 'https:\/\/evil.example' is not allowed/);
    expect(checkHostAndOrigin({ host: 'localhost:8090', origin: 'null' }, lists)).toMatch(/Origin 'null'/);
  });

  it('treats a Host without port as port 80, as browsers send it (and as the API does)', () => {
    expect(hostKey('Example.com:80')).toBe('example.com');
    expect(hostKey('[::1]:80')).toBe('[::1]');
    for (const other of ['example.com:8080', 'example.com:800', 'example.com:080', 'example.com:', 'a@example.com:80']) expect(hostKey(other), other).not.toBe('example.com');
    expect(originKey('HTTP://example.com:80')).toBe('http://example.com');
    expect(originKey('https://example.com:443')).toBe('https://example.com');
    expect(originKey('https://example.com:80')).toBe('https://example.com:80');
    expect(originKey('http://example.com:443')).toBe('http://example.com:443');

    // An entry with :80 matches a browser's Host without port, and the other way round.
    const listed = { hosts: ['example.com:80', 'proxy.example.com'], origins: ['http://example.com:80', 'https://proxy.example.com'] };
    expect(checkHostAndOrigin({ host: 'example.com', origin: 'http://example.com' }, listed)).toBeNull();
    expect(checkHostAndOrigin({ host: 'example.com:80' }, listed)).toBeNull();
    expect(checkHostAndOrigin({ host: 'proxy.example.com' }, listed)).toBeNull();
    expect(checkHostAndOrigin({ host: 'proxy.example.com:80', origin: 'https://proxy.example.com:443' }, listed)).toBeNull();
    // Other ports still match exactly.
    expect(checkHostAndOrigin({ host: 'example.com:8080' }, listed)).toMatch(/Host header 'example.com:8080' is not allowed/);
    expect(checkHostAndOrigin({ host: 'proxy.example.com:8443' }, listed)).toMatch(/is not allowed/);
    expect(checkHostAndOrigin({ host: 'example.com', origin: 'http://example.com:8080' }, listed)).toMatch(/Origin 'http:\/\/example.com:8080' is not allowed/);

    // A bridge listening on port 80: the defaults accept the Host and Origin a browser sends.
    const hosts = defaultAllowedHosts('127.0.0.1', 80);
    const lists = { hosts, origins: defaultAllowedOrigins(hosts) };
    for (const host of ['127.0.0.1', 'localhost', '[::1]', 'localhost:80']) expect(checkHostAndOrigin({ host, origin: `http://${host}` }, lists), host).toBeNull();
    expect(checkHostAndOrigin({ host: 'localhost:8080' }, lists)).toMatch(/is not allowed/);
    // --allowed-hosts accepts both spellings.
    expect(parseConfig(['--http', '80', '--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com:80,other.example.com'], {})!.http!.allowedHosts).toEqual(['mcp.example.com:80', 'other.example.com']);
  });
});

describe('bearer mode in front of an API that needs no credential', () => {
  it('is refused only beyond loopback, and only when the API is known to serve anyone', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'mcp.example.com']) {
      expect(bearerModeUsable({ mode: 'bearer', host, apiNeedsCredential: false }), host).toBe(false);
      expect(bearerModeUsable({ mode: 'bearer', host, apiNeedsCredential: true }), host).toBe(true);
      // Unknown (API unreachable): served as before; the tool calls report the API.
      expect(bearerModeUsable({ mode: 'bearer', host, apiNeedsCredential: null }), host).toBe(true);
      // Bridge tokens: the bridge itself authenticates its callers.
      expect(bearerModeUsable({ mode: 'tokens', host, apiNeedsCredential: false }), host).toBe(true);
    }
    for (const host of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.0.0.2']) {
      expect(bearerModeUsable({ mode: 'bearer', host, apiNeedsCredential: false }), host).toBe(true);
      expect(bearerModeUsable({ mode: 'none', host, apiNeedsCredential: false }), host).toBe(true);
    }
  });

  /** An API client whose every read answers as `answer` says, counting the reads. */
  function fakeApi(answer: () => Promise<unknown>): ApiClient & { reads: number } {
    const api = {
      reads: 0,
      get: async <T>(): Promise<T> => {
        api.reads += 1;
        return (await answer()) as T;
      },
      post: async () => Promise.reject(new Error('unused')),
      put: async () => Promise.reject(new Error('unused')),
      delete: async () => Promise.reject(new Error('unused')),
      url: (path: string) => `http://api.test${path}`,
      close: async () => {},
    };
    return api;
  }

  it('asks the API with a read without a credential: 2xx needs none, 401/403 need one, anything else is unknown', async () => {
    expect(await apiNeedsCredential(fakeApi(async () => ({ items: [] })))).toBe(false);
    expect(await apiNeedsCredential(fakeApi(async () => Promise.reject(new ApiError(401, 'unauthorized', 'no', 'u'))))).toBe(true);
    expect(await apiNeedsCredential(fakeApi(async () => Promise.reject(new ApiError(403, 'forbidden', 'no', 'u'))))).toBe(true);
    expect(await apiNeedsCredential(fakeApi(async () => Promise.reject(new ApiError(500, 'internal', 'no', 'u'))))).toBeNull();
    expect(await apiNeedsCredential(fakeApi(async () => Promise.reject(new ApiUnavailableError('u', 'ECONNREFUSED'))))).toBeNull();
  });

  it('keeps a definite answer for 60 s, shares one probe between concurrent requests and asks again after an unknown one', async () => {
    let clock = 0;
    let open = true;
    const api = fakeApi(async () => (open ? {} : Promise.reject(new ApiError(401, 'unauthorized', 'no', 'u'))));
    const check = createCredentialRequirementCheck(api, { now: () => clock });
    expect(await Promise.all([check(), check(), check()])).toEqual([false, false, false]);
    expect(api.reads).toBe(1);
    open = false;
    clock = 59_999;
    expect(await check()).toBe(false);
    expect(api.reads).toBe(1);
    clock = 60_000;
    expect(await check()).toBe(true);
    expect(api.reads).toBe(2);

    let reachable = false;
    const flaky = fakeApi(async () => (reachable ? {} : Promise.reject(new ApiUnavailableError('u', 'ECONNREFUSED'))));
    const flakyCheck = createCredentialRequirementCheck(flaky, { now: () => 0 });
    expect(await flakyCheck()).toBeNull();
    reachable = true;
    expect(await flakyCheck()).toBe(false);
    expect(flaky.reads).toBe(2);
  });
});
