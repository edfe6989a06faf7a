/**
 * Clients of the MCP bridge for tests and benches: a real SDK `Client` connected to the bridge
 * over an in-memory transport (the bridge's REST calls go to the API at `apiUrl`), over stdio
 * (the `switchyard-mcp` command as a child process) or over Streamable HTTP. Every tool result is
 * checked against the tool's own outputSchema as the server lists it.
 */
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { buildServer, createApiClient, createApiClientPool, parseConfig, selectTools, startHttp, type HttpBridge, type HttpDeps } from '../index.ts';

/** The `switchyard-mcp` command. */
export const BRIDGE_BIN = fileURLToPath(new URL('../../bin/switchyard-mcp.mjs', import.meta.url));

/** A tool call's answer: the envelope, whether MCP flagged an error, the raw text block. */
export interface Envelope<T = any> {
  ok: boolean;
  data?: T;
  error?: { code: string; message: string; details?: Record<string, any> | null; docsUrl?: string | null };
}

export interface BridgeClient {
  client: Client;
  /** Every tool as listed, by name. */
  tools(): Promise<Map<string, any>>;
  /** Calls a tool; asserts the result is a well-formed envelope valid against the tool's outputSchema (throws otherwise). */
  call<T = any>(name: string, args?: Record<string, unknown>): Promise<Envelope<T> & { isError: boolean }>;
  close(): Promise<void>;
}

/** Command-line flags as an argv list, e.g. `['--read-only']`. */
export type BridgeFlags = string[];

const ajv = new Ajv({ strict: false, allErrors: true });

async function connect(transport: Transport, cleanup: () => Promise<void>): Promise<BridgeClient> {
  const client = new Client({ name: 'switchyard-test', version: '1.0.0' });
  await client.connect(transport);
  const validators = new Map<string, ValidateFunction>();
  let listed: Map<string, any> | null = null;
  const tools = async () => {
    if (!listed) {
      const { tools: all } = await client.listTools();
      listed = new Map(all.map((tool) => [tool.name, tool]));
    }
    return listed;
  };
  return {
    client,
    tools,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as { structuredContent?: any; content: Array<{ type: string; text: string }>; isError?: boolean };
      const envelope = result.structuredContent;
      if (!envelope || typeof envelope.ok !== 'boolean') throw new Error(`${name}: no envelope in ${JSON.stringify(result)}`);
      if (result.content.length !== 1 || JSON.stringify(envelope) !== result.content[0]!.text) throw new Error(`${name}: the text block does not echo the envelope`);
      if ((result.isError ?? false) === envelope.ok) throw new Error(`${name}: isError disagrees with ok`);
      const tool = (await tools()).get(name);
      if (tool) {
        let validate = validators.get(name);
        if (!validate) validators.set(name, (validate = ajv.compile(tool.outputSchema)));
        if (!validate(envelope)) throw new Error(`${name}: result does not match its outputSchema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(envelope).slice(0, 2000)}`);
      }
      return { ...envelope, isError: result.isError ?? false };
    },
    async close() {
      await client.close();
      await cleanup();
    },
  };
}

/** The bridge in this process, over an in-memory transport, with `flags` as on its command line. */
export async function bridgeInProcess(apiUrl: string, flags: BridgeFlags = []): Promise<BridgeClient> {
  const config = parseConfig(flags, { SWITCHYARD_API_URL: apiUrl })!;
  const api = createApiClient({ apiUrl: config.apiUrl, apiToken: config.apiToken, timeoutMs: 10_000 });
  const server = buildServer({ api, tools: selectTools(config) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  return connect(clientSide, async () => {
    await server.close();
    await api.close();
  });
}

/** The `switchyard-mcp` command as a child process over stdio. `stderr` collects its log. */
export async function bridgeOverStdio(apiUrl: string, flags: BridgeFlags = []): Promise<BridgeClient & { stderr: () => string }> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE_BIN, ...flags],
    env: { ...(process.env as Record<string, string>), SWITCHYARD_API_URL: apiUrl, LOG_LEVEL: 'info' },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const bridge = await connect(transport, async () => {});
  return { ...bridge, stderr: () => stderr };
}

/** Options of {@link startBridgeHttp} and {@link bridgeOverHttp}. */
export interface HttpBridgeOptions {
  /** Environment the bridge's configuration reads besides SWITCHYARD_API_URL (e.g. SWITCHYARD_BRIDGE_TOKENS). */
  env?: Record<string, string>;
  /** The bridge's logger (default: none). */
  logger?: HttpDeps['logger'];
}

/**
 * The bridge serving Streamable HTTP on a free port of 127.0.0.1 (`--http 0` plus `flags`), as
 * `switchyard-mcp --http` would; `close()` also closes its REST pool. No client.
 */
export async function startBridgeHttp(apiUrl: string, flags: BridgeFlags = [], options: HttpBridgeOptions = {}): Promise<HttpBridge> {
  const config = parseConfig(['--http', '0', ...flags], { SWITCHYARD_API_URL: apiUrl, ...options.env })!;
  const apis = createApiClientPool({ apiUrl: config.apiUrl, timeoutMs: 10_000 });
  const http = await startHttp({ apis, apiToken: config.apiToken, tools: selectTools(config), logger: options.logger }, config.http!);
  return {
    ...http,
    async close() {
      await http.close();
      await apis.close();
    },
  };
}

/**
 * The bridge serving Streamable HTTP on a free port, and a client connected to it that sends
 * `Authorization: Bearer <token>` with every request (none when `token` is null).
 */
export async function bridgeOverHttp(apiUrl: string, token: string | null, flags: BridgeFlags = [], options: HttpBridgeOptions = {}): Promise<BridgeClient & { url: string }> {
  const http = await startBridgeHttp(apiUrl, flags, options);
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  try {
    const bridge = await connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers } }), () => http.close());
    return { ...bridge, url: http.url };
  } catch (error) {
    await http.close();
    throw error;
  }
}
