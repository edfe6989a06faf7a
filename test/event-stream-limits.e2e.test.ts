/**
 * Bounds of run event streams (issue #16 item 9): a caller holds at most a few streams at once,
 * and the service ends a stream after its lifetime or when the caller's token expires, on the
 * injected clock (the client then resumes with `Last-Event-ID`).
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '@switchyard/api';
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

const SECRET = 'an-event-stream-secret-of-32-bytes!!';
const LIFETIME_MS = 600_000;

/** A token issued now that expires `expiresInSeconds` after `from` (ms; default now). */
function token(sub: string, expiresInSeconds: number, from = Date.now()): Promise<string> {
  return new SignJWT({ scope: 'workflows-read workflows-write workflows-control' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(from / 1000) + expiresInSeconds)
    .sign(new TextEncoder().encode(SECRET));
}

/** An open stream: its status, a promise of the first event's text, and one that settles when the server ends it. */
async function openStream(url: string, bearer: string) {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${bearer}` }, signal: controller.signal });
  if (response.status !== 200) return { status: response.status, body: (await response.json()) as any, abort: () => controller.abort() };
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let firstEvent!: () => void;
  const started = new Promise<void>((resolve) => (firstEvent = resolve));
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'ended by the server';
        text += decoder.decode(value, { stream: true });
        if (text.includes('\nid: ') || text.startsWith('id: ')) firstEvent();
      }
    } catch {
      return 'aborted';
    }
  })();
  return { status: 200, started, ended, abort: () => controller.abort() };
}

describe('event streams', () => {
  let svc: TestService;
  let clock: ManualClock;
  let streamUrl: string;
  let user: string;
  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    svc = await startService({
      clock,
      edge: {
        authenticator: await Authenticator.create({ modes: ['jwt'], jwt: { secret: SECRET }, trustProxyIdentity: false }),
        edge: { sseMaxStreamsPerCaller: 2, sseMaxLifetimeMs: LIFETIME_MS },
      },
      apiHeaders: { authorization: `Bearer ${await token('setup', 3600)}` },
    });
    // A run parked at a gate: its stream stays open until the service ends it.
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('sse-limits'),
      canvas: CANVAS,
      nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true } })],
    });
    await svc.waitForRun(workflowId, runId, { until: ['awaiting_approval'] });
    // Every caller of these tests may watch it (issue #18: streams need the viewer role).
    await svc.share(workflowId, { viewers: ['*'] });
    streamUrl = `${svc.baseUrl}${wf(`/${workflowId}/runs/${runId}/events/stream`)}`;
    user = await token('watcher', 3600);
  });
  afterAll(() => svc?.close());

  it('refuses a third stream of one caller with 429, serves another caller, and serves again once one closes', async () => {
    const first = await openStream(streamUrl, user);
    const second = await openStream(streamUrl, user);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await openStream(streamUrl, user);
    expect(third.status).toBe(429);
    expect(third.body.detail).toMatchObject({ error: 'rate_limited' });
    expect(third.body.detail.message).toContain('SWITCHYARD_SSE_MAX_STREAMS_PER_CALLER');
    const someoneElse = await openStream(streamUrl, await token('other', 3600));
    expect(someoneElse.status).toBe(200);

    first.abort();
    await first.ended;
    await expect.poll(async () => {
      const again = await openStream(streamUrl, user);
      again.abort();
      return again.status;
    }).toBe(200);
    second.abort();
    someoneElse.abort();
  });

  it('frees a place when a stream ends, though its keep-alive connection stays open', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('sse-ended'), canvas: CANVAS, nodes: [echoStep('A')] });
    await svc.waitForRun(workflowId, runId);
    await svc.share(workflowId, { viewers: ['*'] });
    const endedRunStream = `${svc.baseUrl}${wf(`/${workflowId}/runs/${runId}/events/stream`)}`;
    const reader = await token('sequential-reader', 3600);
    // Each stream of an ended run ends by itself after its final event; fetch reuses the connection.
    for (let i = 0; i < 5; i++) {
      const stream = await openStream(endedRunStream, reader);
      expect(stream.status, `stream ${i + 1}`).toBe(200);
      expect(await stream.ended).toBe('ended by the server');
    }
  });

  it('ends a stream when its lifetime is over', async () => {
    const stream = await openStream(streamUrl, await token('long-watcher', 3 * 3600));
    expect(stream.status).toBe(200);
    await stream.started;
    await clock.advance(LIFETIME_MS - 1_000);
    const stillOpen = await Promise.race([stream.ended, new Promise((resolve) => setTimeout(() => resolve('open'), 50))]);
    expect(stillOpen).toBe('open');
    await clock.advance(1_000);
    expect(await stream.ended).toBe('ended by the server');
  });

  it("ends a stream when the caller's token expires, before its lifetime", async () => {
    // Expiring 120 s after the service's (manual) clock's now, which runs ahead of real time here.
    const stream = await openStream(streamUrl, await token('short-token', 120, clock.now().getTime()));
    expect(stream.status).toBe(200);
    await stream.started;
    await clock.advance(110_000);
    const stillOpen = await Promise.race([stream.ended, new Promise((resolve) => setTimeout(() => resolve('open'), 50))]);
    expect(stillOpen).toBe('open');
    await clock.advance(11_000);
    expect(await stream.ended).toBe('ended by the server');
  });
});
