/**
 * The figures measured over HTTP against the real app (one instance, in the service process, on the
 * embedded store in a fresh data directory, compaction off): single-step runs per second under 50 concurrent trigger
 * connections and the data-directory bytes each run adds; the run detail's request rate relative
 * to a bare Fastify route serving the same body in the service's process; /approve latency with many
 * concurrent racers on one gate, exactly one of which must win.
 */
import type { WorkflowNodeInput } from '@switchyard/domain';
import { API_PREFIX } from '@switchyard/api';
import { echoStep } from '../support.ts';
import { openPool, runLoad, sendAtOnce, type LoadRequest } from './http-load.ts';
import type { ServiceProcess } from './service-process.ts';
import { percentile } from './stats.ts';

/** The app under test: where it listens (`http://127.0.0.1:<port>`). */
export interface AppUnderTest {
  readonly baseUrl: string;
}

/** Polling period of a wait on runs, milliseconds. */
const POLL_MS = 10;

/** Creates (POST /workflows) and enables a workflow of `nodes` through the API; returns its id. Throws unless both answer as expected. */
export async function createEnabledWorkflow(app: AppUnderTest, name: string, nodes: readonly WorkflowNodeInput[]): Promise<string> {
  const created = await request(app, 'POST', API_PREFIX, { name, canvas: { viewport: { x: 0, y: 0, zoom: 1 } }, nodes });
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${created.text.slice(0, 500)}`);
  const id = (created.json as { id: string }).id;
  const toggled = await request(app, 'POST', `${API_PREFIX}/${id}/toggle`, { enabled: true });
  if (toggled.status !== 200) throw new Error(`enable workflow: ${toggled.status} ${toggled.text.slice(0, 500)}`);
  return id;
}

/** What {@link measureTriggers} measured. */
export interface TriggerResult {
  /** Runs triggered (202) and completed. */
  readonly runs: number;
  /** Completed runs per second, from the first trigger to the last completion. */
  readonly runsPerSecond: number;
  /** Data-directory bytes added per completed run. */
  readonly bytesPerRun: number;
  /** The workflow and one of its completed runs (for the run-detail figure). */
  readonly workflowId: string;
  readonly runId: string;
}

/**
 * Triggers a single-step `echo` workflow over `connections` connections for `durationMs`
 * milliseconds (at most `maxRequests` triggers), then waits (at most `settleMs`) until every
 * accepted run completed. Rejects when a trigger is not answered 202 or the runs do not complete.
 */
export async function measureTriggers(
  service: ServiceProcess,
  app: AppUnderTest,
  options: { connections: number; durationMs: number; maxRequests: number; settleMs: number },
): Promise<TriggerResult> {
  const workflowId = await createEnabledWorkflow(app, 'suite single step', [echoStep('Only', { customer: 'c-1' })]);
  const bytesBefore = await service.dataDirBytes();
  const started = performance.now();
  const load = await runLoad({
    origin: app.baseUrl,
    connections: options.connections,
    durationMs: options.durationMs,
    maxRequests: options.maxRequests,
    request: (i) => ({ method: 'POST', path: `${API_PREFIX}/${workflowId}/runs`, body: JSON.stringify({ initialInput: { i } }) }),
  });
  const accepted = load.statuses.get(202) ?? 0;
  if (accepted !== load.requests) throw new Error(`triggers answered ${JSON.stringify([...load.statuses])}, expected only 202`);
  const deadline = performance.now() + options.settleMs;
  for (;;) {
    const { unfinished, completed } = await service.runsOf(workflowId);
    if (unfinished === 0) {
      if (completed !== accepted) throw new Error(`${accepted - (completed ?? 0)} of ${accepted} triggered runs did not complete`);
      const seconds = (performance.now() - started) / 1000;
      const bytesPerRun = ((await service.dataDirBytes()) - bytesBefore) / accepted;
      const runs = await request(app, 'GET', `${API_PREFIX}/${workflowId}/runs?perPage=1&includeNodeRuns=false`);
      const runId = (runs.json as { runs?: Array<{ id: string }> }).runs?.[0]?.id;
      if (!runId) throw new Error(`list runs: ${runs.status} ${runs.text.slice(0, 500)}`);
      return { runs: accepted, runsPerSecond: accepted / seconds, bytesPerRun, workflowId, runId };
    }
    if (performance.now() > deadline) throw new Error(`${unfinished} of ${accepted} triggered runs still unfinished after ${options.settleMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** What {@link measureRunDetail} measured. */
export interface RunDetailResult {
  /** GET run detail, requests per second. */
  readonly appPerSecond: number;
  /** The bare Fastify route returning the same body, requests per second. */
  readonly barePerSecond: number;
  /** `appPerSecond / barePerSecond`. */
  readonly ratio: number;
}

/**
 * Loads GET run detail of `runId`, then a bare Fastify route in the service's process (on
 * 127.0.0.1) returning the same body as an object, each over `connections` connections for `durationMs`
 * milliseconds (at most `maxRequests`); `aroundAppLoad` wraps the app's load (e.g. to profile it).
 * Rejects when an answer is not 200.
 */
export async function measureRunDetail(
  service: ServiceProcess,
  app: AppUnderTest,
  workflowId: string,
  runId: string,
  options: { connections: number; durationMs: number; maxRequests: number },
  aroundAppLoad: (load: () => Promise<number>) => Promise<number> = (load) => load(),
): Promise<RunDetailResult> {
  const path = `${API_PREFIX}/${workflowId}/runs/${runId}`;
  const detail = await request(app, 'GET', path);
  if (detail.status !== 200) throw new Error(`run detail: ${detail.status} ${detail.text.slice(0, 500)}`);
  const bareUrl = await service.bareRoute(detail.json);
  const load = async (origin: string, target: string) => {
    const result = await runLoad({ origin, ...options, request: () => ({ method: 'GET', path: target }) });
    if ((result.statuses.get(200) ?? 0) !== result.requests) throw new Error(`GET ${target} answered ${JSON.stringify([...result.statuses])}`);
    return result.perSecond;
  };
  const appPerSecond = await aroundAppLoad(() => load(app.baseUrl, path));
  const barePerSecond = await load(bareUrl, '/detail');
  return { appPerSecond, barePerSecond, ratio: appPerSecond / barePerSecond };
}

/** What {@link measureApproveRace} measured. */
export interface ApproveResult {
  /** Gates raced on. */
  readonly gates: number;
  /** Gates where exactly one racer got 200 and every other 409. */
  readonly gatesWithOneWinner: number;
  /** Latency percentiles of every /approve request, milliseconds. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Decisions answered per second while racing. */
  readonly decisionsPerSecond: number;
}

/**
 * For each of `gates` runs (one at a time, within `timeoutMs` milliseconds overall), after one
 * warm-up run that is not counted: triggers a run of a workflow whose first step waits for a
 * confirmation, waits for its gate, then sends `racers` decisions at once over as many (already
 * open) connections. Rejects when a run does not reach its gate in time.
 */
export async function measureApproveRace(app: AppUnderTest, options: { gates: number; racers: number; timeoutMs: number }): Promise<ApproveResult> {
  const workflowId = await createEnabledWorkflow(app, 'suite approve', [
    echoStep('Gate', { amount: 100 }, { humanReview: { requiresConfirmation: true, onReject: 'skip' } } as Partial<WorkflowNodeInput>),
    echoStep('After'),
  ]);
  const deadline = performance.now() + options.timeoutMs;
  const pool = openPool(app.baseUrl, options.racers);
  const latencies: number[] = [];
  let racingMs = 0;
  let gatesWithOneWinner = 0;
  try {
    await sendAtOnce(pool, Array.from({ length: options.racers }, (): LoadRequest => ({ method: 'GET', path: '/healthz' })));
    // Gate -1 warms the approve path up (the JIT, the error path of the 409s) and is not counted:
    // otherwise the p99 of a few gates is the first, cold one.
    for (let gate = -1; gate < options.gates; gate++) {
      const triggered = await request(app, 'POST', `${API_PREFIX}/${workflowId}/runs`, { initialInput: { gate } });
      if (triggered.status !== 202) throw new Error(`trigger: ${triggered.status} ${triggered.text.slice(0, 500)}`);
      const runId = (triggered.json as { runId: string }).runId;
      const stepId = await waitForGate(app, workflowId, runId, deadline);
      const decisions = Array.from({ length: options.racers }, (_, k): LoadRequest => ({
        method: 'POST',
        path: `${API_PREFIX}/${workflowId}/runs/${runId}/approve`,
        body: JSON.stringify(k % 2 === 0 ? { stepId, resolution: 'confirm' } : { stepId, resolution: 'reject', feedback: `racer ${k}` }),
      }));
      const started = performance.now();
      const answers = await sendAtOnce(pool, decisions);
      if (gate < 0) continue;
      racingMs += performance.now() - started;
      for (const answer of answers) latencies.push(answer.ms);
      const winners = answers.filter((answer) => answer.status === 200).length;
      const losers = answers.filter((answer) => answer.status === 409).length;
      if (winners === 1 && losers === options.racers - 1) gatesWithOneWinner++;
    }
  } finally {
    await pool.close();
  }
  latencies.sort((a, b) => a - b);
  return {
    gates: options.gates,
    gatesWithOneWinner,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    decisionsPerSecond: latencies.length / (racingMs / 1000),
  };
}

/** Polls the run detail until the run awaits approval with a pending requirement; returns its stepId. Throws when the run ends or `deadline` (performance.now() ms) passes. */
async function waitForGate(app: AppUnderTest, workflowId: string, runId: string, deadline: number): Promise<string> {
  for (;;) {
    const detail = await request(app, 'GET', `${API_PREFIX}/${workflowId}/runs/${runId}`);
    const run = detail.json as { status?: string; pendingRequirements?: Array<{ stepId: string }> };
    if (run.status === 'awaiting_approval' && run.pendingRequirements?.length) return run.pendingRequirements[0]!.stepId;
    if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') throw new Error(`run ${runId} ended ${run.status} before its gate`);
    if (performance.now() > deadline) throw new Error(`run ${runId} did not reach its gate in time (last: ${detail.status} ${detail.text.slice(0, 300)})`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** One JSON request with the global fetch: status, raw text and parsed body (null when not JSON). */
export async function request(app: AppUnderTest, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string; json: unknown }> {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: callers report `text`
  }
  return { status: response.status, text, json };
}
