/**
 * Engine throughput on the embedded store: how many runs and node runs per second one process
 * executes with built-in executors (no I/O besides the store), in memory and with the journal on
 * disk. Prints figures; asserts nothing.
 *
 *   npm run bench:runner [-- --runs 200 --concurrency 20]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { WorkflowNodeInput } from '@switchyard/domain';
import { boundedInteger, createBenchRun, createBenchWorkflow, echoStep, openBenchServices, percentile } from './support.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' }, concurrency: { type: 'string', default: '20' } } });
const RUNS = boundedInteger('runs', values.runs, 1, 100_000);
const CONCURRENCY = boundedInteger('concurrency', values.concurrency, 1, 1_000);

const NODES: WorkflowNodeInput[] = [
  echoStep('A', { customer: { $cel: 'input.customer' } }),
  { name: 'P', nodeType: 'parallel', children: [echoStep('P1'), echoStep('P2'), echoStep('P3')] },
  { name: 'C', nodeType: 'condition', conditionCel: "input.kind == 'x'", trueSteps: [echoStep('T1'), echoStep('T2')], falseSteps: [echoStep('F1')] },
  { name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 3 }, children: [echoStep('body', { i: { $cel: 'loop_state.iteration' } })] },
];

async function measure(label: string, dataDir: string | null): Promise<void> {
  const services = await openBenchServices({ dataDir });
  const { repos, engine } = services;
  const workflow = await createBenchWorkflow(services, 'bench', NODES);

  const started = performance.now();
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < RUNS) {
      next++;
      const t0 = performance.now();
      await engine.start(await createBenchRun(services, workflow, { customer: 'c-1', kind: 'x' }));
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  const { items, total } = await repos.runs.list({ workflowId: workflow.id, status: 'completed' }, 1, 1);
  if (total !== RUNS) throw new Error(`expected ${RUNS} completed runs, found ${total}`);
  const nodeRuns = (await repos.nodeRuns.listByRun(items[0]!.id)).length;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => percentile(latencies, p).toFixed(1);
  console.log(
    `${label.padEnd(22)} runs=${RUNS} concurrency=${CONCURRENCY} node runs/run=${nodeRuns}  ` +
      `${(RUNS / seconds).toFixed(1)} runs/s  ${((RUNS * nodeRuns) / seconds).toFixed(0)} node runs/s  run latency p50=${pct(50)} ms p99=${pct(99)} ms`,
  );
  await services.close();
}

await measure('embedded, in memory', null);
const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-'));
await measure('embedded, journal', dir);
await rm(dir, { recursive: true, force: true });
