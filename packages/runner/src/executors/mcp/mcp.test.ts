/**
 * The `mcp` executor against real third-party MCP servers from node_modules
 * (@modelcontextprotocol/server-everything, @modelcontextprotocol/server-filesystem), spawned over
 * stdio through the example registry (examples/executors.json).
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ExecutorLogger } from '../shared/logger.ts';
import { DEFAULT_REGISTRY_FILE, createExecutorRegistry, loadExecutorRegistry } from '../registry.ts';
import type { RegistryConfig } from '../registry-config.ts';
import { ExecutorError } from '../types.ts';
import type { ExecutorCall, ExecutorRegistry } from '../types.ts';

interface LogRecord {
  level: keyof ExecutorLogger;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** A logger that keeps every record, for asserting on connection events. */
function recordingLogger(): ExecutorLogger & { records: LogRecord[]; pids(server: string): number[] } {
  const records: LogRecord[] = [];
  const record = (level: keyof ExecutorLogger) => (obj: object, msg?: string) => {
    records.push({ level, obj: obj as Record<string, unknown>, msg });
  };
  return {
    records,
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    pids: (server) =>
      records.filter((r) => r.msg === 'MCP server connected' && r.obj['server'] === server).map((r) => r.obj['pid'] as number),
  };
}

function call(args: Record<string, unknown>, signal: AbortSignal = new AbortController().signal): ExecutorCall {
  return { arguments: args, input: null, attempt: 1, signal, context: { runId: 'run-1', nodeId: 'node-1', nodeName: 'step' } };
}

async function rejection(promise: Promise<unknown>): Promise<ExecutorError> {
  const error: unknown = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ExecutorError);
  return error as ExecutorError;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The number in get-sum's text answer: "The sum of 2 and 3 is 5." */
function sumOf(output: unknown): number {
  const text = (output as { content: { type: string; text: string }[] }).content[0]?.text ?? '';
  return Number(/is (-?[\d.]+)\.$/.exec(text)?.[1]);
}

let dataDir: string;
const env = (): NodeJS.ProcessEnv => ({ ...process.env, DATA_DIR: dataDir });

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'switchyard-executors-'));
  await mkdir(path.join(dataDir, 'files'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('example registry (examples/executors.json)', () => {
  const logger = recordingLogger();
  let registry: ExecutorRegistry;

  beforeAll(async () => {
    registry = await loadExecutorRegistry({ file: DEFAULT_REGISTRY_FILE, env: env(), logger });
  });
  afterAll(async () => {
    await registry.close();
  });

  it('holds the example executors and the built-ins, and connects nothing at load', () => {
    expect(registry.keys()).toEqual([
      'builtin.echo', 'builtin.fail', 'builtin.sleep', 'echo', 'echo-tool', 'flaky',
      'list-directory', 'long-operation', 'notify', 'read-file', 'sleep', 'sum', 'write-file',
    ]);
    expect(registry.get('sum')).toMatchObject({ kind: 'mcp', key: 'sum' });
    expect(registry.get('notify')).toMatchObject({ kind: 'http', key: 'notify', timeoutMs: 10_000 });
    expect(registry.get('flaky')).toMatchObject({ kind: 'builtin', key: 'flaky' });
    expect(() => registry.get('nope')).toThrow(new ExecutorError('unknown executor key "nope"', { retryable: false }));
    expect(logger.pids('everything')).toEqual([]);
  });

  it('shares one connect between concurrent first calls, and reuses it', async () => {
    const sum = registry.get('sum');
    const outputs = await Promise.all([sum.invoke(call({ a: 2, b: 3 })), sum.invoke(call({ a: 40, b: 2.5 }))]);
    expect(outputs[0]).toEqual({ content: [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }] });
    expect(outputs.map(sumOf)).toEqual([5, 42.5]);
    await expect(registry.get('echo-tool').invoke(call({ message: 'hi' }))).resolves.toEqual({
      content: [{ type: 'text', text: 'Echo: hi' }],
    });
    expect(logger.pids('everything')).toHaveLength(1);
  });

  it('sends stdio server stderr to the logger', () => {
    const stderr = logger.records.filter((r) => r.msg === 'MCP server stderr' && r.obj['server'] === 'everything');
    expect(stderr.map((r) => r.obj['line'])).toContain('Starting default (STDIO) server...');
  });

  it('writes a file and reads it back through the filesystem server (structuredContent)', async () => {
    await expect(registry.get('write-file').invoke(call({ path: 'hello.txt', content: 'hello from switchyard' }))).resolves.toEqual({
      content: 'Successfully wrote to hello.txt',
    });
    expect(await readFile(path.join(dataDir, 'files', 'hello.txt'), 'utf8')).toBe('hello from switchyard');
    await expect(registry.get('read-file').invoke(call({ path: 'hello.txt' }))).resolves.toEqual({ content: 'hello from switchyard' });
    await expect(registry.get('list-directory').invoke(call({ path: '.' }))).resolves.toEqual({ content: '[FILE] hello.txt' });
    expect(logger.pids('files')).toHaveLength(1);
  });

  it('turns a tool error result (isError) into a retryable error carrying its text', async () => {
    const error = await rejection(registry.get('read-file').invoke(call({ path: 'missing.txt' })));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^ENOENT: no such file or directory, open '.*missing\.txt'$/);
  });

  it('rejects arguments that violate the inputSchema without calling the tool', async () => {
    const callTool = vi.spyOn(Client.prototype, 'callTool');
    try {
      const error = await rejection(registry.get('sum').invoke(call({ a: '2' })));
      expect(error.retryable).toBe(false);
      expect(error.message).toBe('invalid arguments for MCP tool "get-sum" of server "everything": /b: is required; /a: must be number');
      expect(error.details).toMatchObject({ problems: [{ path: '/b', message: 'is required' }, { path: '/a', message: 'must be number' }] });
      expect(callTool).not.toHaveBeenCalled();
    } finally {
      callTool.mockRestore();
    }
  });

  it('cancels a slow call promptly when the signal aborts', async () => {
    const controller = new AbortController();
    const started = performance.now();
    // A 10 s operation, aborted after 100 ms: the call ends long before the operation would.
    const pending = registry.get('long-operation').invoke(call({ duration: 10, steps: 1 }, controller.signal));
    setTimeout(() => controller.abort(new Error('run cancelled')), 100);
    const error = await rejection(pending);
    expect(error).toMatchObject({ message: 'cancelled', retryable: false });
    expect(performance.now() - started).toBeLessThan(5_000);
    // The connection survives a cancelled call.
    expect(sumOf(await registry.get('sum').invoke(call({ a: 1, b: 1 })))).toBe(2);
    expect(logger.pids('everything')).toHaveLength(1);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const error = await rejection(registry.get('sum').invoke(call({ a: 1, b: 1 }, AbortSignal.abort())));
    expect(error).toMatchObject({ message: 'cancelled', retryable: false });
  });

  it('close() ends every spawned server and is idempotent', async () => {
    const pids = [...logger.pids('everything'), ...logger.pids('files')];
    expect(pids).toHaveLength(2);
    await Promise.all([registry.close(), registry.close()]);
    await until(() => pids.every((pid) => !isRunning(pid)));
    const error = await rejection(registry.get('sum').invoke(call({ a: 1, b: 1 })));
    expect(error).toMatchObject({ message: 'executor registry is closed', retryable: false });
  });
});

describe('failures and recovery', () => {
  const logger = recordingLogger();
  let registry: ExecutorRegistry;
  const examplesDir = path.dirname(DEFAULT_REGISTRY_FILE);

  beforeAll(async () => {
    const example = JSON.parse(await readFile(DEFAULT_REGISTRY_FILE, 'utf8')) as Required<RegistryConfig>;
    registry = createExecutorRegistry(
      {
        mcpServers: {
          ...example.mcpServers,
          'files-missing-dir': { command: 'node', args: ['../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', '${DATA_DIR}/absent'] },
          'no-such-command': { command: '/nonexistent/mcp-server' },
        },
        executors: {
          ...example.executors,
          'missing-tool': { kind: 'mcp', server: 'everything', tool: 'no-such-tool' },
          impatient: { kind: 'mcp', server: 'everything', tool: 'trigger-long-running-operation', timeoutMs: 200 },
          'broken-list': { kind: 'mcp', server: 'files-missing-dir', tool: 'list_directory' },
          'broken-spawn': { kind: 'mcp', server: 'no-such-command', tool: 'anything' },
        },
      },
      { baseDir: examplesDir, source: 'test registry', env: env(), logger },
    );
  });
  afterAll(async () => {
    await registry.close();
  });

  it('rejects an unknown tool as not retryable, naming the available ones', async () => {
    const error = await rejection(registry.get('missing-tool').invoke(call({})));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^MCP server "everything" has no tool "no-such-tool" \(available: .*\becho\b.*\bget-sum\b/);
  });

  it('reports a per-call timeout as retryable', async () => {
    const error = await rejection(registry.get('impatient').invoke(call({ duration: 0.5, steps: 1 })));
    expect(error).toMatchObject({
      message: 'MCP tool "trigger-long-running-operation" of server "everything" timed out after 0.2 s',
      retryable: true,
    });
  });

  it('reconnects on the next call after the server process died', async () => {
    const [pid] = logger.pids('everything');
    expect(pid).toBeTypeOf('number');
    process.kill(pid as number, 'SIGKILL');
    await until(() => logger.records.some((r) => r.msg === 'MCP server connection lost'));
    expect(sumOf(await registry.get('sum').invoke(call({ a: 3, b: 4 })))).toBe(7);
    const pids = logger.pids('everything');
    expect(pids).toHaveLength(2);
    expect(pids[1]).not.toBe(pid);
  });

  it('reports a server that exits at start as retryable, with its stderr', async () => {
    const error = await rejection(registry.get('broken-list').invoke(call({ path: '.' })));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^cannot connect to MCP server "files-missing-dir" \(stdio: node\): MCP error -32000: Connection closed\nserver stderr:\n/);
    expect(error.message).toContain('Error: None of the specified directories are accessible');
  });

  it('reports a command that cannot be spawned as retryable, and tries again on the next call', async () => {
    const first = await rejection(registry.get('broken-spawn').invoke(call({})));
    expect(first.retryable).toBe(true);
    expect(first.message).toBe('cannot connect to MCP server "no-such-command" (stdio: mcp-server): spawn /nonexistent/mcp-server ENOENT');
    await rejection(registry.get('broken-spawn').invoke(call({})));
    const failures = logger.records.filter((r) => r.msg === 'MCP server connection failed' && r.obj['server'] === 'no-such-command');
    expect(failures).toHaveLength(2);
  });
});
