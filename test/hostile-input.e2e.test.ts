/**
 * Input a fuzzing pass found to break the service, kept as regressions: each is a clear 400 (or a
 * node failure the user caused), never a 500, and nothing stored becomes unreadable.
 */
import { connect, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import errorHandler from '../apps/api/src/plugins/error-handler.ts';
import httpErrors, { SERVER_ERROR_OPTIONS } from '../apps/api/src/plugins/http-errors.ts';
import { CANVAS, echoStep, nested, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

const workflow = (nodes: unknown[]) => ({ name: uniqueName('hostile'), canvas: CANVAS, nodes });

function expectClear400(response: { status: number; body: any }, message: RegExp): void {
  expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(400);
  expect(response.body.detail.error).toBe('invalid_request');
  expect(response.body.detail.message).toMatch(message);
}

describe('nesting and size', () => {
  it.each([40, 3_000])('initialInput nested %i levels is a 400', async (depth) => {
    const created = await svc.createWorkflow(workflow([echoStep('A')]));
    await svc.enable(created.id);
    expectClear400(await svc.trigger(created.id, { initialInput: { x: nested(depth) } }), /nests deeper than/);
  });

  it('a body nested 100,000 levels (sent as raw text) is a 400', async () => {
    const created = await svc.createWorkflow(workflow([echoStep('A')]));
    await svc.enable(created.id);
    const raw = `{"initialInput":{"x":${'['.repeat(100_000)}0${']'.repeat(100_000)}}}`;
    const response = await svc.api.request('POST', wf(`/${created.id}/runs`), undefined, { raw, contentType: 'application/json' });
    expect(response.status).toBe(400);
    expect(response.body.detail.error).toBe('invalid_request');
  });

  it('a node tree nested hundreds of levels is a 400 before schema validation', async () => {
    let node: Record<string, unknown> = echoStep('leaf');
    for (let i = 0; i < 400; i++) node = { name: `c${i}`, nodeType: 'condition', conditionCel: 'true', trueSteps: [node] };
    expectClear400(await svc.api.post(wf(), workflow([node])), /nests deeper than 128 levels/);
  });

  it('a very wide array is measured without overflowing (no 500)', async () => {
    const created = await svc.createWorkflow(workflow([echoStep('A')]));
    await svc.enable(created.id);
    const response = await svc.trigger(created.id, { initialInput: { x: new Array(150_000).fill(0) } });
    expect(response.status).toBe(202);
  });

  it('an edited output nested thousands of levels is a 400 and the run stays readable', async () => {
    const { workflowId, runId } = await svc.startRun(workflow([{ ...echoStep('G'), id: 'g', humanReview: { requiresOutputReview: true } }]));
    await svc.waitForGate(workflowId, runId);
    expectClear400(await svc.approve(workflowId, runId, { stepId: 'g:review', resolution: 'edit', editedOutput: nested(3_000) }), /nests deeper than/);
    expectClear400(await svc.approve(workflowId, runId, { stepId: 'g:review', resolution: 'edit', editedOutput: nested(40) }), /editedOutput nests deeper than 32/);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).status).toBe(200);
    expect((await svc.approve(workflowId, runId, { stepId: 'g:review', resolution: 'edit', editedOutput: { ok: true } })).status).toBe(200);
    expect((await svc.waitForRun(workflowId, runId)).finalOutput).toEqual({ ok: true });
  });
  // Outputs too large to keep: test/bounded-reads.e2e.test.ts (SWITCHYARD_MAX_OUTPUT_BYTES).
});

describe('odd keys and text', () => {
  it('unknown keys in stepConfig and resolvedDependencies are a 400 naming them, even a NUL key', async () => {
    const refused = await svc.api.post(wf(), workflow([{ ...echoStep('A'), stepConfig: { maxRetries: 1, '\u0000': 1 } }]));
    expectClear400(refused, /body\.nodes\.0\.stepConfig has an unknown property '\u0000'/);
    expectClear400(await svc.api.post(wf(), workflow([{ ...echoStep('A'), stepConfig: { maxRetries: 1, foo_bar: 2 } }])), /unknown property 'foo_bar'/);
    const created = await svc.createWorkflow(workflow([{ ...echoStep('A'), stepConfig: { maxRetries: 1 } }]));
    expect(created.nodes[0].stepConfig).toEqual({ maxRetries: 1, onError: 'fail', backoffBaseSeconds: 1, backoffMaxSeconds: 60, timeoutSeconds: null });
    // The complete nodes the API answers are a valid update body as they are.
    const put = await svc.api.put(wf(`/${created.id}`), { nodes: created.nodes });
    expect(put.status, put.text).toBe(200);
    expect(put.body.version).toBe(1);
    await svc.enable(created.id);
    const parent = await svc.trigger(created.id, {});
    await svc.waitForRun(created.id, parent.body.runId);
    const retry = await svc.trigger(created.id, { parentRunId: parent.body.runId, resolvedDependencies: [{ nodeId: created.nodes[0].id, resolution: 'rerun', '\u0000': 1 }] });
    expectClear400(retry, /body\.resolvedDependencies\.0 has an unknown property '\u0000'/);
    // A foreign envelope is no trigger.
    expectClear400(await svc.trigger(created.id, { jsonrpc: '2.0', method: 'message/send', params: {} }), /unknown property 'jsonrpc'/);
  });

  it('a lone UTF-16 surrogate is a 400 instead of being changed silently', async () => {
    expectClear400(await svc.api.post(wf(), workflow([echoStep('A', { '\ud800': 1 })])), /well-formed Unicode/);
    expectClear400(await svc.api.post(wf(), { ...workflow([echoStep('A')]), name: 'wf-\udfff' }), /well-formed Unicode/);
  });

  it('a node named __proto__ keeps its output', async () => {
    const { run } = await svc.runWorkflow(
      workflow([{ name: 'P', nodeType: 'parallel', children: [echoStep('__proto__', { a: 1 }), echoStep('other', { b: 2 })] }, echoStep('Next', { seen: { $cel: "previous_step_content['__proto__'].arguments.a" } })]),
    );
    expect(run.status, run.errorSummary).toBe('completed');
    expect(run.finalOutput.arguments).toEqual({ seen: 1 });
  });

  it('a form field named like an Object method is required like any other', async () => {
    const { workflowId, runId } = await svc.startRun(
      workflow([{ ...echoStep('F'), id: 'f', humanReview: { requiresUserInput: true, userInputSchema: [{ name: 'constructor', fieldType: 'string' }] } }]),
    );
    await svc.waitForGate(workflowId, runId);
    expectClear400(await svc.approve(workflowId, runId, { stepId: 'f', resolution: 'confirm' }), /field 'constructor' is required/);
  });
});

describe('router-level errors', () => {
  it('a malformed URL escape and an over-long id get the common error body', async () => {
    const bad = await svc.api.get('/api/v1/workflows/%E0%A4%A');
    expect(bad.status).toBe(400);
    expect(bad.body.detail.error).toBe('invalid_request');
    const long = await svc.api.get(`/api/v1/workflows/${'a'.repeat(200)}`);
    expect(long.status).toBeGreaterThanOrEqual(400);
    expect(long.status).toBeLessThan(500);
    expect(long.body.detail.error).toBe('invalid_request');
  });
});

/** One HTTP response as read from a raw socket. */
interface RawResponse {
  status: number;
  /** The header block, lower-cased. */
  headers: string;
  body: any;
}

/** Everything the server sends on `socket` until it closes the connection. */
function readUntilClose(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('close', () => resolve(text));
    // The server may close while we still write (oversized headers): what it answered still counts.
    socket.on('error', () => {});
  });
}

/** Parses the first HTTP response of `text` (bodies here are JSON with a Content-Length). */
function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  expect(end, `no complete response in ${JSON.stringify(text.slice(0, 300))}`).toBeGreaterThan(0);
  const headers = text.slice(0, end).toLowerCase();
  const length = Number(/\r\ncontent-length: *(\d+)/.exec(headers)?.[1]);
  return { status: Number(text.slice(9, 12)), headers, body: JSON.parse(text.slice(end + 4, end + 4 + length)) };
}

/** Sends `request` verbatim on a new connection to `port` and returns the response (the request should ask for `Connection: close` unless the server closes anyway). */
async function rawHttp(port: number, request: string | Buffer): Promise<RawResponse> {
  const socket = connect(port, '127.0.0.1');
  const text = readUntilClose(socket);
  socket.write(request);
  return parseResponse(await text);
}

const portOf = (baseUrl: string) => Number(new URL(baseUrl).port);

function expectError(response: { status: number; body: any }, status: number, code: string, message: RegExp): void {
  expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(status);
  expect(response.body).toEqual({ detail: { error: code, message: expect.stringMatching(message) } });
}

describe('HTTP-level errors get the common error body', () => {
  it('a 64 KB header is a 431 headers_too_large', async () => {
    const response = await rawHttp(portOf(svc.baseUrl), `GET ${wf()} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    expectError(response, 431, 'headers_too_large', /headers are larger than \d+ bytes/);
    expect(response.headers).toContain('content-type: application/json');
  });

  it('the same with a real HTTP client', async () => {
    const response = await fetch(`${svc.baseUrl}${wf()}`, { headers: { 'x-big': 'a'.repeat(64 * 1024) } });
    expectError({ status: response.status, body: await response.json() }, 431, 'headers_too_large', /headers/);
  });

  it.each([
    ['an unknown method', `FOO ${wf()} HTTP/1.1\r\nHost: x\r\n\r\n`, /Malformed HTTP request: Invalid method/],
    ['Content-Length with Transfer-Encoding', `POST ${wf()} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, /Malformed HTTP request: Transfer-Encoding/],
    ['a missing Host header', `GET ${wf()} HTTP/1.1\r\nConnection: close\r\n\r\n`, /need a Host header/],
  ])('%s is a 400 invalid_request', async (_what, request, message) => {
    expectError(await rawHttp(portOf(svc.baseUrl), request), 400, 'invalid_request', message);
  });

  it('an Expect header other than 100-continue is a 417', async () => {
    const request = `POST ${wf()} HTTP/1.1\r\nHost: x\r\nExpect: something\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
    expectError(await rawHttp(portOf(svc.baseUrl), request), 417, 'invalid_request', /Expect header/);
  });

  it('a body over the limit is a 413 request_too_large, another content type a 415 unsupported_media_type', async () => {
    expectError(await svc.api.post(wf(), { ...workflow([echoStep('A')]), description: 'x'.repeat(1024 * 1024) }), 413, 'request_too_large', /larger than the limit of 1048576 bytes/);
    expectError(await svc.api.request('POST', wf(), undefined, { raw: '<a/>', contentType: 'application/xml' }), 415, 'unsupported_media_type', /application\/json/);
  });
});

describe('HTTP-level errors of timing (a bare server with the service\'s error options and plugins)', () => {
  /** Starts a bare server as the service's: same HTTP error options and plugins; `setup` adds routes. */
  async function bareServer(setup: (app: FastifyInstance) => void, requestTimeout = 0): Promise<{ app: FastifyInstance; port: number }> {
    const app = Fastify({ ...SERVER_ERROR_OPTIONS, requestTimeout, http: { ...SERVER_ERROR_OPTIONS.http, connectionsCheckingInterval: 20 } });
    await app.register(errorHandler);
    await app.register(httpErrors);
    setup(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { app, port: (app.server.address() as AddressInfo).port };
  }

  it('a request not received in time is a 408 request_timeout', async () => {
    const { app, port } = await bareServer(() => {}, 200);
    try {
      expectError(await rawHttp(port, 'GET / HTTP/1.1\r\nHost: x\r\n'), 408, 'request_timeout', /not received completely in time/);
    } finally {
      await app.close();
    }
  });

  it('a request arriving while the server shuts down is a 503 service_unavailable', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inSlow = new Promise<void>((resolve) => (entered = resolve));
    const { app, port } = await bareServer((app) => {
      app.get('/slow', async () => {
        entered();
        await new Promise<void>((resolve) => (release = resolve));
        return { ok: true };
      });
      app.get('/fast', async () => ({ ok: true }));
    });
    const socket = connect(port, '127.0.0.1');
    const text = readUntilClose(socket);
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inSlow;
    const closed = app.close();
    await sleep(50);
    socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(50);
    release();
    const [first, second] = (await text).split(/(?=HTTP\/1\.1 )/);
    await closed;
    expect(parseResponse(first!).status).toBe(200);
    const refused = parseResponse(second!);
    expectError(refused, 503, 'service_unavailable', /shutting down/);
    expect(refused.headers).toContain('connection: close');
  });
});

describe('JSON bodies', () => {
  it.each([
    ['at the top', '{"__proto__": {"polluted": true}, "name": "x"}'],
    ['nested in a step config', `{"name": "x", "canvas": {"viewport": {}}, "nodes": [{"name": "A", "nodeType": "step", "executorKey": "echo", "config": {"__proto__": {"polluted": true}}}]}`],
    ['written with an escape', '{"\\u005f_proto__": {"polluted": true}}'],
  ])('a __proto__ key %s is a 400 that says so', async (_where, raw) => {
    expectClear400(await svc.api.request('POST', wf(), undefined, { raw }), /contains the key '__proto__', which is not allowed/);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('a constructor.prototype key is a 400 that says so; a plain constructor key is data', async () => {
    expectClear400(await svc.api.request('POST', wf(), undefined, { raw: '{"constructor": {"prototype": {"polluted": true}}}' }), /'constructor' holding a 'prototype' key/);
    const created = await svc.createWorkflow(workflow([echoStep('A', { constructor: 'x', prototype: { constructor: 1 } })]));
    expect(created.nodes[0].config).toEqual({ constructor: 'x', prototype: { constructor: 1 } });
  });

  it('invalid UTF-8 is a 400 instead of being replaced with U+FFFD', async () => {
    const name = uniqueName('utf8');
    const [before, after] = JSON.stringify({ ...workflow([echoStep('A')]), name: `${name}-#` }).split('#');
    const bytes = Buffer.concat([Buffer.from(before!), Buffer.from([0xff]), Buffer.from(after!)]); // a lone 0xFF byte inside the name
    const response = await fetch(`${svc.baseUrl}${wf()}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes });
    expectClear400({ status: response.status, body: await response.json() }, /^The request body is not valid UTF-8$/);
    const listed = await svc.api.get(wf(`?query=${encodeURIComponent(name)}`));
    expect(listed.body.pagination.total).toBe(0);
  });

  it('valid multi-byte UTF-8 (with a byte order mark) is kept as sent', async () => {
    const name = uniqueName('Zürich ✓ 😀');
    const bytes = Buffer.from(`\uFEFF${JSON.stringify({ ...workflow([echoStep('A')]), name })}`);
    const response = await fetch(`${svc.baseUrl}${wf()}`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: bytes });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { name: string }).name).toBe(name);
  });

  it('a syntax error says where', async () => {
    expectClear400(await svc.api.request('POST', wf(), undefined, { raw: '{"name": "x",' }), /^The request body is not valid JSON: .*position 13/);
    // A body sent by mistake (e.g. a token) is not quoted back in the error.
    const token = await svc.api.request('POST', wf(), undefined, { raw: 'sk-live-0123456789abcdef' });
    expectClear400(token, /^The request body is not valid JSON: Unexpected token/);
    expect(token.text).not.toContain('sk-live');
  });
});

describe('loop bounds', () => {
  it('three nested loops of 1,000 are refused at save time, pointing at the loop that crosses the bound', async () => {
    const loop = (name: string, children: unknown[]) => ({ name, nodeType: 'loop', loopConfig: { maxIterations: 1000 }, children });
    const response = await svc.api.post(wf(), workflow([loop('Outer', [loop('Middle', [loop('Inner', [echoStep('Body')])])])]));
    expectClear400(response, /at most 100,000/);
    expect(response.body.detail.problems).toEqual([expect.stringMatching(/^Node 'Middle' \(nodes\[0\]\.children\[0\]\): loopConfig\.maxIterations: nested loops would run up to 1,000,000 iterations/)]);
  });
});
