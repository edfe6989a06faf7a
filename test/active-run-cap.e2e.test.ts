/**
 * The active-run cap of the real service process (issue #20 item 5): 200 triggers with
 * `SWITCHYARD_MAX_ACTIVE_RUNS=4` and a step that takes 40 ms, the process killed with SIGKILL
 * mid-way and started again on the same DATA_DIR: every run completes, at most 4 steps are ever in
 * flight at once, each run's step executes once (only a call cut off by the kill runs again), and
 * runs start in trigger order (up to the runs executing side by side). Concurrency and executions are counted by a webhook outside the
 * processes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { StepWebhook, writeStepRegistry } from './support/step-webhook.ts';

const TOTAL = 200;
const CAP = 4;
const processes: ServerProcess[] = [];
let dir = '';
const webhook = new StepWebhook(() => 40);

afterAll(async () => {
  for (const server of processes) server.kill();
  await webhook.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the active-run cap of the service process', () => {
  it('completes 200 triggers with a cap of 4 across a kill -9, at most 4 at once, each step once, in trigger order', async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-cap-'));
    const env = {
      DATA_DIR: join(dir, 'data'),
      SWITCHYARD_EXECUTORS: await writeStepRegistry(join(dir, 'executors.json'), await webhook.listen()),
      SWITCHYARD_MAX_ACTIVE_RUNS: String(CAP),
      // Runs cut off by the kill are taken over once their 3 s lease ran out.
      SWITCHYARD_LEASE_MS: '3000',
      SWITCHYARD_RECOVERY_INTERVAL_MS: '200',
      SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: '0',
    };
    const first = await startServerProcess(env);
    processes.push(first);
    const { id: workflowId } = await first.call('POST', '', {
      name: 'capped',
      canvas: { viewport: {} },
      nodes: [{ name: 'work', nodeType: 'step', executorKey: 'work', config: { step: 'work', n: { $cel: 'input.n' } } }],
    });
    await first.call('POST', `/${workflowId}/toggle`, { enabled: true });
    const runIds: string[] = [];
    for (let n = 0; n < TOTAL; n++) runIds.push((await first.call('POST', `/${workflowId}/runs`, { initialInput: { n } })).runId);
    const queued = (await first.call('GET', `/${workflowId}/runs?status=pending&perPage=1&includeNodeRuns=false`)).pagination.total as number;
    expect(queued).toBeGreaterThan(TOTAL / 4); // the cap keeps most of them waiting
    await webhook.until(() => webhook.calls.length >= TOTAL / 2, 'half the runs to start');
    first.kill();
    await first.exited;
    const beforeKill = webhook.calls.length;
    expect(beforeKill).toBeLessThan(TOTAL);

    const second = await startServerProcess(env);
    processes.push(second);
    const deadline = Date.now() + 40_000;
    for (;;) {
      const total = (await second.call('GET', `/${workflowId}/runs?status=completed&perPage=1&includeNodeRuns=false`)).pagination.total as number;
      if (total === TOTAL) break;
      if (Date.now() > deadline) throw new Error(`only ${total} of ${TOTAL} runs completed`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(webhook.maxInFlight).toBeLessThanOrEqual(CAP);
    expect(webhook.maxInFlight).toBe(CAP);

    // Each run's step ran once; only calls in flight at the kill (at most CAP: cut off, or answered
    // before the process could record it) ran a second time, after the restart.
    const callsPerRun = Array.from({ length: TOTAL }, (_, n) => webhook.callsOf('work', n).length);
    expect(callsPerRun.every((count) => count === 1 || count === 2)).toBe(true);
    const repeated = callsPerRun.flatMap((count, n) => (count === 2 ? [n] : []));
    expect(repeated.length).toBeLessThanOrEqual(CAP);
    const indexOf = (n: number) => webhook.calls.flatMap((call, i) => (call.body['n'] === n ? [i] : []));
    for (const n of repeated) expect(indexOf(n)[0]! < beforeKill && indexOf(n)[1]! >= beforeKill).toBe(true);

    // Trigger order: each process claims waiting runs oldest first, and the first process started
    // older runs than the second. Runs claimed one after the other execute side by side, so their
    // steps may reach the webhook a few places apart: less than CAP. (A run claimed just before the
    // kill, its step not yet called, continues only when its lease ran out: its `run.started` or
    // `run.resumed`, written by the second process, says `takenOverFrom`; it is left out of the order.)
    const firstCalls = [...new Set(webhook.calls.map((call) => call.body['n'] as number))];
    const started = await Promise.all(
      runIds.map(async (runId) => {
        const { events } = await second.call('GET', `/${workflowId}/runs/${runId}/events?types=run.started,run.resumed`);
        return { owner: events[0].payload.owner as string, takenOver: events.some((event: any) => typeof event.payload.takenOverFrom === 'string') };
      }),
    );
    const startedBy = started.map((run) => run.owner);
    const owners = [...new Set(startedBy)];
    expect(owners).toHaveLength(2);
    const takenOver = started.flatMap((run, n) => (run.takenOver ? [n] : []));
    expect(takenOver.length).toBeLessThanOrEqual(CAP);
    const [byFirst, bySecond] = owners.map((owner) => firstCalls.filter((n) => startedBy[n] === owner && !started[n]!.takenOver));
    for (const order of [byFirst!, bySecond!]) {
      const sorted = [...order].sort((a, b) => a - b);
      const displaced = order.filter((n, i) => Math.abs(n - sorted[i]!) >= CAP);
      expect(displaced).toEqual([]);
    }
    expect(Math.max(...byFirst!)).toBeLessThan(Math.min(...bySecond!));
    expect(byFirst!.length + bySecond!.length + takenOver.length).toBe(TOTAL);
    await second.stop();
  }, 90_000);
});
