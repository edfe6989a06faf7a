/**
 * `ExecutorRegistry.describe()`, the executor catalogue (issue 9 item 6): each kind describes its
 * entries; MCP tool lists come through the pool, are cached per connection and listed again after
 * `notifications/tools/list_changed`; unreachable servers give `available: false`, never a rejection.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { describeHttpEntry } from './http/http.ts';
import { describeMcpEntry } from './mcp/mcp.ts';
import { McpConnectionPool } from './mcp/mcp-pool.ts';
import { silentLogger } from './shared/logger.ts';
import { RegistryConfigError } from './registry-config.ts';
import { createExecutorRegistry } from './registry.ts';
import type { ExecutorCall, ExecutorRegistry } from './types.ts';

/** packages/runner: where `-e` scripts resolve `@modelcontextprotocol/sdk`. */
const RUNNER_DIR = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A stdio MCP server with tool `grow`; calling `grow` adds tool `late` and sends
 * `notifications/tools/list_changed`. Counts its `tools/list` requests in tool `grow`'s answer.
 */
const GROWING_SERVER = `
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
const tools = [{ name: 'grow', description: 'Adds tool late', inputSchema: { type: 'object', properties: {} } }];
let lists = 0;
const server = new Server({ name: 'growing', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, async () => { lists++; return { tools }; });
server.setRequestHandler(CallToolRequestSchema, async () => {
  if (!tools.some((tool) => tool.name === 'late')) tools.push({ name: 'late', description: 'Added later', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } });
  await server.sendToolListChanged();
  return { content: [{ type: 'text', text: 'grown' }], structuredContent: { lists } };
});
await server.connect(new StdioServerTransport());
`;

/**
 * Never answers the MCP handshake; exits after 2 s (so the connect still under way fails then, and
 * the pool can close: it waits for connects in progress).
 */
const SILENT_SERVER = 'process.stdin.resume(); setTimeout(() => process.exit(0), 2000);';

function call(): ExecutorCall {
  return { arguments: {}, input: null, attempt: 1, signal: new AbortController().signal, context: { runId: 'r', nodeId: 'n', nodeName: 'step' } };
}

let registry: ExecutorRegistry | undefined;
afterEach(async () => {
  await registry?.close();
  registry = undefined;
});

describe('ExecutorRegistry.describe', () => {
  it('describes builtins and http entries without connecting, sorted, filtered by kind', async () => {
    registry = createExecutorRegistry(
      {
        executors: {
          ping: { kind: 'builtin', name: 'echo', description: 'Answers with its input' },
          hook: { kind: 'http', url: 'https://user:pw-secret-1@${HOOK_HOST}/path/secret-2?token=secret-3', method: 'PUT' },
        },
      },
      { baseDir: RUNNER_DIR, env: { HOOK_HOST: 'hooks.example.com:8443' } },
    );
    const all = await registry.describe();
    expect(all.map((entry) => entry.key)).toEqual(['builtin.echo', 'builtin.fail', 'builtin.sleep', 'hook', 'ping']);
    expect(all.find((entry) => entry.key === 'ping')).toEqual({ key: 'ping', kind: 'builtin', description: 'Answers with its input', available: true, builtin: 'echo' });
    expect(all.find((entry) => entry.key === 'builtin.fail')).toMatchObject({ kind: 'builtin', builtin: 'fail', available: true, description: expect.stringContaining('fail') });
    // The host came from a variable: a substituted value is a secret, so even the origin hides it.
    const hook = all.find((entry) => entry.key === 'hook');
    expect(hook).toEqual({ key: 'hook', kind: 'http', description: 'Webhook: HTTP PUT to https://[REDACTED]', available: true, method: 'PUT', origin: 'https://[REDACTED]' });
    expect(JSON.stringify(all)).not.toMatch(/secret|pw-|user|path/);
    expect((await registry.describe({ kind: 'http' })).map((entry) => entry.key)).toEqual(['hook']);
    expect(await registry.describe({ kind: 'a2a' })).toEqual([]);
  });

  it('shows the origin of a literal URL, never its path, query or credentials', () => {
    const described = describeHttpEntry({ url: new URL('https://u:p@example.com/a/b?token=t'), method: 'POST', headers: {}, secrets: ['p', 't'] });
    expect(described).toEqual({ description: 'Webhook: HTTP POST to https://example.com', available: true, method: 'POST', origin: 'https://example.com' });
  });

  it('accepts a description on every kind of entry, and nothing but a string', () => {
    expect(() => createExecutorRegistry({ executors: { x: { kind: 'builtin', name: 'echo', description: 42 } } } as never, { baseDir: RUNNER_DIR, env: {} })).toThrow(RegistryConfigError);
    registry = createExecutorRegistry(
      { mcpServers: { s: { command: 'node' } }, executors: { m: { kind: 'mcp', server: 's', tool: 't', description: 'mine' }, h: { kind: 'http', url: 'http://127.0.0.1:1/x', description: 'hook' } } } as never,
      { baseDir: RUNNER_DIR, env: {} },
    );
    expect(registry.keys()).toContain('m');
  });

  it('lists MCP tools once per connection, again after notifications/tools/list_changed', async () => {
    registry = createExecutorRegistry(
      {
        mcpServers: { growing: { command: process.execPath, args: ['--input-type=module', '-e', GROWING_SERVER] } },
        executors: { grow: { kind: 'mcp', server: 'growing', tool: 'grow' }, late: { kind: 'mcp', server: 'growing', tool: 'late', description: 'Own words' } },
      },
      { baseDir: RUNNER_DIR, env: process.env },
    );
    const first = await registry.describe({ kind: 'mcp' });
    expect(first).toEqual([
      { key: 'grow', kind: 'mcp', server: 'growing', description: 'Adds tool late', available: true, tool: { name: 'grow', description: 'Adds tool late', inputSchema: { type: 'object', properties: {} } } },
      { key: 'late', kind: 'mcp', server: 'growing', description: 'Own words', available: false, error: 'MCP server "growing" has no tool "late" (available: grow)', tool: { name: 'late' } },
    ]);
    await registry.describe();
    // One tools/list so far (cached): the call's answer counts them. It also adds `late` and announces the change.
    await expect(registry.get('grow').invoke(call())).resolves.toEqual({ lists: 1 });
    await expect.poll(async () => (await registry!.describe({ kind: 'mcp' }))[1]?.available, { timeout: 5_000 }).toBe(true);
    const late = (await registry.describe({ kind: 'mcp' }))[1];
    expect(late).toMatchObject({ key: 'late', description: 'Own words', available: true, tool: { name: 'late', description: 'Added later', inputSchema: { properties: { n: { type: 'number' } } } } });
  });

  it('gives a server that does not answer in time available: false, and does not reject', async () => {
    const pool = new McpConnectionPool(
      new Map([['silent', { transport: 'stdio', command: process.execPath, args: ['-e', SILENT_SERVER], env: {}, cwd: RUNNER_DIR, secrets: [] } as never]]),
      silentLogger,
    );
    try {
      const started = Date.now();
      const described = await describeMcpEntry({ server: 'silent', tool: 't' }, pool, 300);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(described).toEqual({ server: 'silent', description: 'MCP tool t of server silent', available: false, error: 'MCP server "silent" did not list its tools within 0.3 s', tool: { name: 't' } });
    } finally {
      await pool.close();
    }
  });
});
