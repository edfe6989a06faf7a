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
import pino from 'pino';
import { normalizeDefinition, type WorkflowNodeInput } from '@switchyard/domain';
import { openEmbeddedStore, openRepositories } from '@switchyard/store';
import { CelEngine, RunEngine, createExecutorRegistry, definitionChecks } from '@switchyard/runner';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' }, concurrency: { type: 'string', default: '20' } } });
const RUNS = Number(values.runs);
const CONCURRENCY = Number(values.concurrency);

const echo = (name: string, config: Record<string, unknown> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'builtin.echo', config });
const NODES: WorkflowNodeInput[] = [
  echo('A', { customer: { $cel: 'input.customer' } }),
  { name: 'P', nodeType: 'parallel', children: [echo('P1'), echo('P2'), echo('P3')] },
  { name: 'C', nodeType: 'condition', conditionCel: "input.kind == 'x'", trueSteps: [echo('T1'), echo('T2')], falseSteps: [echo('F1')] },
  { name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 3 }, children: [echo('body', { i: { $cel: 'loop_state.iteration' } })] },
];

async function measure(label: string, dataDir: string | null): Promise<void> {
  const store = await openEmbeddedStore({ dataDir });
  const repos = await openRepositories(store);
  const executors = createExecutorRegistry({}, { baseDir: tmpdir() });
  const cel = new CelEngine();
  const engine = new RunEngine({ repos, executors, cel, logger: pino({ level: 'silent' }) });
  const nodes = normalizeDefinition(NODES, definitionChecks(executors, cel));
  const workflow = await repos.definitions.create({ name: 'bench', description: null, canvas: { viewport: { x: 0, y: 0, zoom: 1 } }, nodes }, new Date());

  const started = performance.now();
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < RUNS) {
      next++;
      const t0 = performance.now();
      const run = await repos.runs.create(
        {
          workflowDefinitionId: workflow.id,
          workflowVersion: 1,
          triggerSource: 'bench',
          initialInput: { customer: 'c-1', kind: 'x' },
          definitionSnapshot: { name: 'bench', description: null, canvas: workflow.canvas, nodes },
          parentRunId: null,
          resolvedDependencies: [],
          triggeringUserId: null,
          triggeringUsername: null,
          triggeringScopes: [],
        },
        new Date(),
      );
      await engine.start(run.id);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  const { items, total } = await repos.runs.list({ workflowId: workflow.id, status: 'completed' }, 1, 1);
  if (total !== RUNS) throw new Error(`expected ${RUNS} completed runs, found ${total}`);
  const nodeRuns = (await repos.nodeRuns.listByRun(items[0]!.id)).length;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
  console.log(
    `${label.padEnd(22)} runs=${RUNS} concurrency=${CONCURRENCY} node runs/run=${nodeRuns}  ` +
      `${(RUNS / seconds).toFixed(1)} runs/s  ${((RUNS * nodeRuns) / seconds).toFixed(0)} node runs/s  run latency p50=${pct(50)} ms p99=${pct(99)} ms`,
  );
  await engine.close();
  await executors.close();
  await store.close();
}

await measure('embedded, in memory', null);
const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-'));
await measure('embedded, journal', dir);
await rm(dir, { recursive: true, force: true });
