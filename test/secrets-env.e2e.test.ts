/**
 * A secret planted in the environment and used by the registry through `${env:NAME}` never leaks
 * (issue 9, item 5). The real service process (`apps/api/src/server.ts`, embedded store in a
 * temporary DATA_DIR, LOG_LEVEL=debug) loads a registry where the secret is
 * - the bearer credential of an `http` executor (`"authorization": "Bearer ${env:…}"`), whose
 *   in-test webhook checks it, answers 200 once (echoing the header and the token's base64 forms
 *   in its JSON) and 500 once (echoing the header in the body);
 * - `API_KEY` in the `env` of an MCP server (the npm "everything" server), whose `get-env` tool
 *   returns its whole environment;
 * and clients send it as `Authorization: Bearer …` and `X-API-Key: …`, and as an (invalid) request
 * body. Then the secret — as is, and base64 (standard and URL-safe) — is in no file under DATA_DIR
 * (raw bytes, and every base64 payload of the store's line files decoded) and nowhere in the
 * process's stdout/stderr.
 *
 * Spawned (not `test/support/service.ts`): it needs a registry of its own, a persistent DATA_DIR
 * and the real pino output.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { storedFiles } from './support/data-dir-scan.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The planted secret: 32 random characters. */
const PLANTED = randomBytes(16).toString('hex');
const PLANTED_VAR = 'SWITCHYARD_TEST_PLANTED_TOKEN';
/** Every form of the secret that must not be found (base64 without padding: it may be followed by more text). */
const FORMS: Record<string, string> = {
  raw: PLANTED,
  base64: Buffer.from(PLANTED).toString('base64').replace(/=+$/, ''),
  base64url: Buffer.from(PLANTED).toString('base64url'),
};

let workDir = '';
let dataDir = '';
let srv: ServerProcess | undefined;
let webhook: Server | undefined;
/** The headers of every request the webhook received. */
const received: IncomingHttpHeaders[] = [];

/** The webhook: 401 without the planted credential; else 200 for `{ mode: 'ok' }`, 500 otherwise, both echoing it. */
function startWebhook(): Promise<string> {
  webhook = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push(request.headers);
      const authorization = request.headers.authorization ?? '';
      if (authorization !== `Bearer ${PLANTED}`) {
        response.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { mode?: string };
      if (body.mode === 'ok') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          ok: true,
          seenAuthorization: authorization,
          seenBase64: Buffer.from(PLANTED).toString('base64'),
          seenBase64url: Buffer.from(PLANTED).toString('base64url'),
        }));
      } else {
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`upstream broke while handling authorization=${authorization}`);
      }
    });
  });
  return new Promise((resolve) => webhook!.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(webhook!.address() as AddressInfo).port}/hook`)));
}

/** Creates, enables and triggers a one-step workflow; resolves with the finished run and its node runs. */
async function finishedRun(executorKey: string, config: unknown): Promise<{ run: any; nodeRuns: any[] }> {
  const created = await srv!.call('POST', '', {
    name: `planted ${executorKey} ${randomBytes(4).toString('hex')}`,
    canvas: { viewport: {} },
    nodes: [{ name: 'Call', nodeType: 'step', executorKey, config, stepConfig: { maxRetries: 0 } }],
  });
  await srv!.call('POST', `/${created.id}/toggle`, { enabled: true });
  const { runId } = await srv!.call('POST', `/${created.id}/runs`, { initialInput: {} });
  for (let i = 0; ; i++) {
    const run = await srv!.call('GET', `/${created.id}/runs/${runId}`);
    if (run.status === 'failed' || run.status === 'completed') {
      const heads = (await srv!.call('GET', `/${created.id}/runs/${runId}/nodes`)).nodeRuns as Array<{ id: string }>;
      // The node run details: they carry the snapshots in full.
      const nodeRuns = await Promise.all(heads.map((head) => srv!.call('GET', `/${created.id}/runs/${runId}/nodes/${head.id}`)));
      return { run, nodeRuns };
    }
    if (i > 1000) throw new Error(`run did not finish: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The forms of the secret found in `text` (names from {@link FORMS}). */
function formsIn(text: string | Buffer): string[] {
  return Object.entries(FORMS).filter(([, form]) => text.includes(form)).map(([name]) => name);
}

beforeAll(async () => {
  expect(PLANTED).toHaveLength(32);
  const hookUrl = await startWebhook();
  workDir = await mkdtemp(join(tmpdir(), 'switchyard-planted-'));
  dataDir = join(workDir, 'data');
  const registryFile = join(workDir, 'executors.json');
  await writeFile(registryFile, JSON.stringify({
    mcpServers: {
      everything: {
        command: 'node',
        args: [join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
        env: { API_KEY: `\${env:${PLANTED_VAR}}` },
      },
    },
    executors: {
      hook: { kind: 'http', url: hookUrl, headers: { authorization: `Bearer \${env:${PLANTED_VAR}}` }, timeoutSeconds: 10 },
      'get-env': { kind: 'mcp', server: 'everything', tool: 'get-env' },
    },
  }));
  srv = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'debug', SWITCHYARD_EXECUTORS: registryFile, [PLANTED_VAR]: PLANTED });
}, 30_000);

afterAll(async () => {
  srv?.kill();
  await new Promise((resolve) => (webhook ? webhook.close(resolve) : resolve(undefined)));
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('a secret planted in the environment and used through ${env:NAME}', () => {
  const runs: Array<{ run: any; nodeRuns: any[] }> = [];

  it('reaches the webhook as its bearer credential; the echoed output is stored redacted', async () => {
    const ok = await finishedRun('hook', { mode: 'ok' });
    runs.push(ok);
    expect(ok.run.status).toBe('completed');
    expect(ok.nodeRuns).toHaveLength(1);
    expect(ok.nodeRuns[0].outputSnapshot).toEqual({
      ok: true,
      seenAuthorization: '[REDACTED]',
      seenBase64: expect.stringMatching(/^\[REDACTED\]=*$/),
      seenBase64url: '[REDACTED]',
    });
    expect(received.at(-1)?.authorization).toBe(`Bearer ${PLANTED}`);
  });

  it('fails on the webhook 500 with a redacted excerpt of its body', async () => {
    const failed = await finishedRun('hook', { mode: 'fail' });
    runs.push(failed);
    expect(failed.run.status).toBe('failed');
    expect(failed.nodeRuns).toHaveLength(1);
    expect(failed.nodeRuns[0].status).toBe('failed');
    expect(JSON.stringify(failed.nodeRuns[0].error)).toContain('authorization=[REDACTED]');
    expect(received).toHaveLength(2);
  });

  it('reaches the MCP server through its env; the tool output is stored redacted', async () => {
    const env = await finishedRun('get-env', {});
    runs.push(env);
    expect(env.run.status).toBe('completed');
    const text = env.nodeRuns[0].outputSnapshot.content[0].text as string;
    expect(text).toContain('"API_KEY": "[REDACTED]"');
    // The inherited variable itself is redacted too: its value is the secret.
    expect(text).toContain(`"${PLANTED_VAR}": "[REDACTED]"`);
  });

  it('is not logged when clients send it as credentials or in a body', async () => {
    const headers = { authorization: `Bearer ${PLANTED}`, 'x-api-key': PLANTED, cookie: `session=${PLANTED}` };
    const list = await fetch(`${srv!.baseUrl}/api/v1/workflows`, { headers });
    expect(list.status).toBe(200);
    const missing = await fetch(`${srv!.baseUrl}/api/v1/workflows/00000000-0000-4000-8000-000000000000`, { headers });
    expect(missing.status).toBeGreaterThanOrEqual(400);
    // An invalid body holding the secret: the 400 may answer about it, the log must not hold it.
    const invalid = await fetch(`${srv!.baseUrl}/api/v1/workflows`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: `${PLANTED} is not JSON` });
    expect(invalid.status).toBe(400);
    // A valid body that fails validation.
    const rejected = await fetch(`${srv!.baseUrl}/api/v1/workflows`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: PLANTED, password: PLANTED }) });
    expect(rejected.status).toBe(400);
  });

  it('appears in none of the API answers about the runs', () => {
    expect(runs).toHaveLength(3);
    for (const { run, nodeRuns } of runs) expect(formsIn(JSON.stringify({ run, nodeRuns }))).toEqual([]);
  });

  it('is in no file under DATA_DIR, raw or decoded', async () => {
    await srv!.stop();
    const files = await storedFiles(dataDir);
    expect(files.length).toBeGreaterThan(0);
    const payloads = files.flatMap((file) => file.payloads);
    const found: string[] = [];
    for (const file of files) for (const form of formsIn(file.content)) found.push(`${form} in ${file.path}`);
    // The decoding works: the stored outputs are found in it.
    expect(payloads.some((payload) => payload.includes('seenAuthorization'))).toBe(true);
    for (const payload of payloads) for (const form of formsIn(payload)) found.push(`${form} in a decoded payload`);
    expect(found).toEqual([]);
  });

  it('is nowhere in the log output (stdout and stderr)', async () => {
    await srv!.stop();
    expect(srv!.logs()).toContain('"level":20'); // debug records were written
    expect(srv!.logs()).toContain('webhook call failed');
    expect(srv!.logs()).toContain('incoming request'); // requests were logged (without their credentials)
    expect(formsIn(srv!.logs())).toEqual([]);
  });
});
