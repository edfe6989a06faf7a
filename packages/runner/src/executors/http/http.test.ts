/**
 * The `http` executor called directly, against a real `node:http` server on 127.0.0.1: the
 * request it sends, how answers become outputs or failures (retryable or not, `Retry-After`),
 * cancellation, and its secrets never reaching errors, outputs or logs. Time limits and retries
 * through the step runner are in `../http-steps.test.ts`.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhookServer, hang, json, text } from '../../testing/webhook-server.ts';
import type { Responder } from '../../testing/webhook-server.ts';
import { MAX_TEXT_BYTES, parseRetryAfter } from './http.ts';
import { REDACTED } from '../shared/redact.ts';
import { createExecutorRegistry } from '../registry.ts';
import { ExecutorError } from '../types.ts';
import type { ExecutorCall, ExecutorRegistry } from '../types.ts';
import { captureLogs } from '../../testing/log-capture.ts';

const SECRET = `sk-${randomBytes(12).toString('hex')}`;

let server: WebhookServer;
let registry: ExecutorRegistry;
const captured = captureLogs();

function call(args: Record<string, unknown> = {}, signal = new AbortController().signal): ExecutorCall {
  return { arguments: args, input: 'ignored', attempt: 1, signal, context: { runId: 'r1', nodeId: 'n1', nodeName: 'Notify' } };
}

async function rejection(promise: Promise<unknown>): Promise<ExecutorError> {
  const error: unknown = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ExecutorError);
  // The secret is nowhere in the error object: message, stack, details, cause chain.
  expect(inspect(error, { depth: 20, showHidden: true })).not.toContain(SECRET);
  return error as ExecutorError;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  server = await WebhookServer.start();
  registry = createExecutorRegistry(
    {
      executors: {
        hook: { kind: 'http', url: server.url('/hook?team=ops'), headers: { Authorization: 'Bearer ${HOOK_TOKEN}', 'X-Source': 'switchyard-test' } },
        put: { kind: 'http', url: server.url('/items/1'), method: 'PUT' },
        down: { kind: 'http', url: `http://127.0.0.1:${await closedPort()}/hook` },
      },
    },
    { baseDir: '.', env: { HOOK_TOKEN: SECRET }, logger: captured.logger },
  );
});
afterEach(() => {
  server.respond(json(200, { ok: true }));
});
afterAll(async () => {
  await registry.close();
  await server.close();
  expect(captured.text()).toContain('calling webhook');
  expect(captured.text()).not.toContain(SECRET);
});

describe('http executor: requests and answers', () => {
  it('POSTs the arguments as JSON with the configured headers, and outputs a JSON answer', async () => {
    server.respond(json(200, { received: true, id: 7 }));
    const before = server.requests.length;
    await expect(registry.get('hook').invoke(call({ order: 42, tags: ['a'] }))).resolves.toEqual({ received: true, id: 7 });
    const request = server.requests[before]!;
    expect(request).toMatchObject({ method: 'POST', url: '/hook?team=ops', body: '{"order":42,"tags":["a"]}' });
    expect(request.headers).toMatchObject({ 'content-type': 'application/json', authorization: `Bearer ${SECRET}`, 'x-source': 'switchyard-test' });
    expect(registry.kindOf('hook')).toBe('http');
    expect(registry.get('hook').timeoutMs).toBe(60_000);
  });

  it('uses the configured method, and reads +json types as JSON', async () => {
    server.respond(json(200, [1, 2], { 'content-type': 'application/problem+json' }));
    await expect(registry.get('put').invoke(call({ name: 'x' }))).resolves.toEqual([1, 2]);
    expect(server.requests.at(-1)).toMatchObject({ method: 'PUT', url: '/items/1' });
  });

  it('outputs any other answer as { status, contentType, text, truncated }', async () => {
    server.respond(text(201, 'queued'));
    await expect(registry.get('put').invoke(call())).resolves.toEqual({ status: 201, contentType: 'text/plain; charset=utf-8', text: 'queued', truncated: false });
    server.respond(text(204, ''));
    await expect(registry.get('put').invoke(call())).resolves.toEqual({ status: 204, contentType: 'text/plain; charset=utf-8', text: '', truncated: false });
  });

  it('keeps at most MAX_TEXT_BYTES of a text answer', async () => {
    server.respond(text(200, 'x'.repeat(MAX_TEXT_BYTES * 3), {}, 'text/html'));
    const output = (await registry.get('put').invoke(call())) as { text: string; truncated: boolean };
    expect(output.text).toHaveLength(MAX_TEXT_BYTES);
    expect(output.truncated).toBe(true);
  });
});

describe('http executor: failures', () => {
  it('fails a 5xx answer as retryable, with the status and an excerpt of the body', async () => {
    server.respond(text(500, 'database   unavailable\nretry later'));
    const error = await rejection(registry.get('put').invoke(call()));
    expect(error).toMatchObject({
      message: `HTTP PUT ${server.url('/items/1')} answered 500: database unavailable retry later`,
      retryable: true,
      details: { status: 500, body: 'database unavailable retry later', method: 'PUT' },
    });
    expect(error.retryAfterMs).toBeUndefined();
  });

  it('fails other 4xx answers as not retryable; 408 and 429 are retryable', async () => {
    server.respond(json(404, { error: 'no such hook' }));
    expect(await rejection(registry.get('put').invoke(call()))).toMatchObject({ message: expect.stringContaining('answered 404: {"error":"no such hook"}'), retryable: false });
    server.respond(text(408, ''));
    expect(await rejection(registry.get('put').invoke(call()))).toMatchObject({ message: `HTTP PUT ${server.url('/items/1')} answered 408`, retryable: true });
    server.respond(text(302, '', { location: '/elsewhere' }));
    expect(await rejection(registry.get('put').invoke(call()))).toMatchObject({ retryable: false, details: { status: 302 } });
  });

  it('reports Retry-After of a 429 or 503 (seconds or a date), not of other statuses', async () => {
    server.respond(text(429, 'slow down', { 'retry-after': '7' }));
    expect(await rejection(registry.get('put').invoke(call()))).toMatchObject({ retryable: true, retryAfterMs: 7_000 });
    server.respond(text(503, '', { 'retry-after': new Date(Date.now() + 120_000).toUTCString() }));
    const unavailable = await rejection(registry.get('put').invoke(call()));
    expect(unavailable.retryAfterMs).toBeGreaterThan(110_000);
    expect(unavailable.retryAfterMs).toBeLessThanOrEqual(120_000);
    server.respond(text(500, '', { 'retry-after': '7' }));
    expect((await rejection(registry.get('put').invoke(call()))).retryAfterMs).toBeUndefined();
  });

  it('parses Retry-After values', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 12 ', now)).toBe(12_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('10000000', now)).toBe(86_400_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('fails a 2xx JSON answer that does not parse, not retryable', async () => {
    server.respond(text(200, '{"half": ', {}, 'application/json'));
    expect(await rejection(registry.get('put').invoke(call()))).toMatchObject({ message: expect.stringMatching(/answered 200 with invalid JSON \(.+\): \{"half":$/), retryable: false });
  });

  it('fails as retryable when it cannot connect', async () => {
    const error = await rejection(registry.get('down').invoke(call()));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^HTTP POST http:\/\/127\.0\.0\.1:\d+\/hook failed: .*ECONNREFUSED/);
  });

  it('aborts the request when the call is cancelled', async () => {
    server.respond(hang);
    const before = server.requests.length;
    const controller = new AbortController();
    const pending = registry.get('put').invoke(call({}, controller.signal));
    await server.untilRequests(before + 1);
    controller.abort(new Error('run cancelled'));
    expect(await rejection(pending)).toMatchObject({ message: 'cancelled', retryable: false });
    await server.requests[before]!.abandoned; // the server saw the connection go away
  });

  it('reports a timeout reason on the signal as a retryable timeout', async () => {
    server.respond(hang);
    const error = await rejection(registry.get('put').invoke(call({}, AbortSignal.timeout(50))));
    expect(error).toMatchObject({ message: `HTTP PUT ${server.url('/items/1')} timed out`, retryable: true });
  });
});

describe('http executor: secrets', () => {
  it('redacts header secrets from error messages, details and outputs', async () => {
    // A careless webhook that echoes the credentials it was sent.
    const echo = (status: number): Responder => (request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ youSent: request.headers['authorization'] }));
    };
    server.respond(echo(401));
    const error = await rejection(registry.get('hook').invoke(call()));
    expect(error.message).toBe(`HTTP POST ${server.url('/hook')} answered 401: {"youSent":"${REDACTED}"}`);
    expect(error.retryable).toBe(false);
    server.respond(echo(200));
    const output = await registry.get('hook').invoke(call());
    expect(output).toEqual({ youSent: REDACTED });
  });

  it('never names the query of the URL (its values are secrets too)', async () => {
    server.respond(text(500, 'boom'));
    const error = await rejection(registry.get('hook').invoke(call()));
    expect(error.message).not.toContain('team=');
    expect(error.message).not.toContain('ops');
  });
});

describe('http executor: the registry', () => {
  it('refuses calls once the registry is closed', async () => {
    const own = createExecutorRegistry({ executors: { hook: { kind: 'http', url: server.url() } } }, { baseDir: '.' });
    await expect(own.get('hook').invoke(call())).resolves.toEqual({ ok: true });
    await own.close();
    await own.close(); // idempotent
    expect(await rejection(own.get('hook').invoke(call()))).toMatchObject({ message: 'executor registry is closed', retryable: false });
  });
});
