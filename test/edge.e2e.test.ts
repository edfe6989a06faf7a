/**
 * The edge over real HTTP (issue #9 item 8), as a browser canvas on another origin meets it: a
 * preflight, real triggers and approvals up to the per-client limits and the 429 after them, the
 * live event stream with CORS headers, and Swagger UI with its CSP. The details of each plugin:
 * apps/api/test/edge.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

const ORIGIN = 'https://canvas.example.com';

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ edge: { corsOrigins: [ORIGIN], rateLimits: { triggers: 3, approvals: 2 } } });
});
afterAll(async () => {
  await svc?.close();
});

/** A request from the canvas page: `Origin` set, JSON body. */
function fromCanvas(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${svc.baseUrl}${path}`, {
    method,
    headers: { origin: ORIGIN, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe('a browser canvas on another origin', () => {
  it('passes the preflight of a trigger with an Idempotency-Key and identity headers', async () => {
    const response = await fetch(`${svc.baseUrl}${wf('/0123456789abcdef01234567/runs')}`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,idempotency-key,x-switchyard-username' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    for (const header of ['content-type', 'idempotency-key', 'x-switchyard-username']) expect(response.headers.get('access-control-allow-headers')).toContain(header);
  });

  it('triggers and decides up to the limits, then gets 429 with Retry-After it can read; reads are never limited', async () => {
    const gated = await svc.createWorkflow({
      name: uniqueName('edge gate'),
      canvas: CANVAS,
      nodes: [echoStep('Gate', { v: 1 }, { humanReview: { requiresConfirmation: true } })],
    });
    const plain = await svc.createWorkflow({ name: uniqueName('edge plain'), canvas: CANVAS, nodes: [echoStep('Only', { v: 2 })] });
    await svc.enable(gated.id);
    await svc.enable(plain.id);

    const first = await fromCanvas('POST', wf(`/${gated.id}/runs`), {});
    expect(first.status).toBe(202);
    expect(first.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    const gateRun = ((await first.json()) as { runId: string }).runId;
    expect((await fromCanvas('POST', wf(`/${plain.id}/runs`), {})).status).toBe(202);
    expect((await fromCanvas('POST', wf(`/${plain.id}/runs`), {}, { 'idempotency-key': 'k1' })).status).toBe(202);

    const refused = await fromCanvas('POST', wf(`/${plain.id}/runs`), {});
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(refused.headers.get('access-control-expose-headers')).toContain('retry-after');
    expect(await refused.json()).toEqual({ detail: { error: 'rate_limited', message: expect.stringContaining('at most 3 a minute from one client') } });

    for (let i = 0; i < 20; i++) expect((await fromCanvas('GET', wf(`/${gated.id}/runs/${gateRun}`))).status).toBe(200);
    const gate = await svc.waitForGate(gated.id, gateRun);
    const stepId = gate.pendingRequirements[0].stepId as string;

    expect((await fromCanvas('POST', wf(`/${gated.id}/runs/${gateRun}/approve`), { stepId, resolution: 'confirm' })).status).toBe(200);
    expect((await fromCanvas('POST', wf(`/${gated.id}/runs/${gateRun}/approve`), { stepId, resolution: 'confirm' })).status).toBe(409);
    const tooMany = await fromCanvas('POST', wf(`/${gated.id}/runs/${gateRun}/cancel`), {});
    expect(tooMany.status).toBe(429);
    expect(((await tooMany.json()) as { detail: { error: string } }).detail.error).toBe('rate_limited');

    const run = await svc.waitForRun(gated.id, gateRun);
    expect(run.status).toBe('completed');

    // The run's events, live, with the CORS and security headers on the stream.
    const stream = await fromCanvas('GET', wf(`/${gated.id}/runs/${gateRun}/events/stream`), undefined, { accept: 'text/event-stream' });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(stream.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await stream.text()).toContain('event: run.completed');
  });

  it('gets nothing from another origin: no CORS header, so the browser refuses the answer', async () => {
    const response = await fetch(`${svc.baseUrl}${wf()}`, { headers: { origin: 'https://evil.example.com' } });
    expect(response.status).toBe(200);
    expect([...response.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });
});

describe('security headers over HTTP', () => {
  it('on API answers, and Swagger UI still loads under its own CSP', async () => {
    const api = await fetch(`${svc.baseUrl}${wf()}`);
    expect(api.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(api.headers.get('x-frame-options')).toBe('DENY');
    const docs = await fetch(`${svc.baseUrl}/docs/`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await docs.text()).toContain('swagger-initializer.js');
    expect((await fetch(`${svc.baseUrl}/docs/static/swagger-initializer.js`)).status).toBe(200);
  });
});
