/**
 * Save-time checks that depend on executor kinds: what may stand in an `a2aPool`: `a2a` agents, and
 * built-ins (tests), by each kind's `a2aPool` flag in the table (`executors/kinds.ts`); `mcp` tools
 * and `http` webhooks may not.
 */
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { CelEngine } from './cel/index.ts';
import { definitionChecks } from './definition-checks.ts';
import { EXECUTOR_KINDS } from './executors/kinds.ts';
import { createExecutorRegistry } from './executors/registry.ts';

const registry = createExecutorRegistry(
  {
    mcpServers: { local: { command: 'node' } },
    executors: {
      tool: { kind: 'mcp', server: 'local', tool: 't' },
      hook: { kind: 'http', url: 'http://127.0.0.1:9/hook' },
      echo: { kind: 'builtin', name: 'echo' },
      agent: { kind: 'a2a', url: 'http://127.0.0.1:9/agent' },
    },
  },
  { baseDir: tmpdir(), env: {} },
);
afterAll(() => registry.close());

const checks = definitionChecks(registry, new CelEngine());

describe('definitionChecks: executor kinds', () => {
  it('knows the kind of every key', () => {
    expect(['tool', 'hook', 'echo', 'agent', 'builtin.sleep', 'nope'].map((key) => registry.kindOf(key))).toEqual(['mcp', 'http', 'builtin', 'a2a', 'builtin', undefined]);
  });

  it('accepts a2a agents and built-ins in an a2aPool, and rejects unknown keys', () => {
    expect(EXECUTOR_KINDS.map((kind) => [kind.kind, kind.a2aPool])).toEqual([
      ['builtin', true],
      ['mcp', false],
      ['http', false],
      ['a2a', true],
    ]);
    for (const key of ['agent', 'echo', 'builtin.echo']) expect(checks.checkPoolMember(key)).toBeNull();
    expect(checks.checkPoolMember('ghost')).toBe("unresolvable a2aPool agent 'ghost'");
  });

  it('rejects MCP tools and webhooks in an a2aPool', () => {
    expect(checks.checkPoolMember('tool')).toBe("a2aPool agent 'tool' is an executor of kind 'mcp', not an A2A agent");
    expect(checks.checkPoolMember('hook')).toBe("a2aPool agent 'hook' is an executor of kind 'http', not an A2A agent");
  });
});
