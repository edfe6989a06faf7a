import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RegistryConfigError, resolveRegistryConfig } from './registry-config.ts';
import type { ResolveContext, ResolvedRegistryConfig } from './registry-config.ts';
import type { McpServerTarget } from './mcp/mcp-servers.ts';

const context: ResolveContext = {
  baseDir: '/srv/switchyard/config',
  env: { PATH: '/usr/bin', TOKEN: 's3cret', DATA_DIR: '/var/lib/switchyard' },
  source: 'test.json',
};

/** The resolved `mcpServers`: the connection section of the `mcp` kind. */
function serversOf(resolved: ResolvedRegistryConfig): ReadonlyMap<string, McpServerTarget> {
  return resolved.connections.get('mcp') as ReadonlyMap<string, McpServerTarget>;
}

function problemsOf(raw: unknown, ctx: ResolveContext = context): readonly string[] {
  try {
    resolveRegistryConfig(raw, ctx);
  } catch (error) {
    expect(error).toBeInstanceOf(RegistryConfigError);
    return (error as RegistryConfigError).problems;
  }
  throw new Error('expected the registry to be rejected');
}

describe('resolveRegistryConfig', () => {
  it('always holds the built-ins, also for an empty registry', () => {
    const resolved = resolveRegistryConfig({}, context);
    expect(serversOf(resolved).size).toBe(0);
    expect(Object.fromEntries(resolved.executors)).toEqual({
      'builtin.echo': { kind: 'builtin', name: 'echo', timeoutMs: 60_000 },
      'builtin.fail': { kind: 'builtin', name: 'fail', timeoutMs: 60_000 },
      'builtin.sleep': { kind: 'builtin', name: 'sleep', timeoutMs: 60_000 },
    });
  });

  it('resolves stdio servers: variables, node, cwd, inherited env', () => {
    const resolved = resolveRegistryConfig(
      {
        mcpServers: {
          local: { command: 'node', args: ['${REGISTRY_DIR}/server.js', '${DATA_DIR}/files', '${PORT:-8080}'], env: { API_TOKEN: '${TOKEN}' } },
          tool: { command: '/opt/bin/tool', cwd: '../work' },
        },
      },
      context,
    );
    expect(serversOf(resolved).get('local')).toEqual({
      transport: 'stdio',
      command: process.execPath,
      args: ['/srv/switchyard/config/server.js', '/var/lib/switchyard/files', '8080'],
      env: { PATH: '/usr/bin', TOKEN: 's3cret', DATA_DIR: '/var/lib/switchyard', API_TOKEN: 's3cret' },
      cwd: '/srv/switchyard/config',
      // Not the built-in paths, the default 8080, or the inherited environment.
      secrets: ['s3cret'],
    });
    expect(serversOf(resolved).get('tool')).toMatchObject({ command: '/opt/bin/tool', args: [], cwd: '/srv/switchyard/work' });
  });

  it('defaults DATA_DIR to ./data under the working directory', () => {
    const resolved = resolveRegistryConfig({ mcpServers: { fs: { command: 'fs', args: ['${DATA_DIR}'] } } }, { ...context, env: {} });
    expect(serversOf(resolved).get('fs')).toMatchObject({ args: [path.resolve('data')], env: {} });
  });

  it('resolves Streamable HTTP servers with expanded headers', () => {
    const resolved = resolveRegistryConfig(
      { mcpServers: { remote: { url: 'http://${HOST:-127.0.0.1}:9000/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } } } },
      context,
    );
    expect(serversOf(resolved).get('remote')).toEqual({
      transport: 'http',
      url: new URL('http://127.0.0.1:9000/mcp'),
      headers: { Authorization: 'Bearer s3cret' },
      secrets: ['s3cret', 'Bearer s3cret'],
    });
  });

  it('collects the secrets of a server: substituted values, header values, URL credentials and query values (not literal env values)', () => {
    const resolved = resolveRegistryConfig(
      {
        mcpServers: {
          remote: {
            url: 'https://${USER_NAME}:p%40ss@mcp.example.org/${TOKEN}/mcp?key=literal-key&empty=',
            headers: { 'X-Api-Key': 'k-literal', Authorization: 'Basic  dXNlcjpwdw==' },
          },
          local: { command: '${DATA_DIR}/bin/server', args: ['--token=${TOKEN}', '--dir=${REGISTRY_DIR}'], env: { MODE: 'literal-mode' } },
        },
      },
      { ...context, env: { ...context.env, USER_NAME: 'svc-user' } },
    );
    expect(new Set(serversOf(resolved).get('remote')?.secrets)).toEqual(
      new Set(['svc-user', 's3cret', 'k-literal', 'Basic  dXNlcjpwdw==', 'dXNlcjpwdw==', 'p%40ss', 'p@ss', 'literal-key']),
    );
    expect(serversOf(resolved).get('local')?.secrets).toEqual(['s3cret']);
  });

  it('does not quote an expanded URL in its problem (it may hold a secret)', () => {
    expect(problemsOf({ mcpServers: { bad: { url: 'ftp://${TOKEN}@h/mcp' } } })).toEqual([
      '$.mcpServers.bad.url: must be an http: or https: URL, got string "ftp://${TOKEN}@h/mcp"',
    ]);
    // Also when only the expansion shows it is no http URL.
    expect(problemsOf({ executors: { hook: { kind: 'http', url: '${TOKEN}' } } })).toEqual([
      '$.executors.hook.url: must be an http: or https: URL, got "${TOKEN}" (after expansion)',
    ]);
  });

  it('resolves executors, filling in the default call limit', () => {
    const resolved = resolveRegistryConfig(
      {
        mcpServers: { everything: { command: 'node' } },
        executors: {
          add: { kind: 'mcp', server: 'everything', tool: 'get-sum' },
          slow: { kind: 'mcp', server: 'everything', tool: 'trigger-long-running-operation', timeoutMs: 5_000 },
          echo: { kind: 'builtin', name: 'echo' },
        },
      },
      context,
    );
    expect(resolved.executors.get('add')).toEqual({ kind: 'mcp', server: 'everything', tool: 'get-sum', timeoutMs: 60_000 });
    expect(resolved.executors.get('slow')).toMatchObject({ timeoutMs: 5_000 });
    expect(resolved.executors.get('echo')).toEqual({ kind: 'builtin', name: 'echo', timeoutMs: 60_000 });
  });

  it('takes timeoutSeconds on an entry of any kind (and the older timeoutMs on mcp entries, not both)', () => {
    const config = {
      mcpServers: { everything: { command: 'node' } },
      executors: {
        tool: { kind: 'mcp', server: 'everything', tool: 'echo', timeoutSeconds: 2.5 },
        echo: { kind: 'builtin', name: 'echo', timeoutSeconds: 1 },
        hook: { kind: 'http', url: 'http://127.0.0.1:9/hook', timeoutSeconds: 86_400 },
      },
    };
    const resolved = resolveRegistryConfig(config, context);
    expect([...resolved.executors].filter(([key]) => !key.startsWith('builtin.')).map(([key, entry]) => [key, entry.timeoutMs])).toEqual([
      ['tool', 2_500],
      ['echo', 1_000],
      ['hook', 86_400_000],
    ]);
    expect(
      problemsOf({
        ...config,
        executors: {
          both: { kind: 'mcp', server: 'everything', tool: 'echo', timeoutSeconds: 5, timeoutMs: 5_000 },
          zero: { kind: 'builtin', name: 'echo', timeoutSeconds: 0 },
          long: { kind: 'http', url: 'http://h/', timeoutSeconds: 86_401 },
          text: { kind: 'http', url: 'http://h/', timeoutSeconds: '5' },
        },
      }),
    ).toEqual([
      '$.executors.both.timeoutMs: set either timeoutSeconds or timeoutMs (milliseconds, the older spelling), not both',
      '$.executors.zero.timeoutSeconds: must be a number of seconds in 1..86400, got number 0',
      '$.executors.long.timeoutSeconds: must be a number of seconds in 1..86400, got number 86401',
      '$.executors.text.timeoutSeconds: must be a number of seconds in 1..86400, got string "5"',
    ]);
  });

  it('resolves http executors: method POST by default, URL and headers expanded, their secrets collected', () => {
    const resolved = resolveRegistryConfig(
      {
        executors: {
          hook: {
            kind: 'http',
            url: 'https://hooks.example.org/${TOKEN}/in?sig=literal-sig',
            headers: { Authorization: 'Bearer ${TOKEN}', 'X-Team': 'billing' },
          },
          put: { kind: 'http', url: 'http://127.0.0.1:8080/items', method: 'PUT' },
        },
      },
      context,
    );
    expect(resolved.executors.get('hook')).toEqual({
      kind: 'http',
      url: new URL('https://hooks.example.org/s3cret/in?sig=literal-sig'),
      method: 'POST',
      headers: { Authorization: 'Bearer s3cret', 'X-Team': 'billing' },
      secrets: expect.any(Array),
      timeoutMs: 60_000,
      // Downstream tokens of this entry: aud its URL's origin, no scopes (token-binding.ts).
      token: { audience: 'https://hooks.example.org', scopes: [] },
    });
    // Every header value counts, literal ones too (as for MCP servers): headers are where credentials go.
    expect(new Set(resolved.executors.get('hook')!['secrets'] as string[])).toEqual(new Set(['s3cret', 'Bearer s3cret', 'billing', 'literal-sig']));
    expect(resolved.executors.get('put')).toMatchObject({ method: 'PUT', headers: {}, secrets: [] });
  });

  it('expands ${env:NAME} from the environment as a secret, wherever ${VAR} works, and names the field of a missing one', () => {
    const resolved = resolveRegistryConfig(
      {
        mcpServers: {
          local: { command: 'node', args: ['--token=${env:TOKEN}', '${DATA_DIR}/x', '${env:DATA_DIR}'], env: { API_KEY: '${env:TOKEN}' } },
          remote: { url: 'https://mcp.example.org/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' } },
        },
        executors: { hook: { kind: 'http', url: 'https://hooks.example.org/in', headers: { authorization: 'Bearer ${env:TOKEN}' } } },
      },
      context,
    );
    const local = serversOf(resolved).get('local')!;
    expect(local).toMatchObject({ args: ['--token=s3cret', '/var/lib/switchyard/x', '/var/lib/switchyard'], env: { API_KEY: 's3cret' } });
    // `${DATA_DIR}` is a built-in path, not a secret; `${env:DATA_DIR}` is an environment variable, so it is.
    expect(new Set(local.secrets)).toEqual(new Set(['s3cret', '/var/lib/switchyard']));
    expect(new Set(serversOf(resolved).get('remote')!.secrets)).toEqual(new Set(['s3cret', 'Bearer s3cret']));
    expect(resolved.executors.get('hook')).toMatchObject({ headers: { authorization: 'Bearer s3cret' } });
    expect(new Set(resolved.executors.get('hook')!['secrets'] as string[])).toEqual(new Set(['s3cret', 'Bearer s3cret']));
    // `${env:REGISTRY_DIR}` is the environment variable, which is unset: built-ins are not in `env:`.
    expect(problemsOf({
      mcpServers: { local: { command: 'node', env: { API_KEY: '${env:NO_SUCH_TOKEN}' }, cwd: '${env:REGISTRY_DIR}' } },
      executors: { hook: { kind: 'http', url: 'https://hooks.example.org/in', headers: { authorization: 'Bearer ${env:NO_SUCH_TOKEN}' } } },
    })).toEqual([
      '$.mcpServers.local.env.API_KEY: environment variable NO_SUCH_TOKEN is not set (write ${env:NO_SUCH_TOKEN:-default} to allow a default)',
      '$.mcpServers.local.cwd: environment variable REGISTRY_DIR is not set (write ${env:REGISTRY_DIR:-default} to allow a default)',
      '$.executors.hook.headers.authorization: environment variable NO_SUCH_TOKEN is not set (write ${env:NO_SUCH_TOKEN:-default} to allow a default)',
    ]);
  });

  it('rejects http entries with a bad method, header names or values, or unknown fields', () => {
    expect(
      problemsOf({
        executors: {
          get: { kind: 'http', url: 'http://h/', method: 'GET' },
          names: { kind: 'http', url: 'http://h/', headers: { 'Content-Length': '3', 'bad name': 'x', Authorization: 'Bearer ${NO_SUCH_TOKEN}' } },
          noUrl: { kind: 'http', body: {} },
        },
      }),
    ).toEqual([
      '$.executors.get.method: must be one of "POST", "PUT", "PATCH", "DELETE", got string "GET"',
      '$.executors.names.headers.Authorization: environment variable NO_SUCH_TOKEN is not set (write ${NO_SUCH_TOKEN:-default} to allow a default)',
      '$.executors.names.headers["Content-Length"]: is set by the HTTP client and cannot be configured',
      '$.executors.names.headers["bad name"]: is not a valid header name',
      '$.executors.noUrl.url: is required',
      '$.executors.noUrl.body: unknown property (allowed: kind, url, method, headers, tokenAudience, tokenScopes, description, timeoutSeconds)',
    ]);
  });

  it('lists every problem with its JSON path', () => {
    const problems = problemsOf({
      $schema: './executors.schema.json',
      mcpServer: {},
      mcpServers: {
        both: { command: 'x', url: 'http://h/mcp' },
        neither: { cmd: 'x' },
        badArgs: { command: 'x', args: ['ok', 3], env: { A: 1 } },
        badCwd: { command: 'x', cwd: '${NOPE}' },
        badUrl: { url: 'ftp://h/mcp', headers: [] },
        list: [],
      },
      executors: {
        add: { kind: 'mcp', server: 'evrything', tool: 'get-sum' },
        noTool: { kind: 'mcp', server: 'both', timeoutMs: 0 },
        a2a: { kind: 'a2a', url: 'http://h', headers: { Host: 'h' } },
        noKind: { name: 'echo' },
        numberKind: { kind: 3 },
        badBuiltin: { kind: 'builtin', name: 'explode', extra: true },
        'builtin.echo': { kind: 'builtin', name: 'echo' },
        'bad key': { kind: 'builtin', name: 'echo' },
        nope: 'echo',
      },
    });
    // The file's outline first, then each entry in turn: its schema, then (when it passed) what a
    // schema cannot check: expansions, references to mcpServers.
    expect(problems).toEqual([
      '$.mcpServer: unknown property (allowed: $schema, mcpServers, executors)',
      '$.mcpServers.list: must be an object, got an array',
      '$.executors.nope: must be an object, got string "echo"',
      '$.mcpServers.both: set either "command" (stdio server) or "url" (Streamable HTTP server), not both',
      '$.mcpServers.neither: must set "command" (stdio server) or "url" (Streamable HTTP server)',
      '$.mcpServers.badArgs.args[1]: must be a string, got number 3',
      '$.mcpServers.badArgs.env.A: must be a string, got number 1',
      '$.mcpServers.badCwd.cwd: environment variable NOPE is not set (write ${NOPE:-default} to allow a default)',
      '$.mcpServers.badUrl.url: must be an http: or https: URL, got string "ftp://h/mcp"',
      '$.mcpServers.badUrl.headers: must be an object, got an array',
      '$.executors.add.server: unknown MCP server "evrything" (configured: both, neither, badArgs, badCwd, badUrl, list)',
      '$.executors.noTool.tool: is required',
      '$.executors.noTool.timeoutMs: must be an integer number of milliseconds in 1..2147483647, got number 0',
      '$.executors.a2a.headers.Host: is set by the HTTP client and cannot be configured',
      '$.executors.noKind.kind: is required (one of: builtin, mcp, http, a2a)',
      '$.executors.numberKind.kind: unknown kind number 3 (supported: builtin, mcp, http, a2a)',
      '$.executors.badBuiltin.extra: unknown property (allowed: kind, name, description, timeoutSeconds)',
      '$.executors.badBuiltin.name: must be one of "echo", "fail", "sleep", got string "explode"',
      '$.executors["builtin.echo"]: keys starting with "builtin." are reserved for the built-ins (builtin.echo, builtin.fail, builtin.sleep)',
      '$.executors["bad key"]: key must be 1-128 characters: letters, digits and _ . : - (starting with a letter or digit)',
    ]);
  });

  it('rejects a document that is not an object, and sections that are not objects', () => {
    expect(problemsOf([])).toEqual(['$: must be an object, got an array']);
    expect(problemsOf({ mcpServers: 'x', executors: null })).toEqual([
      '$.mcpServers: must be an object, got string "x"',
      '$.executors: must be an object, got null',
    ]);
  });

  it('names the registry and counts the problems in the error message', () => {
    expect(() => resolveRegistryConfig({ executors: { a: { kind: 'builtin', name: 'x' } } }, context)).toThrow(
      'Invalid executor registry test.json (1 problem):\n  - $.executors.a.name: must be one of "echo", "fail", "sleep", got string "x"',
    );
  });
});
