/**
 * Secrets in an MCP server's registry entry never leak (issue item 6). The real service process
 * (`apps/api/src/server.ts`, embedded store in a temporary DATA_DIR, LOG_LEVEL=debug) loads a
 * registry whose servers get a secret through `${VAR}` in `args` and `env` and fail to connect:
 * one prints its command line and environment to stderr and exits, one is a script path that does
 * not exist. Runs using them fail; then the secret must be in none of: the run's errorSummary and
 * node-run errors (API), the store's files (raw, and every base64 payload decoded), the srv!.logs().
 *
 * The process is spawned (not `test/support/service.ts`) because this needs a registry of its own,
 * a persistent DATA_DIR and the real pino output.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { storedFiles } from './support/data-dir-scan.ts';

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
let srv: ServerProcess | undefined;

/** Creates, enables and triggers a one-step workflow on `executorKey`; resolves with the failed run and its node runs. */
async function failingRun(executorKey: string): Promise<{ run: any; nodeRuns: any[] }> {
  const created = await srv!.call('POST', '', {
    name: `secrets ${executorKey} ${randomBytes(4).toString('hex')}`,
    canvas: { viewport: {} },
    nodes: [{ name: 'Connect', nodeType: 'step', executorKey, config: {}, stepConfig: { maxRetries: 1, backoffBaseSeconds: 0.01 } }],
  });
  await srv!.call('POST', `/${created.id}/toggle`, { enabled: true });
  const { runId } = await srv!.call('POST', `/${created.id}/runs`, { initialInput: {} });
  for (let i = 0; ; i++) {
    const run = await srv!.call('GET', `/${created.id}/runs/${runId}`);
    if (run.status === 'failed') return { run, nodeRuns: (await srv!.call('GET', `/${created.id}/runs/${runId}/nodes`)).nodeRuns };
    if (run.status === 'completed' || run.status === 'cancelled' || i > 500) throw new Error(`run did not fail: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'switchyard-secrets-'));
  dataDir = join(workDir, 'data');
  const registryFile = join(workDir, 'executors.json');
  await writeFile(registryFile, JSON.stringify(REGISTRY));
  srv = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'debug', SWITCHYARD_EXECUTORS: registryFile, [SECRET_VAR]: SECRET });
});

afterAll(async () => {
  srv?.kill();
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
    await srv!.stop();
    const files = await storedFiles(dataDir);
    for (const file of files) expect(file.content.includes(SECRET), file.path).toBe(false);
    const payloads = files.flatMap((file) => file.payloads);
    // The decoding works: the stored errors (node run, run summary, retry event) are found in it.
    expect(payloads.filter((payload) => payload.includes('cannot connect to MCP server "leaky"')).length).toBeGreaterThanOrEqual(3);
    expect(payloads.filter((payload) => payload.includes(SECRET))).toEqual([]);
  });

  it('logs the failures and the server stderr without the secret', async () => {
    await srv!.stop();
    expect(srv!.logs()).toContain('MCP server connection failed');
    expect(srv!.logs()).toContain('MCP server stderr');
    expect(srv!.logs()).toContain('starting with --token=[REDACTED]');
    expect(srv!.logs().includes(SECRET)).toBe(false);
  });
});
