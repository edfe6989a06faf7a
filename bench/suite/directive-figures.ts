/**
 * The run-control figures (issue "Run control" item 1), over HTTP against the suite's service,
 * one run at a time (no contention):
 *
 * - pause: a chain of 200 `builtin.sleep` steps (5 ms each: at least a second of work, so the pause
 *   always reaches a run that is still running, never a race with the engine; a run that started
 *   every node before pausing fails the workload instead of giving a figure). After a few nodes started (plus a
 *   random 0-10 ms, so that the pause lands at any phase of a node) /pause is sent at t0.
 *   Latency = max(time until its 200 answer, last `node.started` of the run - t0): the time until
 *   the client holds the answer and no node starts any more (event timestamps have millisecond
 *   resolution; the service runs on the same machine, so the same wall clock).
 * - cancel: one `builtin.sleep` step of 60 s. Once its node started (the call is in flight), /cancel
 *   is sent; latency = time until the run is seen `cancelled` (the answer carries the status
 *   when the run is executed by the process that answers, else the run is polled every 2 ms).
 *
 * One warm-up run per series is not counted. Percentiles are nearest-rank (suite/stats.ts): with
 * fewer than 100 runs, p99 is the maximum.
 */
import type { WorkflowNodeInput } from '@switchyard/domain';
import { API_PREFIX } from '@switchyard/api';
import { createEnabledWorkflow, request, type AppUnderTest } from './http-figures.ts';
import { percentile } from './stats.ts';

const CHAIN_LENGTH = 200;
const STEP_SLEEP_MS = 5;
/** Nodes that must have started before the pause is sent. */
const STARTED_BEFORE_PAUSE = 5;
const LONG_SLEEP_MS = 60_000;

/** What {@link measureDirectives} measured, milliseconds. */
export interface DirectiveResult {
  readonly pauseP50Ms: number;
  readonly pauseP99Ms: number;
  readonly cancelP50Ms: number;
  readonly cancelP99Ms: number;
  /** Measured runs of each series. */
  readonly runs: number;
}

interface EventView {
  type: string;
  timestamp: string;
}

const sleepStep = (name: string, ms: number): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'builtin.sleep', config: { ms } }) as WorkflowNodeInput;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Measures `runs` pauses and `runs` cancels (after one warm-up each), every wait bounded by
 * `timeoutMs`. Rejects when a run does not reach the expected status in time or a directive is
 * not answered 200.
 */
export async function measureDirectives(app: AppUnderTest, options: { runs: number; timeoutMs: number }): Promise<DirectiveResult> {
  const deadline = performance.now() + options.timeoutMs;
  const chainId = await createEnabledWorkflow(app, 'suite pause', Array.from({ length: CHAIN_LENGTH }, (_, i) => sleepStep(`S${i}`, STEP_SLEEP_MS)));
  const longId = await createEnabledWorkflow(app, 'suite cancel', [sleepStep('Long', LONG_SLEEP_MS)]);
  const pauses: number[] = [];
  const cancels: number[] = [];
  for (let i = -1; i < options.runs; i++) {
    const paused = await pauseOnce(app, chainId, deadline);
    const cancelled = await cancelOnce(app, longId, deadline);
    if (i < 0) continue;
    pauses.push(paused);
    cancels.push(cancelled);
  }
  pauses.sort((a, b) => a - b);
  cancels.sort((a, b) => a - b);
  return {
    pauseP50Ms: percentile(pauses, 50),
    pauseP99Ms: percentile(pauses, 99),
    cancelP50Ms: percentile(cancels, 50),
    cancelP99Ms: percentile(cancels, 99),
    runs: options.runs,
  };
}

async function trigger(app: AppUnderTest, workflowId: string): Promise<string> {
  const triggered = await request(app, 'POST', `${API_PREFIX}/${workflowId}/runs`, {});
  if (triggered.status !== 202) throw new Error(`trigger: ${triggered.status} ${triggered.text.slice(0, 500)}`);
  return (triggered.json as { runId: string }).runId;
}

/** The run's events of `types` (one page of at most 1,000). */
async function events(app: AppUnderTest, workflowId: string, runId: string, types: string): Promise<EventView[]> {
  const response = await request(app, 'GET', `${API_PREFIX}/${workflowId}/runs/${runId}/events?limit=1000&types=${types}`);
  if (response.status !== 200) throw new Error(`events: ${response.status} ${response.text.slice(0, 500)}`);
  return (response.json as { events: EventView[] }).events;
}

/** Polls the run's events until `done` holds for them; throws when `deadline` (performance.now() ms) passes. */
async function untilEvents(app: AppUnderTest, workflowId: string, runId: string, types: string, done: (found: EventView[]) => boolean, deadline: number): Promise<EventView[]> {
  for (;;) {
    const found = await events(app, workflowId, runId, types);
    if (done(found)) return found;
    if (performance.now() > deadline) throw new Error(`run ${runId}: ${types} not seen in time (found ${found.length})`);
    await pause(2);
  }
}

/** One pause of a running chain; returns its latency (see the module comment) and cancels the paused run. */
async function pauseOnce(app: AppUnderTest, workflowId: string, deadline: number): Promise<number> {
  const runId = await trigger(app, workflowId);
  await untilEvents(app, workflowId, runId, 'node.started', (found) => found.length >= STARTED_BEFORE_PAUSE, deadline);
  await pause(Math.floor(Math.random() * 11));
  const t0 = Date.now();
  const started = performance.now();
  const answer = await request(app, 'POST', `${API_PREFIX}/${workflowId}/runs/${runId}/pause`);
  const ack = performance.now() - started;
  if (answer.status !== 200) throw new Error(`pause of ${runId}: ${answer.status} ${answer.text.slice(0, 500)}`);
  const found = await untilEvents(app, workflowId, runId, 'node.started,run.paused', (list) => list.some((e) => e.type === 'run.paused'), deadline);
  const starts = found.filter((e) => e.type === 'node.started');
  // The figure is a pause of a run still running: a chain that ran out before the pause measures nothing.
  if (starts.length >= CHAIN_LENGTH) throw new Error(`run ${runId}: all ${CHAIN_LENGTH} nodes started before the pause took effect; make the steps slower`);
  const lastStart = Math.max(...starts.map((e) => Date.parse(e.timestamp)));
  const cleanup = await request(app, 'POST', `${API_PREFIX}/${workflowId}/runs/${runId}/cancel`, { reason: 'bench cleanup' });
  if (cleanup.status !== 200) throw new Error(`cancel of paused ${runId}: ${cleanup.status} ${cleanup.text.slice(0, 500)}`);
  // A start in the same millisecond as t0 counts as a start after the request.
  return Math.max(ack, lastStart >= t0 ? lastStart - t0 + 1 : 0);
}

/** One cancel of a run whose only call is in flight; returns the time until the run was seen cancelled. */
async function cancelOnce(app: AppUnderTest, workflowId: string, deadline: number): Promise<number> {
  const runId = await trigger(app, workflowId);
  await untilEvents(app, workflowId, runId, 'node.started', (found) => found.length >= 1, deadline);
  const started = performance.now();
  const answer = await request(app, 'POST', `${API_PREFIX}/${workflowId}/runs/${runId}/cancel`, { reason: 'bench' });
  if (answer.status !== 200) throw new Error(`cancel of ${runId}: ${answer.status} ${answer.text.slice(0, 500)}`);
  if ((answer.json as { status?: string }).status !== 'cancelled') {
    await untilEvents(app, workflowId, runId, 'run.cancelled', (found) => found.length > 0, deadline);
  }
  return performance.now() - started;
}
