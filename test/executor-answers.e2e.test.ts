/**
 * One large executor answer must not stall the service (security issue, item 5): a webhook
 * streaming 16 MiB of small JSON objects to ten runs at once. Reading stops at the output limit
 * plus its margin, nothing is parsed, every run fails with the output-limit error, no lease is lost
 * (the lease is short here, so a stalled event loop would lose it: a run whose lease is lost is
 * abandoned, it never ends), `GET /livez` answers all along (polled every ~10 ms while waves of ten
 * parallel runs follow each other for LOAD_MS; one wave alone lasts a few hundred ms), and the
 * service's event loop never stalls for long: its longest delay during the load (Node's
 * `monitorEventLoopDelay`, read from the service's own `GET /metrics` as
 * `nodejs_eventloop_lag_max_seconds`) stays under a bound that grows with what the machine itself
 * adds, measured meanwhile in an idle process (see MAX_STALL_MS). So a busy machine does not fail
 * the test the way it inflated the /livez p99 this test used to bound; the /livez latencies are
 * printed as figures only (speed targets live in the benches).
 * The service runs as users run it (`apps/api/src/server.ts` in a process of its own) and the
 * webhook in another process, as a remote server would.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentileOf } from '../bench/suite/stats.ts';
import { answerReadLimit } from '../packages/runner/src/executors/shared/answer-limit.ts';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../packages/runner/src/output-limit.ts';
import { sample } from './support/prometheus.ts';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { CANVAS, TERMINAL, uniqueName } from './support/service.ts';

/** What the webhook would send in all: 16 MiB. */
const ANSWER_BYTES = 16 * 1024 * 1024;
const RUNS = 10;
/** How long waves of RUNS parallel runs go on, ms: long enough for a few hundred /livez samples under load. */
const LOAD_MS = 8_000;
/**
 * Pause between two waves, ms: ten runs at a time as the issue describes, not a service saturated
 * by the test's own back-to-back waves (each run's store work and the test's reads share the loop).
 */
const PAUSE_MS = 250;
/**
 * Longest event-loop stall the service may show during the load beyond what the machine adds, ms:
 * the bound is MAX_STALL_MS plus twice the longest stall of an idle process meanwhile (a
 * busy process waits for a core longer than an idle one). Reading answers in chunks stalls the
 * service for a few tens of ms on a quiet 2-core machine (40–90 ms measured at load 4); at load
 * 8–12, 140–410 ms beside an idle process's 30–200 ms (bounds 560–900 ms). Parsing one 16 MiB
 * answer whole stalls it ~400 ms, ten of them in a wave back to back seconds. One injected 600 ms
 * stall measured 659 ms beside an idle 30 ms (bound 560 ms: fails), and 623 ms beside an idle 97 ms
 * (bound 693 ms: passes; on a crowded machine only longer stalls fail it). A stall past ~1.3 s
 * also loses the lease (see above).
 */
const MAX_STALL_MS = 500;

/** The service's longest event-loop delay since the previous scrape of its `/metrics`, ms (each scrape resets it). */
async function longestStallMs(): Promise<number> {
  const response = await fetch(`${server.baseUrl}/metrics`);
  expect(response.status).toBe(200);
  const seconds = sample(await response.text(), 'nodejs_eventloop_lag_max_seconds');
  expect(seconds).toEqual(expect.any(Number));
  return seconds! * 1000;
}

/**
 * The webhook's code, run in a child process (a remote server does not share the service's event
 * loop): `POST /big` streams `[{"a":1},{"a":1},...]` (ANSWER_BYTES in all) with back-pressure;
 * `GET /stats` answers what each answer wrote and whether its client went away before the end.
 */
const WEBHOOK_SCRIPT = `
const { createServer } = require('node:http');
const total = Number(process.argv[1]);
const piece = Buffer.from('{"a":1},'.repeat(8 * 1024));
const answers = [];
const server = createServer((request, response) => {
  request.resume();
  if (request.method === 'GET') return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
  const answer = { written: 0, cutOff: false };
  answers.push(answer);
  response.writeHead(200, { 'content-type': 'application/json' });
  response.on('close', () => (answer.cutOff = !response.writableFinished));
  const pump = () => {
    while (!response.destroyed) {
      if (answer.written === 0) { response.write('['); answer.written = 1; }
      if (answer.written + piece.length + 8 >= total) { response.end('{"a":1}]'); answer.written += 8; return; }
      answer.written += piece.length;
      if (!response.write(piece)) return void response.once('drain', pump);
    }
  };
  pump();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

/**
 * An idle process beside the service: its longest event-loop delay is how long a process that
 * has nothing to do waits for a core on this machine right now (what other work on the machine
 * adds to every stall). Each line on stdin is answered with that delay since the previous line, ms.
 */
const CANARY_SCRIPT = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
require('node:readline').createInterface({ input: process.stdin }).on('line', () => {
  process.stdout.write(delay.max / 1e6 + '\\n');
  delay.reset();
});
`;

/** The canary process ({@link CANARY_SCRIPT}). */
class IdleCanary {
  private constructor(
    private readonly child: ChildProcess,
    private readonly lines: AsyncIterator<string>,
  ) {}

  static start(): IdleCanary {
    const child = spawn(process.execPath, ['-e', CANARY_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
    return new IdleCanary(child, createInterface({ input: child.stdout! })[Symbol.asyncIterator]());
  }

  /** Its longest event-loop delay since the previous call, ms. */
  async longestStallMs(): Promise<number> {
    this.child.stdin!.write('\n');
    const { value } = await this.lines.next();
    return Number(value);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.stdin!.end();
    await once(this.child, 'exit');
  }
}

/** The webhook process; {@link stats} reads what it wrote. */
class BigAnswerWebhook {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(): Promise<BigAnswerWebhook> {
    const child = spawn(process.execPath, ['-e', WEBHOOK_SCRIPT, String(ANSWER_BYTES)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    return new BigAnswerWebhook(child, Number(line));
  }

  url(): string {
    return `http://127.0.0.1:${this.port}/big`;
  }

  /** Bytes written per answer so far, and whether the client closed the connection before the end. */
  async stats(): Promise<Array<{ written: number; cutOff: boolean }>> {
    return (await fetch(this.url())).json() as Promise<Array<{ written: number; cutOff: boolean }>>;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill();
    await once(this.child, 'exit');
  }
}


/** The run's detail with its node runs once it has a terminal status (polled every 100 ms, at most 60 s). */
async function endedRun(workflowId: string, runId: string): Promise<any> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const run = await server.call('GET', `/${workflowId}/runs/${runId}?includeNodeRuns=true`);
    if ((TERMINAL as readonly string[]).includes(run.status)) return run;
  }
  throw new Error(`run ${runId} did not end within 60 s`);
}

let webhook: BigAnswerWebhook;
let canary: IdleCanary;
let registryDir: string;
let server: ServerProcess;

beforeAll(async () => {
  webhook = await BigAnswerWebhook.start();
  canary = IdleCanary.start();
  registryDir = await mkdtemp(join(tmpdir(), 'switchyard-answers-'));
  const registryFile = join(registryDir, 'executors.json');
  await writeFile(registryFile, JSON.stringify({ executors: { big: { kind: 'http', url: webhook.url(), timeoutSeconds: 60 } } }));
  server = await startServerProcess({
    SWITCHYARD_EXECUTORS: registryFile,
    DATA_DIR: join(registryDir, 'data'),
    // The shortest lease the service takes: a heartbeat starved for more than ~1.3 s loses it.
    SWITCHYARD_LEASE_MS: '2000',
    SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: '0',
  });
}, 30_000);

afterAll(async () => {
  server?.kill();
  await webhook?.close();
  await canary?.close();
  if (registryDir) await rm(registryDir, { recursive: true, force: true });
});

describe('a 16 MiB webhook answer', () => {
  it('fails ten parallel runs with the output-limit error, reads no more than the limit, and the service keeps answering without stalls', async () => {
    const created = await server.call('POST', '', {
      name: uniqueName('big-answer'),
      canvas: CANVAS,
      nodes: [{ name: 'Fetch', nodeType: 'step', executorKey: 'big', config: {}, stepConfig: { maxRetries: 2 } }],
    });
    await server.call('POST', `/${created.id}/toggle`, { enabled: true });
    // Warm-up, not measured: one run loads what the first call loads (undici, the routes' code paths).
    const warmUp = await server.call('POST', `/${created.id}/runs`, {});
    expect((await endedRun(created.id, warmUp.runId)).status).toBe('failed');
    const warmUpAnswers = (await webhook.stats()).length;
    await longestStallMs(); // from here on: the load's
    await canary.longestStallMs();

    // /livez every ~10 ms from before the first trigger until the last run ended (at most 5,000 polls).
    const latencies: number[] = [];
    /** Latencies of the polls sent while a wave was in flight. */
    const loaded: number[] = [];
    let inWave = false;
    let done = false;
    const poller = (async () => {
      for (let polls = 0; polls < 5_000 && !done; polls++) {
        const started = performance.now();
        const duringWave = inWave;
        const response = await fetch(`${server.baseUrl}/livez`);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ status: 'ok' });
        latencies.push(performance.now() - started);
        if (duringWave) loaded.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    // Waves of ten runs started together, each wave once the previous one ended, for LOAD_MS.
    let ended = 0;
    const loadEnds = performance.now() + LOAD_MS;
    try {
      while (performance.now() < loadEnds) {
        inWave = true;
        // `call` throws unless the trigger answers 2xx (202).
        const triggered = await Promise.all(Array.from({ length: RUNS }, () => server.call('POST', `/${created.id}/runs`, {})));
        await Promise.all(
          triggered.map(async (accepted) => {
            const runId = accepted.runId as string;
            const run = await endedRun(created.id, runId);
            expect(run.status).toBe('failed');
            const stopped = new RegExp(`^Node 'Fetch' failed: webhook answer exceeds SWITCHYARD_MAX_OUTPUT_BYTES \\(${DEFAULT_MAX_OUTPUT_BYTES} bytes\\): read stopped at (\\d+) bytes$`).exec(run.errorSummary);
            expect(stopped, run.errorSummary).not.toBeNull();
            // Stopped with the chunk that crossed the read limit (limit + margin).
            expect(Number(stopped![1])).toBeGreaterThan(answerReadLimit(DEFAULT_MAX_OUTPUT_BYTES));
            expect(Number(stopped![1])).toBeLessThan(answerReadLimit(DEFAULT_MAX_OUTPUT_BYTES) + 1024 * 1024);
            // Not retried: the same call would answer as much again.
            expect(run.nodeRuns).toHaveLength(1);
            expect(run.nodeRuns[0]).toMatchObject({ status: 'failed', attempt: 1 });
            // Nothing but the run's own failure: no lease lost, no other stop.
            const listed = (await server.call('GET', `/${created.id}/runs/${runId}/events?limit=1000`)) as { events: Array<{ type: string }> };
            const types = listed.events.map((event) => event.type);
            expect(types.filter((type) => type.startsWith('run.'))).toEqual(['run.started', 'run.failed']);
            ended++;
          }),
        );
        inWave = false;
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
    } finally {
      done = true;
      await poller;
    }
    const stallMs = await longestStallMs();
    const idleStallMs = await canary.longestStallMs();

    // Each answer was cut off soon after the read limit (what the sockets had buffered aside).
    const answers = (await webhook.stats()).slice(warmUpAnswers);
    expect(answers).toHaveLength(ended);
    expect(ended).toBeGreaterThanOrEqual(RUNS);
    for (const answer of answers) {
      expect(answer.cutOff).toBe(true);
      expect(answer.written).toBeLessThan(ANSWER_BYTES / 2);
    }
    const p99 = percentileOf(latencies, 99);
    const loadedP99 = percentileOf(loaded, 99);
    console.info(
      `${ended} runs; longest event-loop stall of the service ${stallMs.toFixed(1)} ms, of an idle process ${idleStallMs.toFixed(1)} ms; /livez: ${latencies.length} polls, p50 ${percentileOf(latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms; ` +
        `during waves: ${loaded.length} polls, p50 ${percentileOf(loaded, 50).toFixed(1)} ms, p99 ${loadedP99.toFixed(1)} ms`,
    );
    // The probe was answered (200, checked per poll) all through the waves, not only between them.
    expect(loaded.length).toBeGreaterThanOrEqual(20);
    expect(stallMs, `longest stall of the service, ms (an idle process: ${idleStallMs.toFixed(1)} ms)`).toBeLessThan(MAX_STALL_MS + 2 * idleStallMs);
  }, 90_000);
});
