/**
 * What per-workflow access costs a caller (issue #18), measured on the service as users run it:
 * `apps/api/src/server.ts` (what `npm start` runs) in a process of its own, on the embedded store.
 * Twice: without authentication (no role is looked up), and with API keys where the caller is a
 * viewer of the workflow through a group (its key verified, the workflow's access read and its
 * role checked on every request; lists narrowed to the workflows it may see).
 *
 * For each: 20 completed runs, a warm-up, then GET of a run's detail and of `GET /api/v1/runs`,
 * one connection at a time (latency p50/p99) and over 16 connections (requests a second). Bounded:
 * at most 3 000 sequential and 5 s or 40 000 requests of load per figure. Prints a table.
 *
 * `npm run bench:access [-- --quick]`
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newApiKey } from '@switchyard/api';
import { startServerProcess, type ServerProcess } from '../test/support/server-process.ts';
import { echoStep } from './support.ts';
import { runLoad, type LoadRequest } from './suite/http-load.ts';
import { percentileOf } from './suite/stats.ts';

const QUICK = process.argv.includes('--quick');
const SEQUENTIAL = QUICK ? 500 : 3_000;
const WARM_UP = QUICK ? 300 : 2_000;
const LOAD_MS = QUICK ? 1_500 : 5_000;
const RUNS = 20;

/** One measured read. */
interface ReadFigures {
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
}

/** A service to measure and the headers its caller sends. */
interface Target {
  name: string;
  server: ServerProcess;
  /** What the measured caller sends. */
  headers: Record<string, string>;
  /** What the workflow's owner sends (to create and share it); null without authentication. */
  ownerKey: string | null;
  dataDir: string;
}

async function main(): Promise<void> {
  const results: Array<{ mode: string; read: string; figures: ReadFigures }> = [];
  for (const open of [withoutAuthentication, withViewerKey]) {
    const target = await open();
    try {
      const runId = await prepare(target);
      const paths = { 'GET run detail': `/api/v1/runs/${runId}`, 'GET /api/v1/runs': '/api/v1/runs?perPage=20&includeNodeRuns=false' };
      for (const [read, path] of Object.entries(paths)) {
        results.push({ mode: target.name, read, figures: await measure(target, { method: 'GET', path, headers: target.headers }) });
      }
    } finally {
      await target.server.stop();
      await rm(target.dataDir, { recursive: true, force: true });
    }
  }
  console.log(`\nPer-workflow access, service started as by npm start (Node ${process.versions.node}${QUICK ? ', --quick' : ''})\n`);
  console.log('| caller | read | p50 ms | p99 ms | requests/s (16 connections) |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const { mode, read, figures } of results) {
    console.log(`| ${mode} | ${read} | ${figures.p50Ms.toFixed(2)} | ${figures.p99Ms.toFixed(2)} | ${Math.round(figures.perSecond)} |`);
  }
}

/** The service without authentication: every caller is `user:anonymous` with every right. */
async function withoutAuthentication(): Promise<Target> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-bench-access-'));
  const server = await startServerProcess({ ...BASE_ENV, DATA_DIR: dataDir, SWITCHYARD_AUTH: 'none' });
  return { name: 'no authentication', server, headers: {}, ownerKey: null, dataDir };
}

/** The service with API keys: the owner shares the workflow with `group:readers`, and a reader's key reads. */
async function withViewerKey(): Promise<Target> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-bench-access-'));
  const owner = newApiKey('owner', ['workflows-read', 'workflows-write', 'workflows-control'], { subject: 'owner' });
  const reader = newApiKey('reader', ['workflows-read'], { subject: 'reader', groups: ['readers'] });
  const keysFile = join(dataDir, 'api-keys.json');
  await writeFile(keysFile, JSON.stringify({ keys: [owner.entry, reader.entry] }));
  const server = await startServerProcess({ ...BASE_ENV, DATA_DIR: dataDir, SWITCHYARD_AUTH: 'api-key', SWITCHYARD_API_KEYS_FILE: keysFile });
  return { name: 'API key, viewer through a group', server, headers: { authorization: `Bearer ${reader.key}` }, ownerKey: owner.key, dataDir };
}

/** The default log level (as users run it), no rate limit: the figures are the service's, not the limiter's. */
const BASE_ENV = {
  SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: '0',
  SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE: '0',
  SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE: '0',
};

/** Creates, shares and enables a one-step workflow, completes {@link RUNS} runs of it; returns the last run's id. */
async function prepare(target: Target): Promise<string> {
  const { ownerKey } = target;
  const owner: Record<string, string> = ownerKey === null ? {} : { authorization: `Bearer ${ownerKey}` };
  const api = (method: string, path: string, body?: unknown) => json(target.server.baseUrl, method, path, owner, body);
  const created = await api('POST', '/api/v1/workflows', { name: 'bench access', canvas: { viewport: { x: 0, y: 0, zoom: 1 } }, nodes: [echoStep('Only', { n: 1 })] });
  const workflowId = created.id as string;
  if (ownerKey !== null) await api('PUT', `/api/v1/workflows/${workflowId}/access`, { owners: ['user:owner'], viewers: ['group:readers'] });
  await api('POST', `/api/v1/workflows/${workflowId}/toggle`, { enabled: true });
  let runId = '';
  for (let i = 0; i < RUNS; i++) runId = (await api('POST', `/api/v1/workflows/${workflowId}/runs`, { initialInput: { i } })).runId as string;
  const deadline = Date.now() + 30_000;
  while ((await api('GET', `/api/v1/runs?workflowId=${workflowId}&status=completed&perPage=1&includeNodeRuns=false`)).pagination.total < RUNS) {
    if (Date.now() > deadline) throw new Error('the runs did not complete within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return runId;
}

/** Warm-up, then latency one request at a time and throughput over 16 connections; throws unless every answer is 200. */
async function measure(target: Target, request: LoadRequest): Promise<ReadFigures> {
  const origin = target.server.baseUrl;
  await expectOk(runLoad({ origin, connections: 4, durationMs: 10_000, maxRequests: WARM_UP, request: () => request }));
  const sequential = await expectOk(runLoad({ origin, connections: 1, durationMs: 30_000, maxRequests: SEQUENTIAL, request: () => request }));
  const load = await expectOk(runLoad({ origin, connections: 16, durationMs: LOAD_MS, maxRequests: 40_000, request: () => request }));
  return { p50Ms: percentileOf(sequential.latenciesMs, 50), p99Ms: percentileOf(sequential.latenciesMs, 99), perSecond: load.perSecond };
}

async function expectOk<T extends { statuses: ReadonlyMap<number, number>; requests: number }>(pending: Promise<T>): Promise<T> {
  const result = await pending;
  if ((result.statuses.get(200) ?? 0) !== result.requests) throw new Error(`answers ${JSON.stringify([...result.statuses])}, expected only 200`);
  return result;
}

/** A JSON request; throws on a non-2xx answer. */
async function json(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
  return text === '' ? null : JSON.parse(text);
}

await main();
