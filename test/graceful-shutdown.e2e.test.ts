/**
 * Graceful shutdown of the real service process (issue #20 item 4): on SIGTERM it stops claiming,
 * lets executing nodes finish within `SWITCHYARD_SHUTDOWN_GRACE_MS`, aborts what remains,
 * releases every lease and exits 0; a second process on the same DATA_DIR continues the run at
 * once (the lease here lasts 60 s, so a lease left behind would stall it visibly), without running
 * a finished step again. Step executions are counted by a webhook outside both processes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { StepWebhook, writeStepRegistry } from './support/step-webhook.ts';

const dirs: string[] = [];
const processes: ServerProcess[] = [];
let webhook: StepWebhook | undefined;

afterEach(async () => {
  for (const server of processes.splice(0)) server.kill();
  await webhook?.close();
  webhook = undefined;
});
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A fresh DATA_DIR and a registry whose `work` executor calls `hook`; the environment of the processes. */
async function setUp(hook: StepWebhook, graceMs: number): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-shutdown-'));
  dirs.push(dir);
  const registry = await writeStepRegistry(join(dir, 'executors.json'), await hook.listen());
  return {
    DATA_DIR: join(dir, 'data'),
    SWITCHYARD_EXECUTORS: registry,
    LOG_LEVEL: 'info',
    SWITCHYARD_LEASE_MS: '60000',
    SWITCHYARD_SHUTDOWN_GRACE_MS: String(graceMs),
  };
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServerProcess(env);
  processes.push(server);
  return server;
}

/** Saves and enables a workflow of `nodes`; returns its id. */
async function enabledWorkflow(server: ServerProcess, nodes: unknown[]): Promise<string> {
  const { id } = await server.call('POST', '', { name: `shutdown ${Date.now()}`, canvas: { viewport: {} }, nodes });
  await server.call('POST', `/${id}/toggle`, { enabled: true });
  return id as string;
}

/** Polls the run until it has one of `statuses` (bounded: 15 s of real time). */
async function untilStatus(server: ServerProcess, workflowId: string, runId: string, statuses: string[]): Promise<any> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const run = await server.call('GET', `/${workflowId}/runs/${runId}`);
    if (statuses.includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run is ${run.status}, expected ${statuses.join(' or ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const workStep = (step: string) => ({ name: step, nodeType: 'step', executorKey: 'work', config: { step } });

describe('graceful shutdown of the service process', () => {
  it('lets the executing step finish within the grace, exits 0, and a second process finishes the run at once without running it again', async () => {
    webhook = new StepWebhook((body) => (body['step'] === 'one' ? 1_500 : 0));
    const env = await setUp(webhook, 5_000);
    const first = await start(env);
    const workflowId = await enabledWorkflow(first, [workStep('one'), workStep('two')]);
    const { runId } = await first.call('POST', `/${workflowId}/runs`, {});
    await webhook.until(() => webhook!.callsOf('one').length === 1, 'step one to start');

    const signalledAt = Date.now();
    first.signal('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    // It waited for step one (1.5 s), which finished within the grace (not aborted), and exited
    // before its exit timer (grace + 5 s) would have ended it.
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    expect(webhook.callsOf('one')).toMatchObject([{ abandoned: false }]);
    expect(first.logs()).not.toMatch(/shutdown did not finish in time/);
    expect(webhook.callsOf('two')).toHaveLength(0);
    expect(first.logs()).toMatch(/run released at shutdown/);

    const second = await start(env);
    // The lease was released: the recovery scan at start claims the run, no 60 s wait for the lease.
    const run = await untilStatus(second, workflowId, runId, ['completed', 'failed']);
    expect(run.status).toBe('completed');
    expect(webhook.callsOf('one')).toHaveLength(1);
    expect(webhook.callsOf('two')).toHaveLength(1);
    expect(Object.fromEntries(run.nodeRuns.map((n: { nodeName: string; status: string; attempt: number }) => [n.nodeName, [n.status, n.attempt]]))).toEqual({
      one: ['completed', 1],
      two: ['completed', 1],
    });
    await second.stop();
  }, 60_000);

  it('aborts a step longer than the grace at the grace; a second process runs that step again and completes', async () => {
    // The first call of step one would take 30 s; later calls answer at once.
    webhook = new StepWebhook((body, earlier) => (body['step'] === 'one' && !earlier.some((c) => c.body['step'] === 'one') ? 30_000 : 0));
    const env = await setUp(webhook, 1_000);
    const first = await start(env);
    const workflowId = await enabledWorkflow(first, [workStep('one'), workStep('two')]);
    const { runId } = await first.call('POST', `/${workflowId}/runs`, {});
    await webhook.until(() => webhook!.callsOf('one').length === 1, 'step one to start');

    const signalledAt = Date.now();
    first.signal('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    // About at the grace (1 s), far before the step would have ended (30 s), and not by the exit timer.
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    expect(first.logs()).toMatch(/aborting executions still under way/);
    expect(first.logs()).not.toMatch(/shutdown did not finish in time/);
    await webhook.until(() => webhook!.callsOf('one')[0]!.abandoned, 'the aborted call to be abandoned');

    const second = await start(env);
    const run = await untilStatus(second, workflowId, runId, ['completed', 'failed']);
    expect(run.status).toBe('completed');
    expect(webhook.callsOf('one')).toHaveLength(2);
    expect(webhook.callsOf('two')).toHaveLength(1);
    await second.stop();
  }, 60_000);

  it('ends an open event stream at shutdown and still exits 0', async () => {
    webhook = new StepWebhook();
    const env = await setUp(webhook, 5_000);
    const first = await start(env);
    const workflowId = await enabledWorkflow(first, [{ name: 'gate', nodeType: 'step', executorKey: 'echo', humanReview: { requiresConfirmation: true } }]);
    const { runId } = await first.call('POST', `/${workflowId}/runs`, {});
    await untilStatus(first, workflowId, runId, ['awaiting_approval']);
    const stream = await fetch(`${first.baseUrl}/api/v1/workflows/${workflowId}/runs/${runId}/events/stream`, { headers: { accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/event: run\.started/);

    first.signal('SIGTERM');
    // The stream ends (the client reads to its end) and the process exits.
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
    expect(await first.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});
