import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RegistryConfigError, resolveRegistryConfig } from './registry-config.ts';
import type { ResolveContext } from './registry-config.ts';

const context: ResolveContext = {
  baseDir: '/srv/switchyard/config',
  env: { PATH: '/usr/bin', TOKEN: 's3cret', DATA_DIR: '/var/lib/switchyard' },
  source: 'test.json',
};

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
    expect(resolved.servers.size).toBe(0);
    expect(Object.fromEntries(resolved.executors)).toEqual({
      'builtin.echo': { kind: 'builtin', name: 'echo' },
      'builtin.fail': { kind: 'builtin', name: 'fail' },
      'builtin.sleep': { kind: 'builtin', name: 'sleep' },
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
    expect(resolved.servers.get('local')).toEqual({
      transport: 'stdio',
      command: process.execPath,
      args: ['/srv/switchyard/config/server.js', '/var/lib/switchyard/files', '8080'],
      env: { PATH: '/usr/bin', TOKEN: 's3cret', DATA_DIR: '/var/lib/switchyard', API_TOKEN: 's3cret' },
      cwd: '/srv/switchyard/config',
      // Not the built-in paths, the default 8080, or the inherited environment.
      secrets: ['s3cret'],
    });
    expect(resolved.servers.get('tool')).toMatchObject({ command: '/opt/bin/tool', args: [], cwd: '/srv/switchyard/work' });
  });

  it('defaults DATA_DIR to ./data under the working directory', () => {
    const resolved = resolveRegistryConfig({ mcpServers: { fs: { command: 'fs', args: ['${DATA_DIR}'] } } }, { ...context, env: {} });
    expect(resolved.servers.get('fs')).toMatchObject({ args: [path.resolve('data')], env: {} });
  });

  it('resolves Streamable HTTP servers with expanded headers', () => {
    const resolved = resolveRegistryConfig(
      { mcpServers: { remote: { url: 'http://${HOST:-127.0.0.1}:9000/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } } } },
      context,
    );
    expect(resolved.servers.get('remote')).toEqual({
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
    expect(new Set(resolved.servers.get('remote')?.secrets)).toEqual(
      new Set(['svc-user', 's3cret', 'k-literal', 'Basic  dXNlcjpwdw==', 'dXNlcjpwdw==', 'p%40ss', 'p@ss', 'literal-key']),
    );
    expect(resolved.servers.get('local')?.secrets).toEqual(['s3cret']);
  });

  it('does not quote an expanded URL in its problem (it may hold a secret)', () => {
    expect(problemsOf({ mcpServers: { bad: { url: 'ftp://${TOKEN}@h/mcp' } } })).toEqual([
      '$.mcpServers.bad.url: must be an http: or https: URL, got "ftp://${TOKEN}@h/mcp"',
    ]);
  });

  it('resolves executors, filling in the MCP timeout', () => {
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
    expect(resolved.executors.get('echo')).toEqual({ kind: 'builtin', name: 'echo' });
  });

  it('lists every problem with its JSON path', () => {
    const problems = problemsOf({
      $schema: './executors.schema.json',
      mcpServer: {},
      mcpServers: {
        both: { command: 'x', url: 'http://h/mcp' },
        neither: { cmd: 'x' },
        badArgs: { command: 'x', args: ['ok', 3], env: { A: 1 }, cwd: '${NOPE}' },
        badUrl: { url: 'ftp://h/mcp', headers: [] },
        list: [],
      },
      executors: {
        add: { kind: 'mcp', server: 'evrything', tool: 'get-sum' },
        noTool: { kind: 'mcp', server: 'both', timeoutMs: 0 },
        http: { kind: 'http', url: 'http://h' },
        noKind: { name: 'echo' },
        badBuiltin: { kind: 'builtin', name: 'explode', extra: true },
        'builtin.echo': { kind: 'builtin', name: 'echo' },
        'bad key': { kind: 'builtin', name: 'echo' },
        nope: 'echo',
      },
    });
    expect(problems).toEqual([
      '$.mcpServer: unknown property (allowed: $schema, mcpServers, executors)',
      '$.mcpServers.both: set either "command" (stdio server) or "url" (Streamable HTTP server), not both',
      '$.mcpServers.neither: must set "command" (stdio server) or "url" (Streamable HTTP server)',
      '$.mcpServers.badArgs.args[1]: must be a string, got number 3',
      '$.mcpServers.badArgs.env.A: must be a string, got number 1',
      '$.mcpServers.badArgs.cwd: environment variable NOPE is not set (write ${NOPE:-default} to allow a default)',
      '$.mcpServers.badUrl.headers: must be an object, got an array',
      '$.mcpServers.badUrl.url: must be an http: or https: URL, got "ftp://h/mcp"',
      '$.mcpServers.list: must be an object, got an array',
      '$.executors.add.server: unknown MCP server "evrything" (configured: both, neither, badArgs, badUrl, list)',
      '$.executors.noTool.tool: is required',
      '$.executors.noTool.timeoutMs: must be an integer number of milliseconds in 1..2147483647, got 0',
      '$.executors.http.kind: unknown kind "http" (supported: mcp, builtin)',
      '$.executors.noKind.kind: is required',
      '$.executors.badBuiltin.extra: unknown property (allowed: kind, name)',
      '$.executors.badBuiltin.name: unknown builtin "explode" (one of: echo, fail, sleep)',
      '$.executors["builtin.echo"]: keys starting with "builtin." are reserved for the built-ins (builtin.echo, builtin.fail, builtin.sleep)',
      '$.executors["bad key"]: key must be 1-128 characters: letters, digits and _ . : - (starting with a letter or digit)',
      '$.executors.nope: must be an object, got string "echo"',
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
      'Invalid executor registry test.json (1 problem):\n  - $.executors.a.name: unknown builtin "x" (one of: echo, fail, sleep)',
    );
  });
});
