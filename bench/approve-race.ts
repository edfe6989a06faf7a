/**
 * /approve under contention, over real HTTP on loopback: N runs each parked at one HITL gate, K
 * simultaneous decisions fired at every gate (N x K requests in flight at once). Prints the
 * /approve latency (p50/p99, ms) of the winners (200) and of the losers (409) separately, the
 * decision throughput, how many gates had exactly one winner, and for reference the latency of a
 * lone decision. Asserts nothing; exits 1 when a gate did not have exactly one winner or a run did
 * not complete. Client and server share one process (and event loop), so the latencies include
 * the client's own fetch work and the queueing of N x K requests.
 *
 * The service is the end-to-end harness (test/support/service.ts): the real app on the embedded
 * in-memory store, or MongoDB when MONGODB_URI is set.
 *
 *   npx tsx bench/approve-race.ts [--runs 50] [--decisions 20] [--rounds 3] [--budget-seconds 60]
 */
import { parseArgs } from 'node:util';
import { CANVAS, echoStep, startService, uniqueName, type ApiResponse } from '../test/support/service.ts';
import { boundedInteger, percentile } from './support.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '50' },
    decisions: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    'budget-seconds': { type: 'string', default: '60' },
  },
});

const RUNS = boundedInteger('runs', values.runs, 1, 500);
const DECISIONS = boundedInteger('decisions', values.decisions, 2, 200);
const ROUNDS = boundedInteger('rounds', values.rounds, 1, 20);
const BUDGET_MS = boundedInteger('budget-seconds', values['budget-seconds'], 1, 600) * 1_000;
if (RUNS * DECISIONS > 20_000) throw new Error('--runs x --decisions must be at most 20000');

interface Sample {
  status: number;
  ms: number;
}

function describe(label: string, samples: readonly Sample[]): string {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const fmt = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));
  return `${label.padEnd(8)} n=${String(ms.length).padStart(6)}  p50=${fmt(percentile(ms, 50)).padStart(7)} ms  p99=${fmt(percentile(ms, 99)).padStart(7)} ms  max=${fmt(ms.at(-1) ?? Number.NaN).padStart(7)} ms`;
}

const svc = await startService({ sweepIntervalMs: 1_000 });
const deadline = Date.now() + BUDGET_MS;
const remaining = () => Math.max(1, deadline - Date.now());
let failures = 0;
try {
  console.log(`approve-race: backend=${svc.backend} runs=${RUNS} decisions/gate=${DECISIONS} rounds=${ROUNDS} (${RUNS * DECISIONS} requests in flight per round)`);
  const workflow = await svc.createWorkflow({
    name: uniqueName('bench approve'),
    canvas: CANVAS,
    nodes: [
      echoStep('Gate', { amount: 100 }, { humanReview: { requiresConfirmation: true, onReject: 'skip' } }),
      echoStep('After', { prev: { $cel: 'previous_step_content' } }),
    ],
  });
  await svc.enable(workflow.id);

  const winners: Sample[] = [];
  const losers: Sample[] = [];
  const others: Sample[] = [];
  let decisionMs = 0;
  let exactlyOne = 0;
  let completed = 0;

  for (let round = 1; round <= ROUNDS && Date.now() < deadline; round++) {
    // N runs parked at their gate.
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const triggered = await svc.trigger(workflow.id, { initialInput: { round, i } });
      if (triggered.status !== 202) throw new Error(`trigger failed: ${triggered.status} ${triggered.text}`);
      runIds.push(triggered.body.runId);
    }
    const gates = await Promise.all(
      runIds.map(async (runId) => {
        const run = await svc.waitForGate(workflow.id, runId, { timeoutMs: remaining() });
        return { runId, stepId: run.pendingRequirements[0].stepId as string };
      }),
    );

    // N x K decisions at once.
    const started = performance.now();
    const perGate = await Promise.all(
      gates.map(({ runId, stepId }) =>
        Promise.all(
          Array.from({ length: DECISIONS }, async (_, k): Promise<Sample> => {
            const decision = k % 2 === 0 ? { stepId, resolution: 'confirm' } : { stepId, resolution: 'reject', feedback: `reviewer ${k}` };
            const t0 = performance.now();
            const response: ApiResponse = await svc.approve(workflow.id, runId, decision);
            return { status: response.status, ms: performance.now() - t0 };
          }),
        ),
      ),
    );
    const roundMs = performance.now() - started;
    decisionMs += roundMs;

    for (const samples of perGate) {
      for (const sample of samples) (sample.status === 200 ? winners : sample.status === 409 ? losers : others).push(sample);
      if (samples.filter((s) => s.status === 200).length === 1 && samples.filter((s) => s.status === 409).length === DECISIONS - 1) exactlyOne++;
    }
    const runs = await Promise.all(runIds.map((runId) => svc.waitForRun(workflow.id, runId, { timeoutMs: remaining() }).catch(() => null)));
    completed += runs.filter((run) => run?.status === 'completed').length;
    console.log(`round ${round}: ${gates.length * DECISIONS} decisions on ${gates.length} gates answered in ${roundMs.toFixed(0)} ms`);
  }

  // Reference: the same decision without contention, one gate at a time.
  const baseline: Sample[] = [];
  for (let i = 0; i < Math.min(RUNS, 20) && Date.now() < deadline; i++) {
    const triggered = await svc.trigger(workflow.id, { initialInput: { baseline: i } });
    const runId = triggered.body.runId as string;
    const run = await svc.waitForGate(workflow.id, runId, { timeoutMs: remaining() });
    const t0 = performance.now();
    const response = await svc.approve(workflow.id, runId, { stepId: run.pendingRequirements[0].stepId, resolution: 'confirm' });
    baseline.push({ status: response.status, ms: performance.now() - t0 });
    await svc.waitForRun(workflow.id, runId, { timeoutMs: remaining() });
  }

  const total = winners.length + losers.length + others.length;
  const gates = total / DECISIONS;
  console.log(describe('winners', winners));
  console.log(describe('losers', losers));
  console.log(describe('alone', baseline), '(one decision at a time, no contention)');
  if (others.length > 0) console.log(describe('other', others), `statuses: ${[...new Set(others.map((s) => s.status))].join(', ')}`);
  console.log(`decisions: ${total} in ${(decisionMs / 1_000).toFixed(2)} s = ${(total / (decisionMs / 1_000)).toFixed(0)} decisions/s`);
  console.log(`gates with exactly one winner: ${exactlyOne}/${gates}; runs completed: ${completed}/${gates}`);
  if (exactlyOne !== gates || completed !== gates || others.length > 0) failures++;
} finally {
  await svc.close();
}
process.exit(failures > 0 ? 1 : 0);
