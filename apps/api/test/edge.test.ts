/**
 * The edge (issue #9 item 8) through app.inject, with stand-in services that know no workflow:
 * its configuration (config.ts), CORS (plugins/cors.ts), security headers and Swagger UI's CSP
 * (plugins/security-headers.ts), and per-client rate limits (plugins/rate-limits.ts). The same
 * over real HTTP, with real runs: test/edge.e2e.test.ts.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type BuildAppOptions } from '../src/app.ts';
import { DEFAULT_APPROVALS_PER_MINUTE, DEFAULT_TRIGGERS_PER_MINUTE, loadConfig } from '../src/config.ts';
import { CORS_ALLOWED_HEADERS } from '../src/plugins/cors.ts';
import type { AppServices } from '../src/services/index.ts';
import { openApiDocument, operations, schemaCompiler, type OpenApiDocument } from './openapi-document.ts';

const CANVAS = 'https://canvas.example.com';
const ID = '0123456789abcdef01234567';
const WF = `/api/v1/workflows/${ID}`;
const RUN = `${WF}/runs/${ID}`;

/** Repositories that know nothing: every route answers before doing any work. */
const services = {
  repos: {
    definitions: { get: async () => null },
    runs: { get: async () => null, getInWorkflow: async () => null, getViewInWorkflow: async () => null, gateOf: async () => null, latestGateOf: async () => null },
  },
} as unknown as AppServices;

const apps: FastifyInstance[] = [];
async function app(options: Omit<BuildAppOptions, 'services'> = {}): Promise<FastifyInstance> {
  const built = await buildApp({ services, docs: false, ...options });
  apps.push(built);
  return built;
}
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

/** The `access-control-*` headers of an answer. */
function corsHeaders(response: LightMyRequestResponse): Record<string, unknown> {
  return Object.fromEntries(Object.entries(response.headers).filter(([name]) => name.startsWith('access-control-')));
}

function preflight(origin: string, method = 'POST', headers = 'content-type, idempotency-key'): InjectOptions {
  return { method: 'OPTIONS', url: `${WF}/runs`, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } };
}

describe('configuration', () => {
  it('defaults: no CORS origins, rate limits of 6,000 triggers (100 a second) and 1,200 approvals a minute', () => {
    const config = loadConfig({});
    expect(config.corsOrigins).toEqual([]);
    expect(config.rateLimitTriggersPerMinute).toBe(DEFAULT_TRIGGERS_PER_MINUTE);
    expect(config.rateLimitApprovalsPerMinute).toBe(DEFAULT_APPROVALS_PER_MINUTE);
    expect([DEFAULT_TRIGGERS_PER_MINUTE, DEFAULT_APPROVALS_PER_MINUTE]).toEqual([6_000, 1_200]);
    expect(loadConfig({ SWITCHYARD_CORS_ORIGINS: '' }).corsOrigins).toEqual([]);
  });

  it('reads comma-separated exact origins (spaces and empty entries ignored, duplicates dropped), or * alone', () => {
    const env = { SWITCHYARD_CORS_ORIGINS: ` ${CANVAS}, http://localhost:5173,,http://[::1]:8080 , ${CANVAS}` };
    expect(loadConfig(env).corsOrigins).toEqual([CANVAS, 'http://localhost:5173', 'http://[::1]:8080']);
    expect(loadConfig({ SWITCHYARD_CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
  });

  it.each([
    ['*, https://canvas.example.com', "SWITCHYARD_CORS_ORIGINS: '*' allows every origin and cannot be combined with other origins"],
    ['canvas.example.com', "SWITCHYARD_CORS_ORIGINS: 'canvas.example.com' is not an origin (scheme://host[:port], e.g. https://canvas.example.com)"],
    ['ftp://canvas.example.com', "SWITCHYARD_CORS_ORIGINS: 'ftp://canvas.example.com' is not an http or https origin"],
    ['https://canvas.example.com/', "'https://canvas.example.com/' is not an exact origin (scheme://host[:port], no path, no trailing slash); write 'https://canvas.example.com'"],
    ['https://canvas.example.com/app', "write 'https://canvas.example.com'"],
    ['https://Canvas.Example.com', "write 'https://canvas.example.com'"],
    ['https://canvas.example.com:443', "write 'https://canvas.example.com'"],
  ])('refuses SWITCHYARD_CORS_ORIGINS=%j', (value, message) => {
    expect(() => loadConfig({ SWITCHYARD_CORS_ORIGINS: value })).toThrow(message);
  });

  it('reads the rate limits as integers from 0 (off) to 1,000,000 and names the variable of a bad one', () => {
    const config = loadConfig({ SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: '0', SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE: '30' });
    expect([config.rateLimitTriggersPerMinute, config.rateLimitApprovalsPerMinute]).toEqual([0, 30]);
    for (const name of ['SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE', 'SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE']) {
      for (const bad of ['-1', '1.5', 'ten', '1000001']) {
        expect(() => loadConfig({ [name]: bad })).toThrow(`${name} must be an integer between 0 and 1000000, got '${bad}'`);
      }
    }
  });
});

describe('CORS', () => {
  let cors: FastifyInstance;
  beforeAll(async () => {
    cors = await app({ corsOrigins: [CANVAS, 'http://localhost:5173'] });
  });

  it('answers a preflight from an allowed origin with 204 and what the API accepts', async () => {
    const response = await cors.inject(preflight(CANVAS, 'POST', 'content-type, idempotency-key, authorization, x-switchyard-user-id'));
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect(response.headers['access-control-allow-origin']).toBe(CANVAS);
    expect(String(response.headers['access-control-allow-methods']).split(', ')).toEqual(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']);
    const allowed = String(response.headers['access-control-allow-headers']).split(', ');
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'idempotency-key', 'authorization', 'x-api-key', 'last-event-id']));
    expect(allowed).toEqual(expect.arrayContaining(['x-switchyard-user-id', 'x-switchyard-username', 'x-switchyard-scopes', 'x-switchyard-groups']));
    expect(response.headers['access-control-max-age']).toBe('600');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    expect(response.headers.vary).toContain('Origin');
  });

  it('allows every header the API reads: content-type, idempotency-key, authorization, x-api-key, last-event-id, x-switchyard-*', () => {
    expect([...CORS_ALLOWED_HEADERS].sort()).toEqual(
      ['authorization', 'content-type', 'idempotency-key', 'last-event-id', 'x-api-key', 'x-switchyard-groups', 'x-switchyard-scopes', 'x-switchyard-user-id', 'x-switchyard-username'].sort(),
    );
  });

  it('answers preflights of every route, PUT and DELETE included, and from each allowed origin', async () => {
    for (const [origin, method, url] of [
      ['http://localhost:5173', 'PUT', WF],
      [CANVAS, 'DELETE', RUN],
      [CANVAS, 'POST', `${RUN}/approve`],
      [CANVAS, 'GET', `${RUN}/events/stream`],
    ] as const) {
      const response = await cors.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method } });
      expect(response.statusCode, `${method} ${url}`).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(origin);
    }
  });

  it('gives an actual request from an allowed origin Access-Control-Allow-Origin and exposes Retry-After', async () => {
    const response = await cors.inject({ method: 'GET', url: WF, headers: { origin: CANVAS } });
    expect(response.statusCode).toBe(404); // the stand-in knows no workflow; errors need the headers too
    expect(response.headers['access-control-allow-origin']).toBe(CANVAS);
    expect(String(response.headers['access-control-expose-headers']).split(', ')).toEqual(
      expect.arrayContaining(['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']),
    );
  });

  it('gives a disallowed origin no CORS header at all: its preflight is a 404 in the error format', async () => {
    for (const origin of ['https://evil.example.com', 'https://canvas.example.com.evil.example', 'http://canvas.example.com', 'null']) {
      const pre = await cors.inject(preflight(origin));
      expect(pre.statusCode, origin).toBe(404);
      expect(pre.json().detail.error).toBe('resource_not_found');
      expect(corsHeaders(pre), origin).toEqual({});
      const actual = await cors.inject({ method: 'GET', url: WF, headers: { origin } });
      expect(corsHeaders(actual), origin).toEqual({});
    }
  });

  it('gives a request without Origin (same origin, curl) no CORS header', async () => {
    const response = await cors.inject({ method: 'GET', url: WF });
    expect(corsHeaders(response)).toEqual({});
    expect(response.headers.vary).toContain('Origin');
  });

  it('answers an OPTIONS from an allowed origin without Access-Control-Request-Method as a preflight, not a plain-text 400', async () => {
    const response = await cors.inject({ method: 'OPTIONS', url: `${WF}/runs`, headers: { origin: CANVAS } });
    expect(response.statusCode).toBe(204);
  });

  it('with * allows any origin', async () => {
    const any = await app({ corsOrigins: ['*'] });
    const pre = await any.inject(preflight('https://anywhere.example.org'));
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    const actual = await any.inject({ method: 'GET', url: WF, headers: { origin: 'https://anywhere.example.org' } });
    expect(actual.headers['access-control-allow-origin']).toBe('*');
  });

  it('is off by default: no CORS headers, a preflight is a 404', async () => {
    const plain = await app();
    const pre = await plain.inject(preflight(CANVAS));
    expect(pre.statusCode).toBe(404);
    expect(corsHeaders(pre)).toEqual({});
    expect(corsHeaders(await plain.inject({ method: 'GET', url: WF, headers: { origin: CANVAS } }))).toEqual({});
  });
});

describe('security headers', () => {
  let docs: FastifyInstance;
  beforeAll(async () => {
    docs = await app({ docs: true });
  });

  it('puts a locked-down CSP and helmet defaults on API answers, errors included', async () => {
    for (const response of [await docs.inject({ method: 'GET', url: WF }), await docs.inject({ method: 'GET', url: '/healthz' }), await docs.inject({ method: 'GET', url: '/nope' })]) {
      expect(response.headers['content-security-policy']).toBe("default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'");
      expect(response.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'strict-transport-security': 'max-age=31536000; includeSubDomains',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
      });
      expect(response.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('still serves Swagger UI at /docs, with a CSP that lets its own scripts and styles run', async () => {
    const page = await docs.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain('upgrade-insecure-requests');
    // Every script of the page is a file of the service (script-src 'self' needs no 'unsafe-inline'), and each is served.
    const scripts = [...page.body.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!);
    expect(scripts.length).toBeGreaterThanOrEqual(3);
    for (const attributes of scripts) {
      const src = /src="([^"]+)"/.exec(attributes)?.[1];
      expect(src, `inline script: <script${attributes}>`).toBeDefined();
      const file = await docs.inject({ method: 'GET', url: new URL(src!, 'http://service/docs/').pathname });
      expect(file.statusCode, src).toBe(200);
      expect(file.headers['content-type'], src).toContain('javascript');
      expect(file.headers['content-security-policy']).toBe(page.headers['content-security-policy']);
    }
    const spec = await docs.inject({ method: 'GET', url: '/docs/json' });
    expect(spec.statusCode).toBe(200);
    expect(spec.json().openapi).toBe('3.1.0');
  });
});

describe('rate limits', () => {
  let limited: FastifyInstance;
  let document: OpenApiDocument;
  let compile: ReturnType<typeof schemaCompiler>;
  beforeAll(async () => {
    // The client is the `x-client` header here (the keyOf seam), so that each test has its own counters.
    limited = await app({
      corsOrigins: [CANVAS],
      rateLimits: { triggers: 3, approvals: 2, definitions: 2, keyOf: (request) => String(request.headers['x-client'] ?? request.ip) },
    });
    document = await openApiDocument();
    compile = schemaCompiler(document);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const post = (client: string, url: string, headers: Record<string, string> = {}) =>
    limited.inject({ method: 'POST', url, headers: { 'x-client': client, ...headers }, payload: {} });

  it('refuses the 4th trigger of a minute with 429 rate_limited, Retry-After and the declared error body', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await post('a', `${WF}/runs`));
    // The first three reach the route (the stand-in knows no workflow: 404); the limit counts requests, not successes.
    expect(answers.map((r) => r.statusCode)).toEqual([404, 404, 404, 429]);
    expect(answers.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    const refused = answers[3]!;
    expect(refused.json()).toEqual({
      detail: { error: 'rate_limited', message: 'Too many trigger requests (trigger, retry, replay, node rerun, event posts): at most 3 a minute from one client; retry in 60 s' },
    });
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['x-ratelimit-limit']).toBe('3');
    const validate = compile('paths/~1api~1v1~1workflows~1{workflow_id}~1runs/post/responses/429/content/application~1json/schema');
    expect(validate(refused.json()), JSON.stringify(validate.errors)).toBe(true);
    expect(document.paths['/api/v1/workflows/{workflow_id}/runs']?.post?.responses['429']?.headers).toHaveProperty('retry-after');
  });

  it('counts trigger, retry, replay and node rerun together, and never limits GETs or other routes', async () => {
    expect((await post('b', `${WF}/runs`)).statusCode).toBe(404);
    expect((await post('b', `${RUN}/retry`)).statusCode).toBe(404);
    expect((await post('b', `${RUN}/replay`)).statusCode).toBe(404);
    for (const url of [`${WF}/runs`, `${RUN}/retry`, `${RUN}/replay`, `${RUN}/nodes/a/rerun`]) expect((await post('b', url)).statusCode, url).toBe(429);
    for (let i = 0; i < 10; i++) {
      for (const url of [WF, `${WF}/runs`, RUN, `/api/v1/runs/${ID}`, '/healthz']) {
        const response = await limited.inject({ method: 'GET', url, headers: { 'x-client': 'b' } });
        expect(response.statusCode, url).not.toBe(429);
        expect(response.headers['x-ratelimit-limit'], url).toBeUndefined();
      }
    }
    expect((await post('b', `${WF}/toggle`)).statusCode).not.toBe(429);
    // Approvals (human requests among them) have their own counter.
    expect((await post('b', `${RUN}/human-requests`)).statusCode).not.toBe(429);
    expect((await post('b', `${RUN}/approve`)).statusCode).not.toBe(429);
  });

  it('limits approve, pause, resume, cancel and human requests together under their own limit', async () => {
    expect((await post('c', `${RUN}/approve`)).statusCode).toBe(400); // empty body: validation, after the limit
    expect((await post('c', `${RUN}/pause`)).statusCode).toBe(404);
    const refused = await post('c', `${RUN}/cancel`);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().detail).toEqual({
      error: 'rate_limited',
      message: 'Too many approval requests (approve, pause, resume, cancel, human requests): at most 2 a minute from one client; retry in 60 s',
    });
    expect((await post('c', `${RUN}/resume`)).statusCode).toBe(429);
    expect((await post('c', `${RUN}/approve`)).statusCode).toBe(429);
    expect((await post('c', `${RUN}/human-requests`)).statusCode).toBe(429);
    expect((await post('c', `${WF}/runs`)).statusCode).toBe(404); // triggers are counted apart
  });

  it('limits create, update and validate together (definition checks cost the most CPU), apart from triggers', async () => {
    expect((await post('g', '/api/v1/workflows/validate')).statusCode).toBe(400); // empty body: validation, after the limit
    expect((await limited.inject({ method: 'PUT', url: WF, headers: { 'x-client': 'g' }, payload: {} })).statusCode).not.toBe(429);
    const refused = await post('g', '/api/v1/workflows');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().detail.message).toBe('Too many definition requests (create, update, validate a workflow): at most 2 a minute from one client; retry in 60 s');
    expect((await post('g', '/api/v1/workflows/validate')).statusCode).toBe(429);
    expect((await post('g', `${WF}/runs`)).statusCode).toBe(404);
  });

  it('counts each client apart', async () => {
    for (let i = 0; i < 3; i++) await post('d', `${WF}/runs`);
    expect((await post('d', `${WF}/runs`)).statusCode).toBe(429);
    expect((await post('e', `${WF}/runs`)).statusCode).toBe(404);
  });

  it('lets the client in again when its minute is over (clock moved, no waiting)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    for (let i = 0; i < 3; i++) await post('f', `${WF}/runs`);
    vi.setSystemTime(Date.now() + 30_000);
    const refused = await post('f', `${WF}/runs`);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('30');
    vi.setSystemTime(Date.now() + 30_000);
    expect((await post('f', `${WF}/runs`)).statusCode).toBe(404);
  });

  it('gives a 429 to an allowed origin with the CORS headers, so that the page can read Retry-After', async () => {
    for (let i = 0; i < 3; i++) await post('g', `${WF}/runs`, { origin: CANVAS });
    const refused = await post('g', `${WF}/runs`, { origin: CANVAS });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['access-control-allow-origin']).toBe(CANVAS);
    expect(String(refused.headers['access-control-expose-headers'])).toContain('retry-after');
    expect(refused.headers['content-security-policy']).toBeDefined();
  });

  it('keys by client IP by default', async () => {
    const byIp = await app({ rateLimits: { triggers: 1, approvals: 1 } });
    expect((await byIp.inject({ method: 'POST', url: `${WF}/runs`, remoteAddress: '192.0.2.1' })).statusCode).toBe(404);
    expect((await byIp.inject({ method: 'POST', url: `${WF}/runs`, remoteAddress: '192.0.2.1' })).statusCode).toBe(429);
    expect((await byIp.inject({ method: 'POST', url: `${WF}/runs`, remoteAddress: '192.0.2.2' })).statusCode).toBe(404);
    // IPv6 clients by /64 network.
    expect((await byIp.inject({ method: 'POST', url: `${WF}/runs`, remoteAddress: '2001:db8:0:1::1' })).statusCode).toBe(404);
    expect((await byIp.inject({ method: 'POST', url: `${WF}/runs`, remoteAddress: '2001:db8:0:1::2' })).statusCode).toBe(429);
  });

  it('a limit of 0 turns its group off; by default (no rateLimits) nothing is limited', async () => {
    const triggersOff = await app({ rateLimits: { triggers: 0, approvals: 1 } });
    for (let i = 0; i < 20; i++) expect((await triggersOff.inject({ method: 'POST', url: `${WF}/runs`, payload: {} })).statusCode).toBe(404);
    await triggersOff.inject({ method: 'POST', url: `${RUN}/pause` });
    expect((await triggersOff.inject({ method: 'POST', url: `${RUN}/pause` })).statusCode).toBe(429);
    const unlimited = await app();
    for (let i = 0; i < 50; i++) {
      const responses = await Promise.all([
        unlimited.inject({ method: 'POST', url: `${WF}/runs`, payload: {} }),
        unlimited.inject({ method: 'POST', url: `${RUN}/approve`, payload: { stepId: 'a', resolution: 'confirm' } }),
      ]);
      expect(responses.map((r) => r.statusCode)).toEqual([404, 404]);
    }
  });

  it('declares the 429 in OpenAPI on exactly the limited operations', () => {
    const declared = operations(document)
      .filter(({ operation }) => operation.responses['429'] !== undefined)
      .map(({ operation }) => operation.operationId)
      .sort();
    expect(declared).toEqual([
      'approveRequirement',
      'backfillSchedule',
      'cancelRun',
      'createHumanRequest',
      'createSchedule',
      'createWorkflow',
      'pauseRun',
      'postEvent',
      'replaceWorkflowAccess',
      'replayRun',
      'rerunNode',
      'resumeRun',
      'retryRun',
      'triggerRun',
      'triggerSchedule',
      'updateSchedule',
      'updateWorkflow',
      'validateWorkflow',
    ]);
  });
});
