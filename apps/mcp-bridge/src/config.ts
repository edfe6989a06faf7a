/**
 * The bridge's configuration from its command line and environment (issue #8 "Process"):
 * `--api-url` / `SWITCHYARD_API_URL`, `--api-token` / `SWITCHYARD_API_TOKEN`, `--allowed-tools`,
 * `--read-only`, `--surface`, `--http PORT` and `--host`. Unknown flags and bad values are start-up
 * errors ({@link ConfigError}) with a message naming the flag.
 */
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
  /** Serve Streamable HTTP at `/mcp` on this port instead of stdio. */
  http: { port: number; host: string } | null;
  /** Timeout of one REST call, ms. */
  requestTimeoutMs: number;
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
`;

/** Parses `argv` (without node and script) and `env`. Throws ConfigError; returns null for `--help`. */
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
    http = { port, host: values.host ?? '127.0.0.1' };
  } else if (values.host !== undefined) {
    throw new ConfigError('--host needs --http PORT');
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
