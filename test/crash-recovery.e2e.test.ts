/**
 * The service as users run it (`npm start` = tsx apps/api/src/server.ts) on the embedded store,
 * killed with SIGKILL in the middle of a run and started again on the same DATA_DIR: nothing
 * acknowledged is lost and the run finishes by itself, reusing what was already done.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];
const dataDirs: string[] = [];
let dataDir = '';

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
});

/** A fresh DATA_DIR for the next servers. */
async function freshDataDir(): Promise<void> {
  dataDir = await mkdtemp(join(tmpdir(), 'switchyard-crash-'));
  dataDirs.push(dataDir);
}

async function killHard(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}

/** Starts the real server process; resolves with its base URL once it listens. */
function startServer(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apps/api/src/server.ts')], {
    cwd: ROOT,
    // The embedded store's durability is what this test is about, also when MONGODB_URI is set. A
    // 3 s lease: short enough for a quick takeover after the kill, long enough that a heartbeat
    // delayed by a loaded machine (the full suite on 2 cores) does not lose it and run a step twice.
    env: { ...process.env, MONGODB_URI: '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', SWITCHYARD_LEASE_MS: '3000', SWITCHYARD_RECOVERY_INTERVAL_MS: '200' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, baseUrl: match[1]! });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
}

async function call(baseUrl: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/api/v1/workflows${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: response.status === 204 ? null : await response.json() };
}

describe('crash recovery of the real service process', () => {
  it('loses nothing to kill -9 and finishes the interrupted run after a restart', async () => {
    await freshDataDir();
    const first = await startServer();
    const created = await call(first.baseUrl, 'POST', '', {
      name: 'crash test',
      canvas: { viewport: {} },
      nodes: [
        { name: 'before', nodeType: 'step', executorKey: 'echo', config: { n: { $cel: 'input.n' } } },
        { name: 'slow', nodeType: 'step', executorKey: 'sleep', config: { ms: 1500 } },
        { name: 'after', nodeType: 'step', executorKey: 'echo' },
      ],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await call(first.baseUrl, 'POST', `/${id}/toggle`, { enabled: true })).status).toBe(200);
    const runId = (await call(first.baseUrl, 'POST', `/${id}/runs`, { initialInput: { n: 7 } })).body.runId as string;

    // Wait until the slow step is running, then kill the process without any chance to clean up.
    for (let i = 0; ; i++) {
      const nodes = (await call(first.baseUrl, 'GET', `/${id}/runs/${runId}/nodes`)).body.nodeRuns as Array<{ nodeName: string }>;
      if (nodes.some((n) => n.nodeName === 'slow')) break;
      if (i > 200) throw new Error('slow step never started');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await killHard(first.child);

    const second = await startServer();
    expect((await call(second.baseUrl, 'GET', `/${id}`)).body).toMatchObject({ name: 'crash test', enabled: true });
    let run: any;
    for (let i = 0; ; i++) {
      run = (await call(second.baseUrl, 'GET', `/${id}/runs/${runId}`)).body;
      if (run.status === 'completed' || run.status === 'failed') break;
      if (i > 500) throw new Error(`run did not finish after the restart: ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(run.status).toBe('completed');
    const byName = Object.fromEntries((run.nodeRuns as Array<{ nodeName: string; attempt: number; status: string }>).map((n) => [n.nodeName, n]));
    expect(byName.before).toMatchObject({ status: 'completed', attempt: 1 });
    expect(byName.slow).toMatchObject({ status: 'completed', attempt: 2 });
    expect(byName.after).toMatchObject({ status: 'completed', attempt: 1 });
    second.child.kill('SIGTERM');
  }, 60_000);

  it('keeps a paused run paused across kill -9 and a restart; resume then finishes it', async () => {
    await freshDataDir();
    const first = await startServer();
    const created = await call(first.baseUrl, 'POST', '', {
      name: 'pause survives restart',
      canvas: { viewport: {} },
      nodes: [
        { name: 'gate', nodeType: 'step', executorKey: 'echo', humanReview: { requiresConfirmation: true } },
        { name: 'after', nodeType: 'step', executorKey: 'echo' },
      ],
    });
    const id = created.body.id as string;
    await call(first.baseUrl, 'POST', `/${id}/toggle`, { enabled: true });
    const runId = (await call(first.baseUrl, 'POST', `/${id}/runs`, {})).body.runId as string;
    let run: any;
    for (let i = 0; ; i++) {
      run = (await call(first.baseUrl, 'GET', `/${id}/runs/${runId}`)).body;
      if (run.status === 'awaiting_approval') break;
      if (i > 500) throw new Error(`run never reached its gate: ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await call(first.baseUrl, 'POST', `/${id}/runs/${runId}/pause`)).body).toMatchObject({ status: 'paused' });
    // A decision taken while paused is kept, and must not make the restarted service continue the run.
    const stepId = run.pendingRequirements[0].stepId as string;
    expect((await call(first.baseUrl, 'POST', `/${id}/runs/${runId}/approve`, { stepId, resolution: 'confirm' })).status).toBe(200);
    await killHard(first.child);

    const second = await startServer();
    // Recovery scans every 200 ms with a 1 s lease here: give it several chances to (wrongly) pick the run up.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    run = (await call(second.baseUrl, 'GET', `/${id}/runs/${runId}`)).body;
    expect(run).toMatchObject({ status: 'paused', runState: { state: 'paused' } });
    expect(run.nodeRuns.map((n: { status: string }) => n.status)).toEqual(['awaiting_approval']);

    expect((await call(second.baseUrl, 'POST', `/${id}/runs/${runId}/resume`)).status).toBe(200);
    for (let i = 0; ; i++) {
      run = (await call(second.baseUrl, 'GET', `/${id}/runs/${runId}`)).body;
      if (run.status === 'completed' || run.status === 'failed') break;
      if (i > 500) throw new Error(`run did not finish after resume: ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(run.status).toBe('completed');
    expect(run.nodeRuns.map((n: { nodeName: string; status: string }) => [n.nodeName, n.status])).toEqual([
      ['gate', 'completed'],
      ['after', 'completed'],
    ]);
    second.child.kill('SIGTERM');
  }, 60_000);
});
