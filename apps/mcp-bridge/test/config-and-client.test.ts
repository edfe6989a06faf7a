/**
 * The bridge's start-up flags, its REST client's requests (bearer token, JSON, query) and the
 * mapping of REST answers to envelope error codes, against a real local HTTP server.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ApiUnavailableError, ConfigError, createApiClient, createApiClientPool, parseConfig } from '@switchyard/mcp-bridge';
import { errorOf } from '../src/envelope.ts';

describe('parseConfig', () => {
  it('reads flags over environment over defaults', () => {
    expect(parseConfig([], {})).toEqual({
      apiUrl: 'http://127.0.0.1:8080',
      apiToken: null,
      allowedTools: null,
      readOnly: false,
      surface: 'semantic',
      http: null,
      requestTimeoutMs: 30_000,
    });
    const config = parseConfig(
      ['--api-url', 'https://api.example.com/base/', '--api-token', 't0k', '--surface', 'orchestrator', '--read-only', '--allowed-tools', 'a, b,,c', '--http', '0', '--host', '0.0.0.0', '--allowed-hosts', 'mcp.example.com'],
      { SWITCHYARD_API_URL: 'http://ignored', SWITCHYARD_API_TOKEN: 'ignored' },
    );
    expect(config).toMatchObject({ apiUrl: 'https://api.example.com/base', apiToken: 't0k', surface: 'orchestrator', readOnly: true, allowedTools: ['a', 'b', 'c'], http: { port: 0, host: '0.0.0.0', auth: 'bearer', allowedHosts: ['mcp.example.com'] } });
    expect(parseConfig([], { SWITCHYARD_API_URL: 'http://10.0.0.5:9000', SWITCHYARD_API_TOKEN: 'env-token' })).toMatchObject({ apiUrl: 'http://10.0.0.5:9000', apiToken: 'env-token' });
    expect(parseConfig(['--allowed-tools', ''], {})!.allowedTools).toEqual([]);
    expect(parseConfig(['--help'], {})).toBeNull();
  });

  it('refuses bad flags with a message naming the flag', () => {
    expect(() => parseConfig(['--surface', 'raw'], {})).toThrow(new ConfigError("--surface: 'raw' is not one of semantic, orchestrator"));
    expect(() => parseConfig(['--http', 'eighty'], {})).toThrow(/--http: 'eighty' is not a port number/);
    expect(() => parseConfig(['--host', '0.0.0.0'], {})).toThrow(/--host needs --http PORT/);
    expect(() => parseConfig(['--api-url', 'ftp://x'], {})).toThrow(/is not an http\(s\) URL/);
    expect(() => parseConfig(['--bogus'], {})).toThrow(ConfigError);
  });
});

describe('the REST client', () => {
  const seen: Array<{ method?: string; url?: string; auth?: string; type?: string; body: string }> = [];
  let server: ReturnType<typeof createServer>;
  let base = '';
  beforeAll(async () => {
    server = createServer(async (request: IncomingMessage, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      seen.push({ method: request.method, url: request.url, auth: request.headers.authorization, type: request.headers['content-type'], body });
      const status = Number(new URL(request.url!, 'http://x').searchParams.get('status') ?? 200);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(status === 200 ? JSON.stringify({ fine: true }) : JSON.stringify({ detail: { error: 'resource_not_found', message: 'Run not found', resource: 'run', details: { runId: 'r' } } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the bearer token, JSON bodies and the query, under the base path', async () => {
    const api = createApiClient({ apiUrl: `${base}/prefix`, apiToken: 's3cret', timeoutMs: 5_000 });
    try {
      expect(await api.get('/api/v1/runs', { page: 2, status: undefined, includeNodeRuns: false })).toEqual({ fine: true });
      await api.post('/api/v1/workflows', { name: 'x' }, { 'idempotency-key': 'k1' });
      expect(seen.slice(-2)).toEqual([
        { method: 'GET', url: '/prefix/api/v1/runs?page=2&includeNodeRuns=false', auth: 'Bearer s3cret', type: undefined, body: '' },
        { method: 'POST', url: '/prefix/api/v1/workflows', auth: 'Bearer s3cret', type: 'application/json', body: '{"name":"x"}' },
      ]);
      expect(api.url('/api/v1/workflows/1')).toBe(`${base}/prefix/api/v1/workflows/1`);
    } finally {
      await api.close();
    }
  });

  it('keeps each per-request client to its own credential, also when their requests overlap; a tool header cannot replace it', async () => {
    const pool = createApiClientPool({ apiUrl: base, timeoutMs: 5_000 });
    try {
      const clients = [pool.forToken('alice-token'), pool.forToken('bob-token'), pool.forToken(null)];
      await Promise.all(clients.flatMap((client, i) => [1, 2, 3].map((n) => client.get('/who', { client: i, n }))));
      const byClient = (i: number) => new Set(seen.filter((s) => s.url?.startsWith(`/who?client=${i}&`)).map((s) => s.auth));
      expect(byClient(0)).toEqual(new Set(['Bearer alice-token']));
      expect(byClient(1)).toEqual(new Set(['Bearer bob-token']));
      expect(byClient(2)).toEqual(new Set([undefined]));
      await clients[0]!.post('/override', {}, { authorization: 'Bearer someone-else' });
      expect(seen.at(-1)!.auth).toBe('Bearer alice-token');
    } finally {
      await pool.close();
    }
  });

  it('turns error answers into ApiError with the error body, and maps them to stable codes', async () => {
    const api = createApiClient({ apiUrl: base, apiToken: null, timeoutMs: 5_000 });
    try {
      const error = await api.get('/x', { status: 404 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 404, code: 'resource_not_found', message: 'Run not found', body: { resource: 'run', details: { runId: 'r' } } });
      expect(errorOf(error)).toMatchObject({ code: 'RUN_NOT_FOUND', details: { status: 404, runId: 'r' } });
      expect(errorOf(new ApiError(401, 'unauthorized', 'no', 'u'))).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(errorOf(new ApiError(403, 'forbidden', 'no', 'u'))).toMatchObject({ code: 'FORBIDDEN' });
      expect(errorOf(new ApiError(409, 'conflict', 'no', 'u'))).toMatchObject({ code: 'CONFLICT' });
      expect(errorOf(new ApiError(503, 'store_unavailable', 'later', 'u'))).toMatchObject({ code: 'UNAVAILABLE' });
      expect(errorOf(new ApiError(429, 'rate_limited', 'slow down', 'u'))).toMatchObject({ code: 'UNAVAILABLE', details: { status: 429 } });
      expect(errorOf(new ApiError(404, 'resource_not_found', 'gone', 'u', { resource: 'workflow' }))).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
      expect(errorOf(new ApiError(404, 'resource_not_found', 'gone', 'u', { resource: 'node' }))).toMatchObject({ code: 'NODE_NOT_FOUND' });
      expect(errorOf(new ApiUnavailableError('http://h/x', 'ECONNREFUSED'))).toEqual({ code: 'UNAVAILABLE', message: 'The Switchyard API at http://h/x is unavailable: ECONNREFUSED', details: { url: 'http://h/x' } });
    } finally {
      await api.close();
    }
  });
});
