/**
 * Save-time checks that depend on executor kinds: what may stand in an `a2aPool`. Until the `a2a`
 * kind exists every kind may (the rule from before kinds were known); the seam is each kind's
 * `a2aPool` flag in the table (`executors/kinds.ts`).
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
    },
  },
  { baseDir: tmpdir(), env: {} },
);
afterAll(() => registry.close());

const checks = definitionChecks(registry, new CelEngine());

describe('definitionChecks: executor kinds', () => {
  it('knows the kind of every key', () => {
    expect(['tool', 'hook', 'echo', 'builtin.sleep', 'nope'].map((key) => registry.kindOf(key))).toEqual(['mcp', 'http', 'builtin', 'builtin', undefined]);
  });

  it('accepts every configured kind in an a2aPool for now, and rejects unknown keys', () => {
    expect(EXECUTOR_KINDS.map((kind) => [kind.kind, kind.a2aPool])).toEqual([
      ['builtin', true],
      ['mcp', true],
      ['http', true],
    ]);
    for (const key of ['tool', 'hook', 'echo', 'builtin.echo']) expect(checks.checkPoolMember(key)).toBeNull();
    expect(checks.checkPoolMember('ghost')).toBe("unresolvable a2aPool agent 'ghost'");
  });

  it('rejects pool members of a kind whose a2aPool flag is off', () => {
    const mcp = EXECUTOR_KINDS.find((kind) => kind.kind === 'mcp')!;
    Object.defineProperty(mcp, 'a2aPool', { value: false, configurable: true });
    try {
      expect(checks.checkPoolMember('tool')).toBe("a2aPool agent 'tool' is an executor of kind 'mcp', not an A2A agent");
      expect(checks.checkPoolMember('echo')).toBeNull();
    } finally {
      Object.defineProperty(mcp, 'a2aPool', { value: true, configurable: true });
    }
  });
});
