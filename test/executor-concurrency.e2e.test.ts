/**
 * Bounded concurrent executor calls through the real service (security issue, item 9): with
 * `SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN=3`, a webhook that holds every request never has
 * more than three at once (nor more than three sockets), however many runs call it; every run
 * completes once the webhook answers; and a run cancelled while its call waits for a slot ends
 * cancelled without its call ever reaching the webhook.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookServer } from '../packages/runner/src/testing/webhook-server.ts';
import { CANVAS, startService, uniqueName, wf, type TestService } from './support/service.ts';

const PER_ORIGIN = 3;

/**
 * The scripted webhook of the runner's tests with a responder that holds every request until the
 * test releases it, tracking how many are open at once and the sockets used.
 */
class HoldingWebhook {
  readonly held: ServerResponse[] = [];
  readonly sockets = new Set<string>();
  open = 0;
  maxOpen = 0;
  private constructor(private readonly server: WebhookServer) {
    server.respond((_request, response) => {
      this.sockets.add(`${response.socket?.remotePort}`);
      this.open++;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      response.on('close', () => this.open--);
      this.held.push(response);
    });
  }

  static async start(): Promise<HoldingWebhook> {
    return new HoldingWebhook(await WebhookServer.start());
  }

  /** Every request's body, in arrival order. */
  get bodies(): string[] {
    return this.server.requests.map((request) => request.body);
  }

  url(): string {
    return this.server.url('/hold');
  }

  /** Answers every request held now with `{ ok: true }`. */
  releaseAll(): void {
    for (const response of this.held.splice(0)) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  }

  /** Resolves once `count` requests arrived in all. */
  untilReceived(count: number): Promise<void> {
    return this.server.untilRequests(count);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

let webhook: HoldingWebhook;
let registryDir: string;
let svc: TestService;

beforeAll(async () => {
  webhook = await HoldingWebhook.start();
  registryDir = await mkdtemp(join(tmpdir(), 'switchyard-concurrency-'));
  const registryFile = join(registryDir, 'executors.json');
  await writeFile(registryFile, JSON.stringify({ executors: { hold: { kind: 'http', url: webhook.url(), timeoutSeconds: 60 } } }));
  svc = await startService({ registryFile, env: { SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN: String(PER_ORIGIN), SWITCHYARD_PARALLEL_LIMIT: '20' } });
}, 30_000);

afterAll(async () => {
  await svc?.close();
  await webhook?.close();
  if (registryDir) await rm(registryDir, { recursive: true, force: true });
});

/** Waits `ms` (a check that nothing more happens meanwhile). */
const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('concurrent calls to one webhook', () => {
  it('never exceed the per-origin cap, and every run completes', async () => {
    const created = await svc.createWorkflow({
      name: uniqueName('held'),
      canvas: CANVAS,
      nodes: [{ name: 'Call', nodeType: 'step', executorKey: 'hold', config: { run: { $cel: 'input.n' } } }],
    });
    await svc.enable(created.id);
    const RUNS = 10;
    const triggered = await Promise.all(Array.from({ length: RUNS }, (_, n) => svc.trigger(created.id, { initialInput: { n } })));
    const runIds = triggered.map((response) => {
      expect(response.status).toBe(202);
      return response.body.runId as string;
    });
    // Release the calls a few at a time: each time exactly the cap is held, and nothing more arrives.
    for (let received = PER_ORIGIN; ; received = Math.min(RUNS, received + PER_ORIGIN)) {
      await webhook.untilReceived(received);
      await quiet(200);
      expect(webhook.bodies).toHaveLength(received);
      expect(webhook.open).toBeLessThanOrEqual(PER_ORIGIN);
      webhook.releaseAll();
      if (received === RUNS) break;
    }
    const runs = await Promise.all(runIds.map((runId) => svc.waitForRun(created.id, runId)));
    expect(runs.map((run) => run.status)).toEqual(Array(RUNS).fill('completed'));
    expect(webhook.maxOpen).toBe(PER_ORIGIN);
    expect(webhook.sockets.size).toBeLessThanOrEqual(PER_ORIGIN);
    expect(webhook.bodies.map((body) => JSON.parse(body).run).sort((a, b) => a - b)).toEqual(Array.from({ length: RUNS }, (_, n) => n));
  });

  it('cancels a run whose call waits for a slot: the call never reaches the webhook', async () => {
    const created = await svc.createWorkflow({
      name: uniqueName('queued'),
      canvas: CANVAS,
      nodes: [{ name: 'Call', nodeType: 'step', executorKey: 'hold', config: { run: { $cel: 'input.n' } } }],
    });
    await svc.enable(created.id);
    const before = webhook.bodies.length;
    const holders = await Promise.all(Array.from({ length: PER_ORIGIN }, (_, n) => svc.trigger(created.id, { initialInput: { n } })));
    await webhook.untilReceived(before + PER_ORIGIN);
    const waiting = await svc.trigger(created.id, { initialInput: { n: 'queued' } });
    const waitingId = waiting.body.runId as string;
    await svc.waitForRun(created.id, waitingId, { until: ['running'] });
    // Its node run started: the call is waiting for a slot.
    await quiet(200);
    expect(webhook.bodies).toHaveLength(before + PER_ORIGIN);
    const cancelled = await svc.api.post(wf(`/${created.id}/runs/${waitingId}/cancel`), { reason: 'no longer needed' });
    expect(cancelled.status).toBeLessThan(300);
    expect((await svc.waitForRun(created.id, waitingId)).status).toBe('cancelled');
    webhook.releaseAll();
    const ends = await Promise.all(holders.map((response) => svc.waitForRun(created.id, response.body.runId)));
    expect(ends.map((run) => run.status)).toEqual(Array(PER_ORIGIN).fill('completed'));
    await quiet(100);
    expect(webhook.bodies.slice(before).map((body) => JSON.parse(body).run)).not.toContain('queued');
    expect(webhook.bodies).toHaveLength(before + PER_ORIGIN);
  });
});
