/**
 * The active-run cap under load (issue #20 item 5): 1,000 triggers of a one-step workflow whose
 * step waits 50 ms at a webhook of this bench, with `SWITCHYARD_MAX_ACTIVE_RUNS=4`, while one
 * reader reads the detail of a triggered run over and over (one request at a time). Measured twice:
 * the app and services in this process (in-memory store), and the service started as by
 * `npm start` (its own process, store on disk) after a warm-up of reads.
 *
 * Prints, for each: p50/p99 of GET run detail during the load, the time from the first trigger to
 * the last run completed, and the most steps in flight at once (counted by the webhook: at most
 * the cap). Bounded: the runs must complete within 120 s.
 *
 * `npm run bench:active-runs [-- --quick]` (`--quick`: 200 runs)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig, openServices } from '@switchyard/api';
import { openEmbeddedStore } from '@switchyard/store';
import { startServerProcess } from '../test/support/server-process.ts';
import { StepWebhook, writeStepRegistry } from '../test/support/step-webhook.ts';
import { startBenchApp } from './support.ts';
import { percentileOf } from './suite/stats.ts';
import { json } from './targets.ts';

const QUICK = process.argv.includes('--quick');
const RUNS = QUICK ? 200 : 1_000;
const CAP = 4;
const STEP_MS = 50;
const WARM_UP = QUICK ? 200 : 1_000;
const COMPLETE_WITHIN_MS = 120_000;

/** What one target measured. */
interface Figures {
  target: string;
  readP50Ms: number;
  readP99Ms: number;
  reads: number;
  totalSeconds: number;
  maxInFlight: number;
}

/** A service to load: its base URL and how to stop it. */
interface Target {
  baseUrl: string;
  stop(): Promise<void>;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-active-'));
  const results: Figures[] = [];
  try {
    for (const [name, open] of [
      ['in-process (memory store)', inProcess],
      ['npm start (own process, store on disk)', asProcess],
    ] as const) {
      const webhook = new StepWebhook(() => STEP_MS);
      const registry = await writeStepRegistry(join(dir, `executors-${results.length}.json`), await webhook.listen());
      const env = {
        DATA_DIR: join(dir, `data-${results.length}`),
        SWITCHYARD_EXECUTORS: registry,
        SWITCHYARD_MAX_ACTIVE_RUNS: String(CAP),
        SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: '0',
        SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE: '0',
      };
      const target = await open(env);
      try {
        results.push({ target: name, ...(await load(target, webhook)) });
      } finally {
        await target.stop();
        await webhook.close();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`\nActive-run cap ${CAP}, ${RUNS} runs of one ${STEP_MS} ms step (Node ${process.versions.node}${QUICK ? ', --quick' : ''})\n`);
  console.log('| target | GET run detail p50 ms | p99 ms | reads | total s | most steps in flight |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const f of results) {
    console.log(`| ${f.target} | ${f.readP50Ms.toFixed(2)} | ${f.readP99Ms.toFixed(2)} | ${f.reads} | ${f.totalSeconds.toFixed(1)} | ${f.maxInFlight} |`);
  }
}

/** The composition root and the real app in this process, store in memory, recovery on. */
async function inProcess(env: Record<string, string>): Promise<Target> {
  const store = await openEmbeddedStore({ dataDir: null });
  const services = await openServices(loadConfig(env), pino({ level: 'silent' }), { store, background: { recovery: true, sweeper: false, retention: false } });
  const app = await startBenchApp({ ...services, dataDir: null });
  return {
    baseUrl: app.baseUrl,
    async stop() {
      await app.close();
      await services.close();
    },
  };
}

/** The service as `npm start` runs it, in a process of its own. */
async function asProcess(env: Record<string, string>): Promise<Target> {
  const server = await startServerProcess(env);
  return { baseUrl: server.baseUrl, stop: () => server.stop() };
}

/** Creates the workflow, warms up, then triggers {@link RUNS} runs while reading run details until all completed. */
async function load(target: Target, webhook: StepWebhook): Promise<Omit<Figures, 'target'>> {
  const api = (method: string, path: string, body?: unknown) => json(target.baseUrl, method, path, body);
  const { id: workflowId } = await api('POST', '/api/v1/workflows', {
    name: 'bench active runs',
    canvas: { viewport: { x: 0, y: 0, zoom: 1 } },
    nodes: [{ name: 'slow', nodeType: 'step', executorKey: 'work', config: { step: 'work', n: { $cel: 'input.n' } } }],
  });
  await api('POST', `/api/v1/workflows/${workflowId}/toggle`, { enabled: true });
  const first = (await api('POST', `/api/v1/workflows/${workflowId}/runs`, { initialInput: { n: -1 } })).runId as string;
  for (let i = 0; i < WARM_UP; i++) await api('GET', `/api/v1/runs/${first}`);
  await until(async () => (await api('GET', `/api/v1/runs/${first}`)).status === 'completed', 10_000);

  const runIds: string[] = [first];
  const startedAt = performance.now();
  let done = false;
  const latencies: number[] = [];
  const reader = (async () => {
    for (let i = 0; !done; i++) {
      const runId = runIds[i % runIds.length]!;
      const t0 = performance.now();
      await api('GET', `/api/v1/runs/${runId}`);
      latencies.push(performance.now() - t0);
    }
  })();
  for (let n = 0; n < RUNS; n++) runIds.push((await api('POST', `/api/v1/workflows/${workflowId}/runs`, { initialInput: { n } })).runId as string);
  const completed = async () =>
    (await api('GET', `/api/v1/runs?workflowId=${workflowId}&status=completed&perPage=1&includeNodeRuns=false`)).pagination.total === RUNS + 1;
  try {
    await until(completed, COMPLETE_WITHIN_MS);
  } finally {
    done = true;
    await reader;
  }
  const totalSeconds = (performance.now() - startedAt) / 1000;
  return { readP50Ms: percentileOf(latencies, 50), readP99Ms: percentileOf(latencies, 99), reads: latencies.length, totalSeconds, maxInFlight: webhook.maxInFlight };
}

/** Polls `predicate` every 50 ms; throws after `withinMs`. */
async function until(predicate: () => Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await predicate())) {
    if (performance.now() > deadline) throw new Error(`not done within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

await main();
