import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryConfigError } from './registry-config.ts';
import { DEFAULT_REGISTRY_FILE, loadExecutorRegistry } from './registry.ts';
import type { ExecutorCall } from './types.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'switchyard-registry-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function registryFile(name: string, content: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, content);
  return file;
}

const call: ExecutorCall = {
  arguments: { x: 1 },
  input: 'in',
  attempt: 1,
  signal: new AbortController().signal,
  context: { runId: 'r', nodeId: 'n', nodeName: 'step' },
};

describe('loadExecutorRegistry', () => {
  it('loads a file, with the built-ins, a pino logger, and aliases of kind builtin', async () => {
    const file = await registryFile('ok.json', JSON.stringify({ executors: { ping: { kind: 'builtin', name: 'echo' } } }));
    const registry = await loadExecutorRegistry({ file, logger: pino({ level: 'silent' }), env: {} });
    expect(registry.keys()).toEqual(['builtin.echo', 'builtin.fail', 'builtin.sleep', 'ping']);
    expect(registry.has('ping')).toBe(true);
    expect(registry.has('pong')).toBe(false);
    await expect(registry.get('ping').invoke(call)).resolves.toEqual({ arguments: { x: 1 }, input: 'in' });
    await registry.close();
  });

  it('reads the file named by SWITCHYARD_EXECUTORS, else the example registry', async () => {
    const file = await registryFile('from-env.json', JSON.stringify({ executors: { fromEnv: { kind: 'builtin', name: 'sleep' } } }));
    const fromEnv = await loadExecutorRegistry({ env: { SWITCHYARD_EXECUTORS: file } });
    expect(fromEnv.has('fromEnv')).toBe(true);
    const example = await loadExecutorRegistry({ env: {} });
    expect(example.has('sum')).toBe(true);
    expect(DEFAULT_REGISTRY_FILE).toBe(path.resolve(import.meta.dirname, '../../../../examples/executors.json'));
    await Promise.all([fromEnv.close(), example.close()]);
  });

  it('rejects malformed JSON, naming the file', async () => {
    const file = await registryFile('broken.json', '{ "executors": { ');
    const error: unknown = await loadExecutorRegistry({ file }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(RegistryConfigError);
    expect((error as Error).message).toMatch(new RegExp(`^Invalid executor registry ${file} \\(1 problem\\):\\n  - \\$: malformed JSON: `));
  });

  it('rejects an invalid registry with every problem', async () => {
    const file = await registryFile('invalid.json', JSON.stringify({ executors: { a: { kind: 'mcp', server: 'x', tool: 't' }, b: { kind: 'builtin' } } }));
    await expect(loadExecutorRegistry({ file })).rejects.toMatchObject({
      problems: ['$.executors.a.server: unknown MCP server "x" (no mcpServers are configured)', '$.executors.b.name: is required'],
    });
  });

  it('fails clearly when the file cannot be read', async () => {
    const file = path.join(dir, 'absent.json');
    await expect(loadExecutorRegistry({ file })).rejects.toThrow(`cannot read executor registry ${file}: ENOENT`);
  });
});
