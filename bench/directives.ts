/**
 * Run directives over real HTTP on loopback (issue "Run control" item 1): how fast a pause stops
 * new nodes from starting and how fast a cancel aborts an in-flight MCP call and ends the run.
 * Runs are measured one at a time (no contention). Client and server share one process (and
 * event loop), so the latencies include the client's own fetch work.
 *
 * Pause: a chain of 200 steps (`sleep` 5 ms each, then a second series with `echo` steps, where a
 * node starts every ~millisecond). A run is triggered, the bench waits until a few nodes started
 * (plus a random 0-10 ms so the pause lands at any phase of a node), sends /pause, waits until
 * the run is `paused` and reads its events.
 *   pause latency = max(ack, lastStart - t0): t0 = wall clock just before sending /pause, ack =
 *   time until its 200 answer, lastStart = timestamp of the last `node.started` event the run
 *   ever recorded (event timestamps have millisecond resolution, same clock). That is the time
 *   from the request until the client both holds the answer and no node start follows any more;
 *   without a node start after t0 it is the acknowledgement time. A start in the same
 *   millisecond as t0 counts as a start after the request.
 * Two more series are controls: the same run size (200 nodes) but its first node sleeps 250 ms
 * and the pause comes 80-90 ms into it, so the engine is idle and the answer time is the
 * request's own cost; and the same on a 2-node run (the cost of the run document's size: every
 * store read or write of a run copies its definition snapshot). The bench waits for `paused` on
 * the event log (the run detail of a 200-node run costs tens of ms of CPU per GET, which would
 * skew the figures), then confirms it with GET.
 *
 * Each series also prints the median offset from t0 of the events the runs appended after t0,
 * and for the slowest requests the GC time and this process's CPU time during them (a request
 * that took far longer than the CPU it used waited for a CPU: other processes on the machine).
 *
 * Cancel: one `long-operation` step (the real MCP server `@modelcontextprotocol/server-everything`,
 * tool `trigger-long-running-operation`, 60 s). A run is triggered, the bench waits for the
 * node's `node.started` event plus a settle delay (the MCP request is then in flight), sends
 * /cancel and times it until the run is `cancelled` (the answer carries the status when the run
 * executes in this process; otherwise the run is polled), then confirms with GET.
 *   cancel latency = time from just before sending /cancel until the run was seen `cancelled`.
 *
 * One warm-up run per series is not counted. Percentiles are nearest-rank: with fewer than 100
 * runs, p99 is the maximum. Exits 1 when a run did not reach the expected status; goals (pause
 * p99 <= 50 ms, cancel p99 <= 100 ms) are reported, not enforced.
 *
 *   npm run bench:directives [-- --runs 50 --settle-ms 100 --budget-seconds 150]
 *   (the run count can also come from DIRECTIVES_BENCH_RUNS)
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from '../test/support/service.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: process.env['DIRECTIVES_BENCH_RUNS'] ?? '50' },
    'settle-ms': { type: 'string', default: '100' },
    'budget-seconds': { type: 'string', default: '150' },
  },
});

function bounded(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], got ${String(raw)}`);
  return value;
}

const RUNS = bounded('runs', values.runs, 1, 1_000);
const SETTLE_MS = bounded('settle-ms', values['settle-ms'], 0, 5_000);
const BUDGET_MS = bounded('budget-seconds', values['budget-seconds'], 5, 900) * 1_000;

const CHAIN_LENGTH = 200;
const STEP_SLEEP_MS = 5;
/** Nodes that must have started before the pause is sent. */
const STARTED_BEFORE_PAUSE = 5;
/** Control run: its first node sleeps this long, the pause comes IDLE_PAUSE_AFTER_MS (+0-10) into it. */
const IDLE_SLEEP_MS = 250;
const IDLE_PAUSE_AFTER_MS = 80;
const LONG_OPERATION_SECONDS = 60;
const PAUSE_GOAL_MS = 50;
const CANCEL_GOAL_MS = 100;
/** Longest wait for any one condition, ms. */
const WAIT_MS = 10_000;

interface EventView {
  seq: number;
  type: string;
  timestamp: string;
  payload: Record<string, unknown>;
}

const deadline = Date.now() + BUDGET_MS;

/** Garbage-collection pauses of this process (performance.now() time base), kept for the last few seconds. */
let gcPauses: Array<{ start: number; end: number }> = [];
const gcObserver = new PerformanceObserver((list) => {
  const cutoff = performance.now() - 5_000;
  gcPauses = gcPauses.filter((p) => p.end > cutoff);
  for (const entry of list.getEntries() as PerformanceEntry[]) gcPauses.push({ start: entry.startTime, end: entry.startTime + entry.duration });
});
gcObserver.observe({ entryTypes: ['gc'] });
/** Milliseconds of garbage collection within [from, to] (performance.now() time base). */
const gcWithin = (from: number, to: number) => gcPauses.reduce((ms, p) => ms + Math.max(0, Math.min(to, p.end) - Math.max(from, p.start)), 0);

/** Where the time of one timed request went (see {@link describeSlowest}). */
interface Attribution {
  ms: number;
  /** Milliseconds of GC during the request. */
  gc: number;
  /** CPU time this process (all its threads) used during the request, ms: far below `ms` means it waited for a CPU. */
  cpu: number;
  /** directive.received timestamp - t0 (the handler got through its reads and the directive write). */
  received: number;
}

/** Starts timing a request: t0 (wall clock, ms), p0 (performance.now), and the process CPU usage. */
function startTimer(): { t0: number; p0: number; cpu0: NodeJS.CpuUsage } {
  return { cpu0: process.cpuUsage(), t0: Date.now(), p0: performance.now() };
}

/** Stops the timer started at p0: the elapsed time, the GC within it and the CPU time used. */
function stopTimer(p0: number, cpu0: NodeJS.CpuUsage): { ms: number; gc: number; cpu: number } {
  const end = performance.now();
  const cpu = process.cpuUsage(cpu0);
  return { ms: end - p0, gc: gcWithin(p0, end), cpu: (cpu.user + cpu.system) / 1_000 };
}

/** The slowest samples with their GC time and longest loop delay, and the share of GC in all of them. */
function describeSlowest(samples: readonly Attribution[], count = 3): string[] {
  const slowest = [...samples].sort((a, b) => b.ms - a.ms).slice(0, count);
  const total = samples.reduce((n, s) => n + s.ms, 0);
  const gc = samples.reduce((n, s) => n + s.gc, 0);
  const cpu = samples.reduce((n, s) => n + s.cpu, 0);
  const pct = (part: number) => (total > 0 ? ((100 * part) / total).toFixed(0) : '-');
  return [
    `  timed requests: ${total.toFixed(0)} ms in all, process CPU ${cpu.toFixed(0)} ms (${pct(cpu)} %), GC ${gc.toFixed(0)} ms (${pct(gc)} %); slowest:`,
    ...slowest.map(
      (s) => `    ${fmt(s.ms).padStart(6)} ms: GC ${fmt(s.gc).padStart(5)} ms, process CPU ${fmt(s.cpu).padStart(5)} ms, directive.received at t0 + ${s.received} ms`,
    ),
  ];
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const runPath = (workflowId: string, runId: string, suffix = '') => wf(`/${workflowId}/runs/${runId}${suffix}`);

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

const fmt = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));

/** `label n= p50= p99= max=` (nearest-rank percentiles; with n < 100, p99 is the maximum). */
function describe(label: string, samples: readonly number[], goalMs?: number): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const p99 = percentile(sorted, 99);
  const goal = goalMs === undefined ? '' : `  goal p99 <= ${goalMs} ms: ${p99 <= goalMs ? 'met' : 'MISSED'}`;
  return `  ${label.padEnd(34)} n=${String(sorted.length).padStart(4)}  p50=${fmt(percentile(sorted, 50)).padStart(7)} ms  p99=${fmt(p99).padStart(7)} ms  max=${fmt(sorted.at(-1) ?? Number.NaN).padStart(7)} ms${goal}`;
}

/** Median offset from t0 (ms) of each event type the runs appended after t0, in order of that median. */
function describeOffsets(offsets: Map<string, number[]>): string[] {
  return [...offsets.entries()]
    .map(([type, ms]) => ({ type, sorted: [...ms].sort((a, b) => a - b) }))
    .sort((a, b) => percentile(a.sorted, 50) - percentile(b.sorted, 50))
    .map(({ type, sorted }) => `    ${type.padEnd(20)} in ${String(sorted.length).padStart(3)} runs  t0 + p50 ${fmt(percentile(sorted, 50)).padStart(6)} ms  max ${fmt(sorted.at(-1)!).padStart(6)} ms`);
}

function remaining(): number {
  const left = deadline - Date.now();
  if (left <= 0) throw new Error('time budget exhausted');
  return Math.min(WAIT_MS, left);
}

/** Every event of a run (paged, bounded). */
async function allEvents(svc: TestService, workflowId: string, runId: string, types?: string): Promise<EventView[]> {
  const events: EventView[] = [];
  for (let page = 0; page < 20; page++) {
    const afterSeq = events.at(-1)?.seq ?? 0;
    const query = `?afterSeq=${afterSeq}&limit=1000${types ? `&types=${types}` : ''}`;
    const response = await svc.api.get(runPath(workflowId, runId, `/events${query}`));
    if (response.status !== 200) throw new Error(`events failed: ${response.status} ${response.text.slice(0, 500)}`);
    const batch = response.body.events as EventView[];
    events.push(...batch);
    if (batch.length < 1000) return events;
  }
  throw new Error('more than 20 pages of events');
}

/** Polls until the run recorded at least `count` node starts; returns them. */
async function waitForNodeStarts(svc: TestService, workflowId: string, runId: string, count: number): Promise<EventView[]> {
  const until = Date.now() + remaining();
  for (;;) {
    const started = await allEvents(svc, workflowId, runId, 'node.started');
    if (started.length >= count) return started;
    if (Date.now() > until) throw new Error(`run ${runId}: only ${started.length}/${count} nodes started in time`);
    await sleep(5);
  }
}

/** Polls the run's events every 2 ms until one of `type` was appended (throws when the run ended instead). */
async function waitForEvent(svc: TestService, workflowId: string, runId: string, type: string): Promise<void> {
  const until = Date.now() + remaining();
  const types = [type, 'run.completed', 'run.failed', 'run.cancelled'].join(',');
  for (;;) {
    const found = await allEvents(svc, workflowId, runId, types);
    if (found.some((e) => e.type === type)) return;
    if (found.length > 0) throw new Error(`run ${runId} ended ${found[0]!.type} while waiting for ${type}`);
    if (Date.now() > until) throw new Error(`run ${runId}: no ${type} in time`);
    await sleep(2);
  }
}

/** Polls the run detail every `everyMs` until its status is `status`; returns the detail. */
async function waitForStatus(svc: TestService, workflowId: string, runId: string, status: string, everyMs: number): Promise<any> {
  const until = Date.now() + remaining();
  for (;;) {
    const response = await svc.api.get(runPath(workflowId, runId));
    if (response.status !== 200) throw new Error(`run detail failed: ${response.status} ${response.text.slice(0, 500)}`);
    if (response.body.status === status) return response.body;
    if (['completed', 'failed', 'cancelled'].includes(response.body.status)) throw new Error(`run ${runId} ended ${response.body.status} while waiting for ${status}`);
    if (Date.now() > until) throw new Error(`run ${runId} not ${status} in time; last: ${response.body.status}`);
    await sleep(everyMs);
  }
}

function addOffsets(offsets: Map<string, number[]>, events: readonly EventView[], t0: number): void {
  for (const event of events) {
    const at = Date.parse(event.timestamp) - t0;
    const key = event.type === 'directive.received' ? `directive.received(${String(event.payload['directive'])})` : event.type;
    const list = offsets.get(key) ?? [];
    list.push(at);
    offsets.set(key, list);
  }
}

interface PauseSample {
  latency: number;
  ack: number;
  /** lastStart - t0 (may be negative: the last start came before the request). */
  lastStart: number;
  startedAfter: number;
  startedAfterAck: number;
  toPaused: number;
  /** The acknowledgement time and what happened meanwhile. */
  attribution: Attribution;
}

interface PauseChain {
  label: string;
  nodes: Record<string, unknown>[];
  /** Node starts to wait for before the pause. */
  startsBefore: number;
  /** Further wait before the pause, ms. */
  delay: () => number;
}

async function pauseOnce(svc: TestService, workflowId: string, chain: PauseChain, offsets: Map<string, number[]> | null): Promise<PauseSample> {
  const triggered = await svc.trigger(workflowId, { initialInput: {} });
  if (triggered.status !== 202) throw new Error(`trigger failed: ${triggered.status} ${triggered.text}`);
  const runId = triggered.body.runId as string;
  await waitForNodeStarts(svc, workflowId, runId, chain.startsBefore);
  await sleep(chain.delay());

  const { t0, p0, cpu0 } = startTimer();
  const answer = await svc.api.post(runPath(workflowId, runId, '/pause'));
  const timed = stopTimer(p0, cpu0);
  const ack = timed.ms;
  const tAck = Date.now();
  if (answer.status !== 200 || answer.body.changed !== true) throw new Error(`pause of ${runId}: ${answer.status} ${answer.text.slice(0, 500)}`);
  // Waits on the event log, not the run detail: the detail of a 200-node run costs ~40 ms of CPU
  // per GET (measured), which would slow the engine down while it settles the pause.
  await waitForEvent(svc, workflowId, runId, 'run.paused');
  const detail = (await svc.api.get(runPath(workflowId, runId))).body;
  if (detail.status !== 'paused') throw new Error(`run ${runId} has run.paused but status ${detail.status}`);

  const events = await allEvents(svc, workflowId, runId);
  const starts = events.filter((e) => e.type === 'node.started').map((e) => Date.parse(e.timestamp));
  const lastStart = Math.max(...starts) - t0;
  const paused = events.find((e) => e.type === 'run.paused');
  if (!paused) throw new Error(`run ${runId} is paused without a run.paused event`);
  const received = events.find((e) => e.type === 'directive.received' && e.payload['directive'] === 'pause');
  if (offsets) addOffsets(offsets, events.filter((e) => Date.parse(e.timestamp) >= t0), t0);
  // Clean up: a paused run is cancelled at once (nobody executes it).
  await svc.api.post(runPath(workflowId, runId, '/cancel'), { reason: 'bench cleanup' });
  return {
    latency: Math.max(ack, lastStart),
    ack,
    lastStart,
    startedAfter: starts.filter((t) => t >= t0).length,
    startedAfterAck: starts.filter((t) => t > tAck).length,
    toPaused: Date.parse(paused.timestamp) - t0,
    attribution: { ...timed, received: received ? Date.parse(received.timestamp) - t0 : Number.NaN },
  };
}

interface CancelSample {
  latency: number;
  answeredCancelled: boolean;
  attribution: Attribution;
}

async function cancelOnce(svc: TestService, workflowId: string, offsets: Map<string, number[]> | null): Promise<CancelSample> {
  const triggered = await svc.trigger(workflowId, { initialInput: {} });
  if (triggered.status !== 202) throw new Error(`trigger failed: ${triggered.status} ${triggered.text}`);
  const runId = triggered.body.runId as string;
  await waitForNodeStarts(svc, workflowId, runId, 1);
  await sleep(SETTLE_MS + Math.floor(Math.random() * 11));
  const before = (await svc.api.get(runPath(workflowId, runId))).body;
  if (before.status !== 'running' || before.nodeRuns?.[0]?.status !== 'running') {
    throw new Error(`run ${runId} is ${before.status} / node ${before.nodeRuns?.[0]?.status} before the cancel`);
  }

  const { t0, p0, cpu0 } = startTimer();
  const answer = await svc.api.post(runPath(workflowId, runId, '/cancel'), { reason: 'bench' });
  const timed = stopTimer(p0, cpu0);
  let latency = timed.ms;
  if (answer.status !== 200) throw new Error(`cancel of ${runId}: ${answer.status} ${answer.text.slice(0, 500)}`);
  const answeredCancelled = answer.body.status === 'cancelled';
  if (!answeredCancelled) {
    await waitForStatus(svc, workflowId, runId, 'cancelled', 1);
    latency = performance.now() - p0;
  }
  const run = (await svc.api.get(runPath(workflowId, runId))).body;
  if (run.status !== 'cancelled' || run.nodeRuns?.[0]?.status !== 'cancelled') {
    throw new Error(`run ${runId} after cancel: ${run.status} / node ${run.nodeRuns?.[0]?.status}`);
  }
  const events = await allEvents(svc, workflowId, runId);
  if (offsets) addOffsets(offsets, events.filter((e) => Date.parse(e.timestamp) >= t0), t0);
  const received = events.find((e) => e.type === 'directive.received' && e.payload['directive'] === 'cancel');
  return { latency, answeredCancelled, attribution: { ...timed, ms: latency, received: received ? Date.parse(received.timestamp) - t0 : Number.NaN } };
}

const cpuList = cpus();
const loadAverage = () => loadavg().map((n) => n.toFixed(2)).join(' ');
console.log(
  `directives bench: node ${process.version} ${process.platform}/${process.arch}, ${cpuList.length} CPUs (${cpuList[0]?.model.trim() ?? '?'}), ` +
    `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, load average ${loadAverage()}; runs=${RUNS} each, budget ${BUDGET_MS / 1_000} s`,
);

const svc = await startService({ sweepIntervalMs: 1_000 });
let failures = 0;
try {
  console.log(`backend=${svc.backend}; one run at a time; client and server share one process`);

  // ---- pause ----
  const jitter = () => Math.floor(Math.random() * 11); // land anywhere in a node
  const chains: PauseChain[] = [
    {
      label: `chain of ${CHAIN_LENGTH} x sleep ${STEP_SLEEP_MS} ms, paused after ${STARTED_BEFORE_PAUSE} node starts + 0-10 ms`,
      nodes: Array.from({ length: CHAIN_LENGTH }, (_, i) => ({ name: `S${i + 1}`, nodeType: 'step', executorKey: 'sleep', config: { ms: STEP_SLEEP_MS } })),
      startsBefore: STARTED_BEFORE_PAUSE,
      delay: jitter,
    },
    {
      label: `chain of ${CHAIN_LENGTH} x echo, paused after ${STARTED_BEFORE_PAUSE} node starts + 0-10 ms`,
      nodes: Array.from({ length: CHAIN_LENGTH }, (_, i) => echoStep(`E${i + 1}`, { i })),
      startsBefore: STARTED_BEFORE_PAUSE,
      delay: jitter,
    },
    {
      // Control: the same run size, but the engine is idle (its one executing node sleeps) when the pause comes.
      label: `control: sleep ${IDLE_SLEEP_MS} ms then ${CHAIN_LENGTH - 1} x echo, paused ${IDLE_PAUSE_AFTER_MS}-${IDLE_PAUSE_AFTER_MS + 10} ms into the sleep (engine idle)`,
      nodes: [
        { name: 'S0', nodeType: 'step', executorKey: 'sleep', config: { ms: IDLE_SLEEP_MS } },
        ...Array.from({ length: CHAIN_LENGTH - 1 }, (_, i) => echoStep(`E${i + 1}`, { i })),
      ],
      startsBefore: 1,
      delay: () => IDLE_PAUSE_AFTER_MS + jitter(),
    },
    {
      // Control: the engine idle as above, on a 2-node run (the run document is ~1.5 KB instead of ~65 KB).
      label: `control: sleep ${IDLE_SLEEP_MS} ms then 1 x echo, paused ${IDLE_PAUSE_AFTER_MS}-${IDLE_PAUSE_AFTER_MS + 10} ms into the sleep (engine idle, small run)`,
      nodes: [{ name: 'S0', nodeType: 'step', executorKey: 'sleep', config: { ms: IDLE_SLEEP_MS } }, echoStep('E1')],
      startsBefore: 1,
      delay: () => IDLE_PAUSE_AFTER_MS + jitter(),
    },
  ];
  for (const chain of chains) {
    const workflow = await svc.createWorkflow({ name: uniqueName('bench pause'), canvas: CANVAS, nodes: chain.nodes });
    await svc.enable(workflow.id);
    await pauseOnce(svc, workflow.id, chain, null); // warm-up
    const samples: PauseSample[] = [];
    const offsets = new Map<string, number[]>();
    for (let i = 0; i < RUNS && Date.now() < deadline; i++) {
      try {
        samples.push(await pauseOnce(svc, workflow.id, chain, offsets));
      } catch (error) {
        failures++;
        console.log(`  pause run failed: ${(error as Error).message}`);
        if (Date.now() >= deadline) break;
      }
    }
    const late = samples.filter((s) => s.startedAfter > 0);
    if (samples.length < RUNS) failures++;
    console.log(`\npause, ${chain.label}:`);
    console.log(describe('pause latency max(ack, lastStart-t0)', samples.map((s) => s.latency), PAUSE_GOAL_MS));
    console.log(describe('  ack (200 answer)', samples.map((s) => s.ack)));
    console.log(describe('  lastStart - t0 (runs with a start)', late.map((s) => s.lastStart)));
    console.log(describe('  t0 -> run.paused event', samples.map((s) => s.toPaused)));
    console.log(
      `  nodes started after t0: ${samples.reduce((n, s) => n + s.startedAfter, 0)} in ${late.length}/${samples.length} runs (max ${Math.max(0, ...samples.map((s) => s.startedAfter))} in one run); ` +
        `after the 200 answer: ${samples.reduce((n, s) => n + s.startedAfterAck, 0)}`,
    );
    console.log('  events after t0 (event timestamps, ms resolution):');
    for (const line of describeOffsets(offsets)) console.log(line);
    for (const line of describeSlowest(samples.map((s) => s.attribution))) console.log(line);
  }

  // ---- cancel ----
  const workflow = await svc.createWorkflow({
    name: uniqueName('bench cancel'),
    canvas: CANVAS,
    nodes: [{ name: 'long', nodeType: 'step', executorKey: 'long-operation', config: { duration: LONG_OPERATION_SECONDS, steps: LONG_OPERATION_SECONDS } }],
  });
  await svc.enable(workflow.id);
  const warm = performance.now();
  await cancelOnce(svc, workflow.id, null); // warm-up: spawns and connects the MCP server
  const warmMs = performance.now() - warm;
  const cancels: CancelSample[] = [];
  const offsets = new Map<string, number[]>();
  for (let i = 0; i < RUNS && Date.now() < deadline; i++) {
    try {
      cancels.push(await cancelOnce(svc, workflow.id, offsets));
    } catch (error) {
      failures++;
      console.log(`  cancel run failed: ${(error as Error).message}`);
      if (Date.now() >= deadline) break;
    }
  }
  console.log(`\ncancel, one long-operation step (MCP server-everything, ${LONG_OPERATION_SECONDS} s), sent ${SETTLE_MS}-${SETTLE_MS + 10} ms after node.started:`);
  console.log(describe('cancel latency (until cancelled)', cancels.map((s) => s.latency), CANCEL_GOAL_MS));
  console.log(`  answers already saying cancelled: ${cancels.filter((s) => s.answeredCancelled).length}/${cancels.length}; warm-up run (MCP server start) ${warmMs.toFixed(0)} ms in all`);
  console.log('  events after t0 (event timestamps, ms resolution):');
  for (const line of describeOffsets(offsets)) console.log(line);
  for (const line of describeSlowest(cancels.map((s) => s.attribution))) console.log(line);
  if (cancels.length < RUNS) failures++;
} catch (error) {
  failures++;
  console.error(`bench aborted: ${(error as Error).stack ?? String(error)}`);
} finally {
  gcObserver.disconnect();
  await svc.close();
}
console.log(`\nload average at the end: ${loadAverage()} (other processes on the machine compete for its ${cpuList.length} CPUs)`);
console.log(failures > 0 ? `${failures} failure(s)` : 'all runs reached the expected status');
process.exit(failures > 0 ? 1 : 0);
