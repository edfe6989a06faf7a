/**
 * Steps calling `http` executors through the engine, against a real `node:http` server on
 * 127.0.0.1 (issue 9 items 3 and 4): retries of retryable answers, `Retry-After` lengthening the
 * backoff, 4xx failing at once, the per-call time limit (from `stepConfig.timeoutSeconds` or the
 * registry entry) aborting a request that hangs, cancel aborting it too, and the entry's header
 * secrets never reaching the run's records. Waits that matter run on a manual clock.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowNodeInput } from '@switchyard/domain';
import { systemClock } from './clock.ts';
import { requestDirective } from './directives.ts';
import { REDACTED } from './executors/shared/redact.ts';
import { openHarness, type Harness } from './testing/harness.ts';
import { ManualClock } from './testing/manual-clock.ts';
import { WebhookServer, hang, json, text, type Responder } from './testing/webhook-server.ts';

/** The actor of the directives these tests send. */
const TESTER = { userId: 'tester', username: 'tester', via: 'none' } as const;

const SECRET = `tok-${randomBytes(12).toString('hex')}`;

let server: WebhookServer;
let h: Harness | undefined;

beforeAll(async () => {
  server = await WebhookServer.start();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  server.respond(json(200, { ok: true }));
});
afterAll(async () => {
  await server.close();
});

/** A harness whose registry has `hook` (no limit of its own) and `slow-hook` (timeoutSeconds 3) at the test server. */
async function open(clock?: ManualClock): Promise<Harness> {
  h = await openHarness(clock ? { clock } : {}, {
    executors: {
      hook: { kind: 'http', url: server.url('/hook'), headers: { Authorization: 'Bearer ${HOOK_TOKEN}' } },
      'slow-hook': { kind: 'http', url: server.url('/slow'), timeoutSeconds: 3 },
    },
    env: { HOOK_TOKEN: SECRET },
  });
  return h;
}

const notify = (extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({
  name: 'Notify',
  nodeType: 'step',
  executorKey: 'hook',
  config: { orderId: { $cel: 'input.orderId' } },
  ...extra,
});

/** Starts a run of a one-step workflow with `node`. */
async function start(harness: Harness, node: WorkflowNodeInput): Promise<string> {
  const wf = await harness.createWorkflow([node]);
  const run = await harness.createRun(wf.id, { orderId: 42 });
  harness.engine.start(run.id);
  return run.id;
}

async function finish(harness: Harness, runId: string) {
  await harness.engine.idle();
  const run = (await harness.repos.runs.get(runId))!;
  const [nodeRun] = await harness.repos.nodeRuns.listByRun(runId);
  const events = await harness.repos.events.listByRun(runId);
  return { run, nodeRun: nodeRun!, events };
}

describe('http steps: answers and retries', () => {
  it('sends the evaluated config and stores a JSON answer as the output', async () => {
    const harness = await open();
    server.respond(json(200, { accepted: true }));
    const before = server.requests.length;
    const { run, nodeRun } = await finish(harness, await start(harness, notify()));
    expect(run.status).toBe('completed');
    expect(nodeRun).toMatchObject({ status: 'completed', attempt: 1, outputSnapshot: { accepted: true } });
    expect(JSON.parse(server.requests[before]!.body)).toEqual({ orderId: 42 });
  });

  it('retries a 500 and succeeds with the next answer', async () => {
    const clock = new ManualClock(Date.now());
    const harness = await open(clock);
    server.respond(text(500, 'try again'), json(200, { accepted: true }));
    const before = server.requests.length;
    const runId = await start(harness, notify({ stepConfig: { maxRetries: 2, backoffBaseSeconds: 1 } }));
    await clock.untilSleepers(1); // the backoff: 500 ms (harness random() is 0)
    await clock.advance(500);
    const { run, nodeRun, events } = await finish(harness, runId);
    expect(run.status).toBe('completed');
    expect(nodeRun).toMatchObject({ status: 'completed', attempt: 2, outputSnapshot: { accepted: true } });
    expect(server.requests.length - before).toBe(2);
    const retrying = events.filter((e) => e.type === 'node.retrying');
    expect(retrying).toHaveLength(1);
    expect(retrying[0]!.payload).toMatchObject({ delayMs: 500, error: `HTTP POST ${server.url('/hook')} answered 500: try again` });
  });

  it('waits at least as long as a 429 Retry-After says before the next attempt', async () => {
    const clock = new ManualClock(Date.now());
    const harness = await open(clock);
    server.respond(text(429, 'slow down', { 'retry-after': '30' }), json(200, { accepted: true }));
    const before = server.requests.length;
    const runId = await start(harness, notify({ stepConfig: { maxRetries: 1, backoffBaseSeconds: 1 } }));
    await clock.untilSleepers(1);
    await clock.advance(29_999); // the backoff alone (500 ms) would have retried long ago
    expect(clock.sleepers).toBe(1); // still waiting
    expect(server.requests.length - before).toBe(1);
    await clock.advance(1);
    await server.untilRequests(before + 2);
    const { run, events } = await finish(harness, runId);
    expect(run.status).toBe('completed');
    expect(events.find((e) => e.type === 'node.retrying')!.payload).toMatchObject({ delayMs: 30_000, nodeRunId: expect.any(String), attempt: 1 });
  });

  it('fails a 404 at once, without spending retries', async () => {
    const harness = await open();
    server.respond(json(404, { error: 'unknown hook' }));
    const before = server.requests.length;
    const { run, nodeRun } = await finish(harness, await start(harness, notify({ stepConfig: { maxRetries: 3, backoffBaseSeconds: 0.001 } })));
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe(`Node 'Notify' failed: HTTP POST ${server.url('/hook')} answered 404: {"error":"unknown hook"}`);
    expect(nodeRun).toMatchObject({ status: 'failed', attempt: 1 });
    expect(server.requests.length - before).toBe(1);
  });
});

describe('http steps: time limits and cancel', () => {
  it('aborts a request that hangs after stepConfig.timeoutSeconds and fails the attempt', async () => {
    const clock = new ManualClock(Date.now());
    const harness = await open(clock);
    server.respond(hang);
    const before = server.requests.length;
    const runId = await start(harness, notify({ stepConfig: { timeoutSeconds: 2 } }));
    await server.untilRequests(before + 1);
    await clock.advance(1_999);
    expect((await harness.repos.runs.get(runId))!.status).toBe('running');
    await clock.advance(1);
    await server.requests[before]!.abandoned; // the request was aborted, not left open
    const { run, nodeRun } = await finish(harness, runId);
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe(`Node 'Notify' failed: executor "hook" timed out after 2 s`);
    expect(nodeRun).toMatchObject({ status: 'failed', attempt: 1 });
  });

  it("applies the registry entry's timeoutSeconds when the step sets none, and retries the timeout", async () => {
    const clock = new ManualClock(Date.now());
    const harness = await open(clock);
    server.respond(hang, json(200, { late: false }));
    const before = server.requests.length;
    const runId = await start(harness, notify({ executorKey: 'slow-hook', stepConfig: { maxRetries: 1, backoffBaseSeconds: 1 } }));
    await server.untilRequests(before + 1);
    await clock.advance(2_999);
    expect(server.requests.length - before).toBe(1);
    await clock.advance(1); // 3 s: the entry's limit
    await server.requests[before]!.abandoned;
    await clock.untilSleepers(1); // the backoff before the retry
    await clock.advance(500);
    const { run, nodeRun, events } = await finish(harness, runId);
    expect(run.status).toBe('completed');
    expect(nodeRun).toMatchObject({ status: 'completed', attempt: 2, outputSnapshot: { late: false } });
    expect(events.find((e) => e.type === 'node.retrying')!.payload).toMatchObject({ error: 'executor "slow-hook" timed out after 3 s' });
  });

  it('aborts the request in flight when the run is cancelled', async () => {
    const harness = await open();
    server.respond(hang);
    const before = server.requests.length;
    const runId = await start(harness, notify({ stepConfig: { timeoutSeconds: 3_600 } }));
    await server.untilRequests(before + 1);
    const result = await requestDirective({ repos: harness.repos, clock: systemClock, engine: harness.engine }, runId, { directive: 'cancel', requestedBy: TESTER });
    expect(result!.run.status).toBe('cancelled');
    await server.requests[before]!.abandoned;
    const { nodeRun } = await finish(harness, runId);
    expect(nodeRun.status).toBe('cancelled');
  });
});

describe('http steps: secrets', () => {
  it("never writes the entry's header secrets to runs, node runs or events", async () => {
    const harness = await open();
    // A careless webhook that echoes the credentials it was sent, in failures and in outputs.
    const echo = (status: number): Responder => (request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ youSent: request.headers['authorization'] }));
    };
    server.respond(echo(200), echo(500));
    const first = await finish(harness, await start(harness, notify()));
    expect(first.nodeRun.outputSnapshot).toEqual({ youSent: REDACTED });
    const second = await finish(harness, await start(harness, notify()));
    expect(second.run.status).toBe('failed');
    expect(second.run.errorSummary).toContain(REDACTED);
    for (const records of [first, second]) expect(JSON.stringify(records)).not.toContain(SECRET);
    expect(server.requests.at(-1)!.headers['authorization']).toBe(`Bearer ${SECRET}`);
  });
});
