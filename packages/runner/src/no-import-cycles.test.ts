/**
 * No import circle in the workspace's sources: madge builds the import graph of each source tree
 * (type-only imports included, `.ts` specifiers resolved through the root tsconfig) and must find
 * no cycle. The runner's executors depend on it: each kind (`executors/<kind>/`) imports the kind
 * contract, `types.ts` and `executors/shared/` only, and the registry reaches the kinds through the
 * table (`executors/kinds.ts`), never the other way round.
 */
import path from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const TS_CONFIG = path.join(ROOT, 'tsconfig.json');

/** Source trees checked, relative to the repository root. */
const SOURCE_TREES = ['packages/runner/src', 'packages/domain/src', 'packages/store/src', 'apps/api/src'];

/** The import graph of `tree` (relative to the repository root). */
function importGraph(tree: string) {
  return madge(path.join(ROOT, tree), {
    fileExtensions: ['ts'],
    tsConfig: TS_CONFIG,
    // Type-only imports count: a circle of types still ties the modules together.
    detectiveOptions: { ts: { skipTypeImports: false } },
  });
}

describe('import graph', () => {
  it.each(SOURCE_TREES)('%s has no import circle', async (tree) => {
    const graph = await importGraph(tree);
    // Every relative import resolved (`.ts` specifiers included): an unresolved one would hide its edges.
    expect(graph.warnings().skipped.filter((specifier) => specifier.startsWith('.'))).toEqual([]);
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(10);
    expect(graph.circular()).toEqual([]);
  }, 60_000);

  it('keeps each executor kind self-contained: no kind imports another kind, the table or the registry', async () => {
    const graph = (await importGraph('packages/runner/src')).obj();
    const kindOf = (file: string): string | undefined => /^executors\/(builtin|mcp|http|a2a)\//.exec(file)?.[1];
    const registryLevel = /^executors\/(kinds|registry|registry-config|index)\.ts$/;
    const crossings = Object.entries(graph)
      .filter(([file]) => kindOf(file) !== undefined && !file.endsWith('.test.ts'))
      .flatMap(([file, imports]) =>
        imports.filter((target) => registryLevel.test(target) || (kindOf(target) !== undefined && kindOf(target) !== kindOf(file))).map((target) => `${file} -> ${target}`),
      );
    expect(crossings).toEqual([]);
  }, 60_000);

  it('sees the edges of .ts imports, type-only ones included', async () => {
    const graph = (await importGraph('packages/runner/src')).obj();
    expect(graph['executors/kinds.ts']).toEqual(expect.arrayContaining(['executors/kind.ts', 'executors/mcp/mcp.ts', 'executors/a2a/a2a.ts']));
    // `import type { TokenBinding }` is its only import.
    expect(graph['executors/types.ts']).toEqual(['executors/shared/token-binding.ts']);
  }, 60_000);
});
