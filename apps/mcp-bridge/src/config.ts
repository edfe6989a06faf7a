/**
 * The bridge's configuration from its command line and environment (issue #8 "Process"):
 * `--api-url` / `SWITCHYARD_API_URL`, `--api-token` / `SWITCHYARD_API_TOKEN`, `--allowed-tools`,
 * `--read-only`, `--surface`, `--http PORT` and `--host`, and for the HTTP mode its caller
 * authentication and Host/Origin allow-lists (see {@link HttpConfig}). Unknown flags and bad values
 * are start-up errors ({@link ConfigError}) with a message naming the flag; so is an HTTP mode
 * reachable beyond loopback without authentication.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';

/** The two tool surfaces: `semantic` (camelCase tools, default) and `orchestrator` (the four spec tools). */
export const SURFACES = ['semantic', 'orchestrator'] as const;
export type Surface = (typeof SURFACES)[number];

export interface BridgeConfig {
  /** Base URL of the Switchyard REST API, without a trailing slash. */
  apiUrl: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  apiToken: string | null;
  /** Only these tools are exposed (null: all of the surface; []: none). */
  allowedTools: string[] | null;
  /** Only tools annotated read-only are exposed. */
  readOnly: boolean;
  surface: Surface;
  /** Serve Streamable HTTP at `/mcp` instead of stdio (null: stdio). */
  http: HttpConfig | null;
  /** Timeout of one REST call, ms. */
  requestTimeoutMs: number;
}

/**
 * How the HTTP mode authenticates its callers:
 * - `bearer` (default): the caller's `Authorization: Bearer <token>` is required and passed through
 *   to the API as the caller's own credential for every REST call made while serving its request;
 *   the bridge's `--api-token` is not used. The API judges the token (scopes, identity).
 * - `tokens`: the caller presents one of the bridge tokens (`SWITCHYARD_BRIDGE_TOKENS` /
 *   `--bridge-tokens-file`) as its bearer and is served with the bridge's own `--api-token`.
 * - `none`: no caller credential, everyone is served with `--api-token`; loopback hosts only.
 */
export const HTTP_AUTH_MODES = ['bearer', 'tokens', 'none'] as const;
export type HttpAuthMode = (typeof HTTP_AUTH_MODES)[number];

/** Shortest bridge token accepted, characters. */
export const MIN_BRIDGE_TOKEN_LENGTH = 16;

/** The Streamable HTTP mode's listen address and caller checks. */
export interface HttpConfig {
  /** TCP port (0: any free port). */
  port: number;
  /** Listen address (default 127.0.0.1). */
  host: string;
  /** See {@link HTTP_AUTH_MODES}. */
  auth: HttpAuthMode;
  /** The accepted bridge tokens in `tokens` mode (each at least {@link MIN_BRIDGE_TOKEN_LENGTH} characters); [] otherwise. */
  bridgeTokens: string[];
  /**
   * Accepted `Host` header values, lower case, `host[:port]` (IPv6 in brackets); `host` and
   * `host:80` are the same (http-guard.ts `hostKey`). null: the defaults, computed once the port is
   * known (http.ts `defaultAllowedHosts`).
   */
  allowedHosts: string[] | null;
  /**
   * Accepted `Origin` header values, lower case, `scheme://host[:port]`. null: `http://` and
   * `https://` of every allowed host. A request without an Origin is not checked.
   */
  allowedOrigins: string[] | null;
  /** The origin callers reach the bridge at (e.g. behind a TLS proxy), for the protected-resource metadata; null: `http://<Host>`. */
  publicUrl: string | null;
  /** OAuth authorization servers named in the protected-resource metadata (bearer mode). */
  authorizationServers: string[];
}

/** A start-up error: the message says which flag or variable is wrong. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const USAGE = `switchyard-mcp: MCP server for the Switchyard workflow API

  --api-url URL          REST API base URL (env SWITCHYARD_API_URL; default http://127.0.0.1:8080)
  --api-token TOKEN      bearer token for the API (env SWITCHYARD_API_TOKEN)
  --surface NAME         semantic (default) | orchestrator
  --allowed-tools a,b    expose only these tools (an empty list exposes none)
  --read-only            expose only read-only tools
  --http PORT            serve Streamable HTTP at /mcp instead of stdio
  --host HOST            listen address for --http (default 127.0.0.1)
  --help                 this text

Streamable HTTP (--http) callers must authenticate:
  --http-auth MODE       (env SWITCHYARD_BRIDGE_HTTP_AUTH)
                           bearer  (default) each caller sends Authorization: Bearer <its own API key
                                   or JWT>; the bridge checks it with one API read, then passes it
                                   to the API for that request only, so the API's scopes and
                                   identities apply; --api-token is unused. Beyond loopback, 503
                                   to all while the API needs no credential (SWITCHYARD_AUTH=none)
                           tokens  each caller sends Authorization: Bearer <a bridge token>; callers
                                   are served with the bridge's own --api-token (default when
                                   bridge tokens are configured)
                           none    no caller credential, everyone gets --api-token; only with a
                                   loopback --host (localhost, 127.x, ::1): refused otherwise
  SWITCHYARD_BRIDGE_TOKENS=a,b   bridge tokens for --http-auth tokens (each >= ${MIN_BRIDGE_TOKEN_LENGTH} chars)
  --bridge-tokens-file PATH      same, one token per line, # comments (env SWITCHYARD_BRIDGE_TOKENS_FILE)
  --allowed-hosts h:p,...        accepted Host headers (env SWITCHYARD_BRIDGE_ALLOWED_HOSTS); default
                                 HOST:PORT, plus localhost, 127.0.0.1 and [::1] with PORT on loopback;
                                 required when --host is 0.0.0.0 or ::; a name without port is
                                 name:80 (as browsers send it)
  --allowed-origins o,...        accepted Origin headers, e.g. https://app.example.com (env
                                 SWITCHYARD_BRIDGE_ALLOWED_ORIGINS); default http(s):// of each
                                 allowed host. Requests without Origin (non-browser agents) pass.
  --public-url URL               origin callers use, e.g. https://mcp.example.com behind a TLS proxy
                                 (env SWITCHYARD_BRIDGE_PUBLIC_URL; for the OAuth resource metadata)
  --authorization-servers u,...  OAuth issuers listed in /.well-known/oauth-protected-resource/mcp
                                 (env SWITCHYARD_BRIDGE_AUTHORIZATION_SERVERS; bearer mode)
  A missing or wrong credential gets HTTP 401 with WWW-Authenticate; a foreign Host or Origin 403.
`;

/**
 * Parses `argv` (without node and script) and `env`; returns null for `--help`. Throws ConfigError
 * for an unknown flag or a bad value, and for an HTTP mode that would be unsafe: `--http-auth none`
 * beyond loopback, every interface without `--allowed-hosts`, missing or weak bridge tokens.
 */
export function parseConfig(argv: readonly string[], env: Record<string, string | undefined>): BridgeConfig | null {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        'api-url': { type: 'string' },
        'api-token': { type: 'string' },
        surface: { type: 'string' },
        'allowed-tools': { type: 'string' },
        'read-only': { type: 'boolean' },
        http: { type: 'string' },
        host: { type: 'string' },
        'http-auth': { type: 'string' },
        'bridge-tokens-file': { type: 'string' },
        'allowed-hosts': { type: 'string' },
        'allowed-origins': { type: 'string' },
        'public-url': { type: 'string' },
        'authorization-servers': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (values.help) return null;
  const apiUrl = (values['api-url'] ?? env['SWITCHYARD_API_URL'] ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  try {
    const url = new URL(apiUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(`--api-url / SWITCHYARD_API_URL: '${apiUrl}' is not an http(s) URL`);
  }
  const surface = values.surface ?? 'semantic';
  if (!(SURFACES as readonly string[]).includes(surface)) throw new ConfigError(`--surface: '${surface}' is not one of ${SURFACES.join(', ')}`);
  let http: BridgeConfig['http'] = null;
  if (values.http !== undefined) {
    const port = Number(values.http);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--http: '${values.http}' is not a port number`);
    http = httpConfig(port, values, env);
  } else {
    const httpOnly = ['host', 'http-auth', 'bridge-tokens-file', 'allowed-hosts', 'allowed-origins', 'public-url', 'authorization-servers'] as const;
    const given = httpOnly.find((flag) => values[flag] !== undefined);
    if (given) throw new ConfigError(`--${given} needs --http PORT`);
  }
  const allowed = values['allowed-tools'];
  return {
    apiUrl,
    apiToken: values['api-token'] ?? env['SWITCHYARD_API_TOKEN'] ?? null,
    allowedTools: allowed === undefined ? null : allowed.split(',').map((name) => name.trim()).filter(Boolean),
    readOnly: values['read-only'] === true,
    surface: surface as Surface,
    http,
    requestTimeoutMs: 30_000,
  };
}

/** The HTTP flags (see {@link parseArgs} options above) as parsed. */
type HttpFlags = Partial<Record<'host' | 'http-auth' | 'bridge-tokens-file' | 'allowed-hosts' | 'allowed-origins' | 'public-url' | 'authorization-servers', string>>;

/** The HTTP mode's settings; throws ConfigError naming the flag or variable, or the refusal rule. */
function httpConfig(port: number, flags: HttpFlags, env: Record<string, string | undefined>): HttpConfig {
  const host = flags.host ?? '127.0.0.1';
  const tokensFile = flags['bridge-tokens-file'] ?? nonEmpty(env['SWITCHYARD_BRIDGE_TOKENS_FILE']);
  const tokensVar = nonEmpty(env['SWITCHYARD_BRIDGE_TOKENS']);
  if (tokensFile !== undefined && tokensVar !== undefined) throw new ConfigError('set either SWITCHYARD_BRIDGE_TOKENS or --bridge-tokens-file / SWITCHYARD_BRIDGE_TOKENS_FILE, not both');
  const tokens = tokensFile !== undefined ? readTokensFile(tokensFile) : tokensVar !== undefined ? list(tokensVar) : null;
  const source = tokensFile !== undefined ? `bridge tokens file '${tokensFile}'` : 'SWITCHYARD_BRIDGE_TOKENS';

  const rawMode = (flags['http-auth'] ?? nonEmpty(env['SWITCHYARD_BRIDGE_HTTP_AUTH']))?.trim().toLowerCase();
  if (rawMode !== undefined && !(HTTP_AUTH_MODES as readonly string[]).includes(rawMode)) {
    throw new ConfigError(`--http-auth / SWITCHYARD_BRIDGE_HTTP_AUTH: '${rawMode}' is not one of ${HTTP_AUTH_MODES.join(', ')}`);
  }
  const auth: HttpAuthMode = (rawMode as HttpAuthMode | undefined) ?? (tokens !== null ? 'tokens' : 'bearer');
  if (auth === 'tokens') {
    if (tokens === null || tokens.length === 0) throw new ConfigError(`--http-auth tokens needs bridge tokens: set SWITCHYARD_BRIDGE_TOKENS=<token>,... or --bridge-tokens-file PATH`);
    const short = tokens.findIndex((token) => token.length < MIN_BRIDGE_TOKEN_LENGTH);
    if (short !== -1) throw new ConfigError(`${source}: token #${short + 1} is shorter than ${MIN_BRIDGE_TOKEN_LENGTH} characters (use e.g. openssl rand -base64 32)`);
    const bad = tokens.findIndex((token) => !/^[\x21-\x7e]+$/.test(token) || token.includes(','));
    if (bad !== -1) throw new ConfigError(`${source}: token #${bad + 1} has a character other than printable ASCII (no spaces or commas)`);
  } else if (tokens !== null) {
    throw new ConfigError(`${source} is set but --http-auth is ${auth}: bridge tokens are only used with --http-auth tokens`);
  }
  if (auth === 'none' && !isLoopback(host)) {
    throw new ConfigError(
      `--host ${host} exposes the bridge beyond this machine, but --http-auth is none (every caller would act with the bridge's --api-token): ` +
        'use --http-auth bearer (the default: each caller sends its own API key or JWT as Authorization: Bearer), ' +
        '--http-auth tokens with SWITCHYARD_BRIDGE_TOKENS, or bind --host 127.0.0.1',
    );
  }

  const hostsRaw = flags['allowed-hosts'] ?? nonEmpty(env['SWITCHYARD_BRIDGE_ALLOWED_HOSTS']);
  const allowedHosts = hostsRaw === undefined ? null : list(hostsRaw).map((entry) => hostEntry(entry));
  if (allowedHosts !== null && allowedHosts.length === 0) throw new ConfigError('--allowed-hosts / SWITCHYARD_BRIDGE_ALLOWED_HOSTS is empty: it would refuse every request');
  if (allowedHosts === null && isUnspecified(host)) {
    throw new ConfigError(`--host ${host} listens on every interface, so the bridge cannot tell which Host names are its own: set --allowed-hosts / SWITCHYARD_BRIDGE_ALLOWED_HOSTS (e.g. mcp.example.com,localhost:${port || 8090})`);
  }
  const originsRaw = flags['allowed-origins'] ?? nonEmpty(env['SWITCHYARD_BRIDGE_ALLOWED_ORIGINS']);
  const allowedOrigins = originsRaw === undefined ? null : list(originsRaw).map((entry) => originEntry(entry, '--allowed-origins / SWITCHYARD_BRIDGE_ALLOWED_ORIGINS'));
  const publicRaw = flags['public-url'] ?? nonEmpty(env['SWITCHYARD_BRIDGE_PUBLIC_URL']);
  const publicUrl = publicRaw === undefined ? null : originEntry(publicRaw.replace(/\/+$/, ''), '--public-url / SWITCHYARD_BRIDGE_PUBLIC_URL');
  const serversRaw = flags['authorization-servers'] ?? nonEmpty(env['SWITCHYARD_BRIDGE_AUTHORIZATION_SERVERS']);
  const authorizationServers = serversRaw === undefined ? [] : list(serversRaw).map((entry) => httpUrl(entry, '--authorization-servers / SWITCHYARD_BRIDGE_AUTHORIZATION_SERVERS'));
  return { port, host, auth, bridgeTokens: auth === 'tokens' ? tokens! : [], allowedHosts, allowedOrigins, publicUrl, authorizationServers };
}

/** `localhost`, `127.0.0.0/8`, `::1` (also IPv4-mapped), as the API's `isLoopback`. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.');
  return false;
}

/** `0.0.0.0` or `::` (every interface). */
function isUnspecified(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === '0.0.0.0' || bare === '::' || bare === '';
}

/** A Host allow-list entry, lower case; throws ConfigError when it is not `host[:port]`. */
function hostEntry(entry: string): string {
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    throw new ConfigError(`--allowed-hosts / SWITCHYARD_BRIDGE_ALLOWED_HOSTS: '${entry}' is not host[:port]`);
  }
  const normal = entry.toLowerCase();
  if (url.host !== normal && `${url.host}:80` !== normal) throw new ConfigError(`--allowed-hosts / SWITCHYARD_BRIDGE_ALLOWED_HOSTS: '${entry}' is not host[:port]`);
  return normal;
}

/** An origin `scheme://host[:port]`, lower case; throws ConfigError naming `what`. */
function originEntry(entry: string, what: string): string {
  const url = httpUrl(entry, what);
  if (url !== `${new URL(url).origin}/` && url !== new URL(url).origin) throw new ConfigError(`${what}: '${entry}' is not an origin (scheme://host[:port], no path)`);
  return new URL(url).origin;
}

/** An absolute http(s) URL as given (trimmed); throws ConfigError naming `what`. */
function httpUrl(entry: string, what: string): string {
  try {
    const url = new URL(entry);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {
    // falls through
  }
  throw new ConfigError(`${what}: '${entry}' is not an http(s) URL`);
}

/** Bridge tokens from a file: one a line, blank lines and `#` comments skipped. Throws ConfigError when unreadable. */
function readTokensFile(path: string): string[] {
  try {
    return readFileSync(path, 'utf8')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
  } catch (error) {
    throw new ConfigError(`--bridge-tokens-file / SWITCHYARD_BRIDGE_TOKENS_FILE '${path}' cannot be read: ${(error as Error).message}`);
  }
}

function list(value: string): string[] {
  return value.split(',').map((item) => item.trim()).filter(Boolean);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
