/**
 * The HTTP mode's start-up rules (authentication modes, bridge tokens, Host/Origin lists, the
 * refusal of an unauthenticated bridge beyond loopback) and its per-request decisions (which
 * credential a request is served with, which Host and Origin pass), without a network.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, checkHostAndOrigin, challengeOf, createHttpAuthenticator, defaultAllowedHosts, defaultAllowedOrigins, parseConfig } from '@switchyard/mcp-bridge';

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
});
