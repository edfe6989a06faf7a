/**
 * What tracing costs the engine (docs/operations/tracing.md): a chain of 1,000 `echo` steps, with
 * tracing off and on, measured twice:
 *
 * - **in-process**: the runner's test harness on the in-memory embedded store, no HTTP. Off: no SDK
 *   registered (the API's no-ops); on: the SDK registered as the service registers it
 *   (AsyncLocalStorage context, W3C propagator) with a BatchSpanProcessor whose exporter drops the
 *   spans. Each mode in a fresh child process of its own (off, then on).
 * - **npm start**: the service as users start it (`apps/api/src/server.ts` through tsx, its own
 *   process, embedded store on disk in a temporary DATA_DIR, default log level), two processes up
 *   at once: one without an OTLP endpoint (off), one with `OTEL_EXPORTER_OTLP_ENDPOINT` at an
 *   OTLP/HTTP receiver in this process that answers 200 to `POST /v1/traces` and counts requests,
 *   bytes and spans (the SDK's default batch settings). The workflow is created, enabled and
 *   triggered over the REST API; a run's wall time is from the trigger request until a poll of its
 *   detail (every {@link POLL_MS} ms) sees it completed; the run's own time (finishedAt −
 *   startedAt, the service's clock) is printed too. The spans are counted after the services
 *   stopped (the last batch is exported at shutdown).
 *
 * Each mode: one warm-up run, then the median of {@link RUNS} runs; the service's runs alternate
 * between the two processes (off-on, on-off, ...) so that a change of the machine's load hits both
 * alike. Prints one table. Bounded: each run must end within
 * {@link RUN_TIMEOUT_MS}, the whole bench within {@link BENCH_TIMEOUT_MS} (then it kills the service
 * processes it started and exits 1); the processes are stopped at the end, on error too.
 *
 * `npm run bench:tracing`
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { context, propagation, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { openHarness } from '../packages/runner/src/testing/harness.ts';
import { startServerProcess, type ServerProcess } from '../test/support/server-process.ts';
import { echoStep } from './support.ts';

const STEPS = 1_000;
const RUNS = 5;
/** Poll interval of a run's detail while it runs, ms. */
const POLL_MS = 20;
/** Longest a run may take, ms. */
const RUN_TIMEOUT_MS = 120_000;
/** Longest a service may take to stop after SIGTERM before it is killed, ms. */
const STOP_TIMEOUT_MS = 15_000;
/** Longest an in-process child may take, ms. */
const CHILD_TIMEOUT_MS = 120_000;
/** Longest the whole bench may take, ms. */
const BENCH_TIMEOUT_MS = 15 * 60_000;

/** One row of the table. */
interface Row {
  where: string;
  tracing: 'off' | 'on';
  /** Median wall time of a run, ms. */
  ms: number;
  /** Shortest wall time of a run, ms (the least disturbed by other work on the machine). */
  bestMs: number;
  /** Median of the runs' own time (finishedAt − startedAt), ms; null in-process. */
  ownMs: number | null;
  /** Spans the exporter got: dropped in-process, received over OTLP by the service's receiver; null when off. */
  spans: string | null;
}

/** Service processes started and not yet stopped (killed on error or timeout). */
const running = new Set<ServerProcess>();

/** Drops every span (counts them). */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: ExportResultCode }) => void): void {
    this.spans += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

/** The median of `values` (the upper one of an even count). */
function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** One mode's measured run: its wall time and the run's own time (null in-process), ms. */
interface Timed {
  wall: number;
  own: number | null;
}

/** What {@link interleaved} measured: the {@link RUNS} times of each mode, ms. */
interface Pairs {
  off: Timed[];
  on: Timed[];
}

/**
 * One warm-up run of each mode, then {@link RUNS} pairs alternating which mode goes first
 * (off-on, on-off, ...), so that a change of the machine's load hits both modes alike.
 */
async function interleaved(run: (mode: 'off' | 'on') => Promise<Timed>): Promise<Pairs> {
  await run('off');
  await run('on');
  const pairs: Pairs = { off: [], on: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const mode of i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) pairs[mode].push(await run(mode));
  }
  return pairs;
}

/**
 * In a child process of its own (`--in-process off|on`): the chain in one harness, one warm-up run
 * then {@link RUNS} measured ones; tracing on registers the SDK first with a dropping exporter.
 * Prints `{ times, spans }` (wall times in ms) as JSON on stdout.
 */
async function inProcessChild(mode: 'off' | 'on'): Promise<void> {
  const exporter = new DroppingExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 100_000, maxExportBatchSize: 2_048 })] });
  if (mode === 'on') provider.register();
  const h = await openHarness();
  const times: number[] = [];
  try {
    const wf = await h.createWorkflow(Array.from({ length: STEPS }, (_, i) => ({ name: `s${i}`, nodeType: 'step' as const, executorKey: 'echo', config: { i } })));
    for (let i = 0; i <= RUNS; i++) {
      const started = performance.now();
      const run = await h.runToEnd(wf.id);
      if (run.status !== 'completed') throw new Error(`run ${run.status}`);
      if (i > 0) times.push(performance.now() - started);
    }
  } finally {
    await h.close();
    await provider.shutdown();
  }
  console.log(JSON.stringify({ times, spans: exporter.spans }));
}

/** Runs {@link inProcessChild} for `mode` in a child process (killed after {@link CHILD_TIMEOUT_MS}); its JSON. */
function runInProcessChild(mode: 'off' | 'on'): Promise<{ times: number[]; spans: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--in-process', mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0) resolve(JSON.parse(line));
      else reject(new Error(`in-process ${mode}: exited with ${code ?? signal}:\n${out.slice(-2_000)}`));
    });
  });
}

/**
 * The two in-process rows, each mode in a fresh process of its own (off first): switching the SDK
 * on and off within one process would make the engine's tracing call sites polymorphic, which a
 * service never sees.
 */
async function inProcessRows(): Promise<Row[]> {
  const off = await runInProcessChild('off');
  const on = await runInProcessChild('on');
  const where = 'in-process (harness, memory store, no HTTP)';
  return [
    { where, tracing: 'off', ms: median(off.times), bestMs: Math.min(...off.times), ownMs: null, spans: null },
    { where, tracing: 'on', ms: median(on.times), bestMs: Math.min(...on.times), ownMs: null, spans: `${on.spans} (dropped by the exporter)` },
  ];
}

/** An OTLP/HTTP traces receiver on 127.0.0.1 that answers 200 and counts what it got. */
interface Receiver {
  /** `http://127.0.0.1:<port>` (the OTLP base URL: spans arrive at `/v1/traces`). */
  baseUrl: string;
  requests: number;
  bytes: number;
  spans: number;
  /** Bodies that were not OTLP JSON (their spans are not counted). */
  unparsed: number;
  close(): Promise<void>;
}

/** Starts a {@link Receiver}; rejects with the server's listen errors. */
async function startReceiver(): Promise<Receiver> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      receiver.requests++;
      receiver.bytes += raw.length;
      try {
        const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        const data = JSON.parse(body.toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
        for (const rs of data.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) receiver.spans += ss.spans?.length ?? 0;
      } catch {
        receiver.unparsed++;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`unexpected receiver address ${String(address)}`);
  const receiver: Receiver = {
    baseUrl: `http://127.0.0.1:${address.port}`,
    requests: 0,
    bytes: 0,
    spans: 0,
    unparsed: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return receiver;
}

/** Stops `server` (SIGTERM, then SIGKILL after {@link STOP_TIMEOUT_MS}) and waits until it has exited. */
async function stopServer(server: ServerProcess): Promise<void> {
  const stopped = await Promise.race([server.stop().then(() => true), delay(STOP_TIMEOUT_MS).then(() => false)]);
  if (!stopped) {
    server.kill();
    await Promise.race([server.exited, delay(5_000)]);
  }
  running.delete(server);
}

/** A service process started for {@link serviceRows} and the chain workflow created on it. */
interface Service {
  server: ServerProcess;
  workflowId: string;
}

/**
 * Starts the service as `npm start` runs it (DATA_DIR `dataDir`, rate limits off, `env` added),
 * creates the chain over the REST API and enables it. Rejects with the start's or the API's errors.
 */
async function startService(dataDir: string, name: string, env: Record<string, string>): Promise<Service> {
  const server = await startServerProcess({
    DATA_DIR: dataDir,
    SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: '0',
    SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE: '0',
    ...env,
  });
  running.add(server);
  const { id } = await server.call('POST', '', {
    name,
    canvas: { viewport: { x: 0, y: 0, zoom: 1 } },
    nodes: Array.from({ length: STEPS }, (_, i) => echoStep(`s${i}`, { i })),
  });
  await server.call('POST', `/${id}/toggle`, { enabled: true });
  return { server, workflowId: id };
}

/** Triggers one run of the chain on `service` and polls its detail until it ended; throws unless it completed. */
async function timedRun({ server, workflowId }: Service): Promise<Timed> {
  const started = performance.now();
  const { runId } = await server.call('POST', `/${workflowId}/runs`, { triggerSource: 'manual', initialInput: {} });
  const run = await untilEnded(() => server.call('GET', `/${workflowId}/runs/${runId}`));
  const wall = performance.now() - started;
  if (run.status !== 'completed') throw new Error(`run ${runId} ${run.status}: ${JSON.stringify(run.error ?? null).slice(0, 300)}`);
  return { wall, own: Date.parse(run.finishedAt) - Date.parse(run.startedAt) };
}

/**
 * The two `npm start` rows: two service processes up at once, one with tracing off, one exporting
 * to a {@link Receiver}; their runs alternate as {@link interleaved} says (one runs while the other
 * idles). The spans are counted after both stopped.
 */
async function serviceRows(dir: string): Promise<Row[]> {
  const receiver = await startReceiver();
  let pairs: Pairs;
  try {
    const services: Partial<Record<'off' | 'on', Service>> = {};
    try {
      services.off = await startService(join(dir, 'data-off'), 'bench tracing off', {});
      services.on = await startService(join(dir, 'data-on'), 'bench tracing on', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.baseUrl });
      pairs = await interleaved((mode) => timedRun(services[mode]!));
    } finally {
      for (const service of Object.values(services)) await stopServer(service.server);
    }
  } finally {
    await receiver.close();
  }
  const where = 'npm start (own process, store on disk, REST)';
  const row = (mode: 'off' | 'on', spans: string | null): Row => ({
    where,
    tracing: mode,
    ms: median(pairs[mode].map((t) => t.wall)),
    bestMs: Math.min(...pairs[mode].map((t) => t.wall)),
    ownMs: median(pairs[mode].map((t) => t.own!)),
    spans,
  });
  const received = `${receiver.spans} in ${receiver.requests} requests, ${(receiver.bytes / 1e6).toFixed(1)} MB${receiver.unparsed > 0 ? ` (${receiver.unparsed} bodies not OTLP JSON)` : ''}`;
  return [row('off', null), row('on', received)];
}

/** Polls `read` every {@link POLL_MS} ms until the run it returns has ended; throws after {@link RUN_TIMEOUT_MS}. */
async function untilEnded(read: () => Promise<any>): Promise<any> {
  const deadline = performance.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const run = await read();
    if (['completed', 'failed', 'cancelled'].includes(run.status)) return run;
    if (performance.now() > deadline) throw new Error(`run not ended within ${RUN_TIMEOUT_MS} ms (status ${run.status})`);
    await delay(POLL_MS);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Kills (SIGKILL) every child process of this one: the service processes started, and one whose
 * start timed out (startServerProcess does not hand that one back). Linux /proc only; elsewhere
 * only the started ones.
 */
function killChildren(): void {
  for (const server of running) server.kill();
  running.clear();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  for (const pid of entries) {
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after its ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

function overhead(on: Row, off: Row): string {
  const percent = (on.ms / off.ms - 1) * 100;
  return `${percent >= 0 ? '+' : ''}${percent.toFixed(1)} %`;
}

async function main(): Promise<void> {
  // The service must see only the endpoint this bench sets.
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_SDK_DISABLED']) delete process.env[name];
  const load = loadavg()[0]!;
  const rows = await inProcessRows();
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-tracing-'));
  try {
    rows.push(...(await serviceRows(dir)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(
    `\n${STEPS}-step echo chain, median of ${RUNS} runs after 1 warm-up (Node ${process.version}, ${cpus().length} cores, ` +
      `load average ${load.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end)\n`,
  );
  console.log(`| where | tracing | ms per run | µs per step | overhead | best of ${RUNS} ms | run's own ms | spans exported |`);
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const [i, row] of rows.entries()) {
    const base = rows[i - (i % 2)]!;
    console.log(
      `| ${row.where} | ${row.tracing} | ${row.ms.toFixed(0)} | ${((row.ms * 1000) / STEPS).toFixed(0)} | ${row.tracing === 'on' ? overhead(row, base) : '—'} | ${row.bestMs.toFixed(0)} | ` +
        `${row.ownMs === null ? '—' : row.ownMs.toFixed(0)} | ${row.spans ?? '—'} |`,
    );
  }
  console.log(`\nspans expected with tracing on: ${(RUNS + 1) * (2 * STEPS + 1)} (${RUNS + 1} runs × (1 run + ${STEPS} nodes + ${STEPS} attempts))`);
}

const childMode = process.argv.includes('--in-process') ? process.argv[process.argv.indexOf('--in-process') + 1] : undefined;
if (childMode !== undefined) {
  if (childMode !== 'off' && childMode !== 'on') throw new Error(`--in-process must be off or on, got ${childMode}`);
  await inProcessChild(childMode);
  process.exit(0);
}

const watchdog = setTimeout(() => {
  console.error(`bench:tracing: not done within ${BENCH_TIMEOUT_MS / 60_000} min`);
  killChildren();
  process.exit(1);
}, BENCH_TIMEOUT_MS);
watchdog.unref();
process.once('SIGINT', () => {
  killChildren();
  process.exit(130);
});

try {
  await main();
} catch (error) {
  killChildren();
  console.error(error);
  process.exitCode = 1;
}
