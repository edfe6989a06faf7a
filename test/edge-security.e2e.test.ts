/**
 * The edge against a hostile web page and a hostile client (issue #16 items 3 and 8), over real
 * sockets: a page that rebinds its name to 127.0.0.1 (foreign `Host`), a page that posts
 * body-less control requests cross-site (foreign `Origin`), a client trickling a body (slowloris),
 * a client holding many connections. curl-like clients (no `Origin`) keep working.
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier, Authenticator, newApiKey, SCOPES } from '@switchyard/api';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

/** One raw HTTP/1.1 request with exactly the headers given (Host included); status and JSON body. */
function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, setHost: false, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? null : JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A socket to `baseUrl` that collects what the server sends; `closed` settles when the server closes it. */
function openSocket(baseUrl: string): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

describe('without authentication (the default on loopback)', () => {
  let svc: TestService;
  let host: string;
  beforeAll(async () => {
    svc = await startService();
    host = new URL(svc.baseUrl).host;
  });
  afterAll(() => svc?.close());

  it('refuses a rebinding Host, answers loopback names on its own port', async () => {
    const rebound = await rawRequest(svc.baseUrl, 'GET', wf(), { host: `evil.example:${new URL(svc.baseUrl).port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body.detail.error).toBe('host_not_allowed');
    const created = await rawRequest(svc.baseUrl, 'POST', wf(), { host: 'attacker.test', 'content-type': 'application/json', 'content-length': '2' });
    expect(created.status).toBe(403);
    const otherPort = await rawRequest(svc.baseUrl, 'GET', wf(), { host: 'localhost:1' });
    expect(otherPort.status).toBe(403);
    for (const name of ['127.0.0.1', 'localhost', '[::1]']) {
      const own = await rawRequest(svc.baseUrl, 'GET', wf(), { host: `${name}:${new URL(svc.baseUrl).port}` });
      expect(own.status, name).toBe(200);
    }
  });

  it('refuses a body-less POST from a foreign Origin, runs the same POST without an Origin (curl) or from its own page', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('origin'), canvas: CANVAS, nodes: [echoStep('A')] });
    await svc.waitForRun(workflowId, runId);
    const replay = wf(`/${workflowId}/runs/${runId}/replay`);
    const foreign = await rawRequest(svc.baseUrl, 'POST', replay, { host, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.detail.error).toBe('origin_not_allowed');
    const sandboxed = await rawRequest(svc.baseUrl, 'POST', replay, { host, origin: 'null' });
    expect(sandboxed.status).toBe(403);
    // Nothing was replayed by the refused requests.
    const runs = await svc.api.get(wf(`/${workflowId}/runs`));
    expect(runs.body.runs).toHaveLength(1);

    const curl = await rawRequest(svc.baseUrl, 'POST', replay, { host });
    expect(curl.status).toBe(202);
    const ownPage = await rawRequest(svc.baseUrl, 'POST', replay, { host, origin: `http://${host}` });
    expect(ownPage.status).toBe(202);
    // A GET (no state change) from anywhere is answered; CORS keeps its body from a foreign page.
    expect((await rawRequest(svc.baseUrl, 'GET', wf(), { host, origin: 'https://evil.example' })).status).toBe(200);
  });
});

describe('trusted-proxy mode (no credential mode)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ trustProxyIdentity: true });
  });
  afterAll(() => svc?.close());

  it('refuses a rebinding Host even when the request carries the proxy headers a page could send', async () => {
    const port = new URL(svc.baseUrl).port;
    const headers = { 'x-switchyard-user-id': 'admin', 'x-switchyard-scopes': 'workflows-read workflows-write' };
    const rebound = await rawRequest(svc.baseUrl, 'GET', wf(), { ...headers, host: `evil.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body.detail.error).toBe('host_not_allowed');
    expect((await rawRequest(svc.baseUrl, 'GET', wf(), { ...headers, host: `127.0.0.1:${port}` })).status).toBe(200);
  });
});

describe('with authentication, listed hosts and CORS origins', () => {
  let svc: TestService;
  const { key, entry } = newApiKey('ops', [...SCOPES]);
  const port = () => new URL(svc.baseUrl).port;
  beforeAll(async () => {
    svc = await startService({
      apiHeaders: { authorization: `Bearer ${key}` },
      edge: {
        authenticator: Authenticator.withKeys(new ApiKeyVerifier({ keys: [entry] })),
        corsOrigins: ['https://canvas.example.com'],
        edge: { allowedHosts: ['api.example.com'] },
      },
    });
  });
  afterAll(() => svc?.close());

  it('answers listed names and loopback, refuses others', async () => {
    const auth = { authorization: `Bearer ${key}` };
    expect((await rawRequest(svc.baseUrl, 'GET', wf(), { ...auth, host: 'api.example.com' })).status).toBe(200);
    expect((await rawRequest(svc.baseUrl, 'GET', wf(), { ...auth, host: `api.example.com:${port()}` })).status).toBe(200);
    expect((await rawRequest(svc.baseUrl, 'GET', wf(), { ...auth, host: 'other.example.com' })).status).toBe(403);
  });

  it('lets the listed canvas origin change state and refuses other pages before authentication', async () => {
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ name: uniqueName('cors'), canvas: CANVAS, nodes: [echoStep('A')] });
    const post = (origin: string) =>
      fetch(`${svc.baseUrl}${wf()}`, { method: 'POST', headers: { ...auth, origin }, body }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect((await post('https://canvas.example.com')).status).toBe(201);
    const refused = await post('https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.body.detail.error).toBe('origin_not_allowed');
  });

  it('closes the connection after an early 401 instead of reading the rest of the body', async () => {
    const { socket, received, closed } = await openSocket(svc.baseUrl);
    const host = new URL(svc.baseUrl).host;
    socket.write(`POST ${wf()} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":`);
    const started = Date.now();
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 401 /);
    // At once, not when the 30 s request timeout of this service ends it.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(received().toLowerCase()).toContain('connection: close');
  });
});

describe('slow and greedy clients', () => {
  let svc: TestService;
  const { key, entry } = newApiKey('ops', [...SCOPES]);
  beforeAll(async () => {
    svc = await startService({
      apiHeaders: { authorization: `Bearer ${key}` },
      edge: {
        authenticator: Authenticator.withKeys(new ApiKeyVerifier({ keys: [entry] })),
        edge: { requestTimeoutMs: 1_000, maxConnectionsPerAddress: 6 },
      },
    });
  });
  afterAll(() => svc?.close());

  it('closes a connection that trickles its body with 408 once the request timeout passes', async () => {
    const { socket, received, closed } = await openSocket(svc.baseUrl);
    const host = new URL(svc.baseUrl).host;
    socket.write(`POST ${wf()} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{`);
    // One byte every 100 ms would take ~17 minutes to finish the body.
    const trickle = setInterval(() => socket.writable && socket.write(' '), 100);
    const started = Date.now();
    await closed;
    clearInterval(trickle);
    expect(received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(received()).toContain('request_timeout');
    // Closed by the 1 s timeout (Node checks it every 250 ms here), not by the body finishing.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('refuses connections beyond the per-address cap with 429 and serves again once they close', async () => {
    const held = await Promise.all(Array.from({ length: 6 }, () => openSocket(svc.baseUrl)));
    const extra = await openSocket(svc.baseUrl);
    await extra.closed;
    expect(extra.received()).toMatch(/^HTTP\/1\.1 429 /);
    expect(extra.received()).toContain('SWITCHYARD_MAX_CONNECTIONS_PER_ADDRESS');
    for (const { socket } of held) socket.destroy();
    await Promise.all(held.map(({ closed }) => closed));
    await expect.poll(async () => (await svc.api.get(wf())).status, { timeout: 5_000 }).toBe(200);
  });
});
