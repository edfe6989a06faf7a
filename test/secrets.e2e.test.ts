/**
 * Secrets in an MCP server's registry entry never leak (issue item 6). The real service process
 * (`apps/api/src/server.ts`, embedded store in a temporary DATA_DIR, LOG_LEVEL=debug) loads a
 * registry whose servers get a secret through `${VAR}` in `args` and `env` and fail to connect:
 * one prints its command line and environment to stderr and exits, one is a script path that does
 * not exist. Runs using them fail; then the secret must be in none of: the run's errorSummary and
 * node-run errors (API), the store's files (raw, and every base64 payload decoded), the logs.
 *
 * The process is spawned (not `test/support/service.ts`) because this needs a registry of its own,
 * a persistent DATA_DIR and the real pino output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECRET = `leak-${randomBytes(16).toString('hex')}`;
const SECRET_VAR = 'SWITCHYARD_TEST_SECRET';

/** Prints its arguments and API_KEY to stderr, then exits before the MCP handshake. */
const EXIT_AT_START = "console.error('starting with ' + process.argv.slice(1).join(' ') + ' key=' + process.env.API_KEY); process.exit(1)";

const REGISTRY = {
  mcpServers: {
    leaky: { command: 'node', args: ['-e', EXIT_AT_START, '--', `--token=\${${SECRET_VAR}}`], env: { API_KEY: `\${${SECRET_VAR}}` } },
    'leaky-missing': { command: 'node', args: [`\${REGISTRY_DIR}/missing-\${${SECRET_VAR}}.js`] },
  },
  executors: {
    'leaky-tool': { kind: 'mcp', server: 'leaky', tool: 'anything' },
    'missing-tool': { kind: 'mcp', server: 'leaky-missing', tool: 'anything' },
  },
};

let workDir = '';
let dataDir = '';
let server: ChildProcess | undefined;
let baseUrl = '';
let logs = '';

/** Starts the real server process; resolves once it listens. Its stdout and stderr go to `logs`. */
function startServer(registryFile: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apps/api/src/server.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      MONGODB_URI: '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'debug',
      SWITCHYARD_EXECUTORS: registryFile,
      [SECRET_VAR]: SECRET,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = child;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${logs}`)), 20_000);
    const collect = (chunk: Buffer): void => {
      logs += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs);
      if (match && baseUrl === '') {
        baseUrl = match[1]!;
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${logs}`)));
  });
}

/** Stops the server gracefully and waits until it has exited (its output is complete then). */
async function stopServer(): Promise<void> {
  const child = server;
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}/api/v1/workflows${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
}

/** Creates, enables and triggers a one-step workflow on `executorKey`; resolves with the failed run and its node runs. */
async function failingRun(executorKey: string): Promise<{ run: any; nodeRuns: any[] }> {
  const created = await call('POST', '', {
    name: `secrets ${executorKey} ${randomBytes(4).toString('hex')}`,
    canvas: { viewport: {} },
    nodes: [{ name: 'Connect', nodeType: 'step', executorKey, config: {}, stepConfig: { maxRetries: 1, backoffBaseSeconds: 0.01 } }],
  });
  await call('POST', `/${created.id}/toggle`, { enabled: true });
  const { runId } = await call('POST', `/${created.id}/runs`, { initialInput: {} });
  for (let i = 0; ; i++) {
    const run = await call('GET', `/${created.id}/runs/${runId}`);
    if (run.status === 'failed') return { run, nodeRuns: (await call('GET', `/${created.id}/runs/${runId}/nodes`)).nodeRuns };
    if (run.status === 'completed' || run.status === 'cancelled' || i > 500) throw new Error(`run did not fail: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The payloads of the store's line files (journal, snapshot): the embedded store writes one JSON
 * object a line with the document as base64 BSON, where a secret would not show in the raw bytes.
 * Every string value of every JSON line is base64-decoded (whatever its key), so BSON strings
 * (UTF-8 bytes) can be searched as text.
 */
function decodedPayloads(content: Buffer): string[] {
  const payloads: string[] = [];
  for (const line of content.toString('utf8').split('\n')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null) continue;
    for (const value of Object.values(parsed)) {
      if (typeof value === 'string') payloads.push(Buffer.from(value, 'base64').toString('utf8'));
    }
  }
  return payloads;
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'switchyard-secrets-'));
  dataDir = join(workDir, 'data');
  const registryFile = join(workDir, 'executors.json');
  await writeFile(registryFile, JSON.stringify(REGISTRY));
  await startServer(registryFile);
});

afterAll(async () => {
  server?.kill('SIGKILL');
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('a failing MCP server with a secret in its args and env', () => {
  const runs: Array<{ run: any; nodeRuns: any[] }> = [];

  it('fails the run naming the server and its command, never the secret', async () => {
    runs.push(await failingRun('leaky-tool'));
    runs.push(await failingRun('missing-tool'));
    const [exits, missing] = runs.map(({ run }) => run as { errorSummary: string });
    expect(exits!.errorSummary).toMatch(/^Node 'Connect' failed: cannot connect to MCP server "leaky" \(stdio: node\): MCP error -32000: Connection closed\nserver stderr:\n/);
    expect(exits!.errorSummary).toContain('starting with --token=[REDACTED] key=[REDACTED]');
    expect(missing!.errorSummary).toMatch(/^Node 'Connect' failed: cannot connect to MCP server "leaky-missing" \(stdio: node\): /);
    expect(missing!.errorSummary).toMatch(/missing-\[REDACTED\]\.js/);
    for (const { run, nodeRuns } of runs) {
      expect(nodeRuns).toHaveLength(1);
      expect(nodeRuns[0]).toMatchObject({ status: 'failed', attempt: 2 });
      expect(JSON.stringify(run)).not.toContain(SECRET);
      expect(JSON.stringify(nodeRuns)).not.toContain(SECRET);
    }
  });

  it('stores the secret in no file of DATA_DIR, raw or decoded', async () => {
    expect(runs).toHaveLength(2);
    await stopServer();
    const files = await filesUnder(dataDir);
    const payloads: string[] = [];
    for (const file of files) {
      const content = await readFile(file);
      expect(content.includes(SECRET), file).toBe(false);
      payloads.push(...decodedPayloads(content));
    }
    // The decoding works: the stored errors (node run, run summary, retry event) are found in it.
    expect(payloads.filter((payload) => payload.includes('cannot connect to MCP server "leaky"')).length).toBeGreaterThanOrEqual(3);
    expect(payloads.filter((payload) => payload.includes(SECRET))).toEqual([]);
  });

  it('logs the failures and the server stderr without the secret', async () => {
    await stopServer();
    expect(logs).toContain('MCP server connection failed');
    expect(logs).toContain('MCP server stderr');
    expect(logs).toContain('starting with --token=[REDACTED]');
    expect(logs.includes(SECRET)).toBe(false);
  });
});
