/**
 * The two services the run-starter benches (schedules.ts, events.ts) measure side by side: the
 * composition root and the real app in the bench's own process (embedded store in memory), and
 * the service as `npm start` runs it (test/support/server-process.ts: its own process, embedded
 * store on disk). Both without authentication (`SWITCHYARD_AUTH=none`: the caller has every scope,
 * `events-write` included) and without rate limits (the figures are the service's, not the
 * limiter's). Also the JSON request and polling helpers both benches use.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig, openServices } from '@switchyard/api';
import { openEmbeddedStore } from '@switchyard/store';
import { startServerProcess } from '../test/support/server-process.ts';
import { boundedInteger, startBenchApp } from './support.ts';

/** A service to load: its label, base URL and how to stop it (and remove its data directory). */
export interface Target {
  /** Label of the printed rows, e.g. `in-process`. */
  readonly name: string;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  stop(): Promise<void>;
}

/** Opens a {@link Target} with `env` added to the service's configuration. */
export type OpenTarget = (env: Record<string, string>) => Promise<Target>;

/** Rate limits off, no authentication: what both targets add to their environment. */
const BASE_ENV = {
  SWITCHYARD_AUTH: 'none',
  SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: '0',
  SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE: '0',
  SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE: '0',
};

/**
 * The composition root (`openServices`, recovery and the schedule loop started, sweeper and
 * retention not) and the real app (`buildApp`, no rate limits) in this process, store in memory.
 */
export const inProcess: OpenTarget = async (env) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-bench-target-'));
  const store = await openEmbeddedStore({ dataDir: null });
  const config = loadConfig({ ...BASE_ENV, DATA_DIR: dataDir, ...env });
  const services = await openServices(config, pino({ level: 'silent' }), { store, background: { recovery: true, sweeper: false, retention: false, schedules: true } });
  const app = await startBenchApp({ ...services, dataDir: null });
  return {
    name: 'in-process',
    baseUrl: app.baseUrl,
    async stop() {
      await app.close();
      await services.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};

/** The service as `npm start` runs it (apps/api/src/server.ts), in a process of its own, store on disk. */
export const asProcess: OpenTarget = async (env) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-bench-target-'));
  const server = await startServerProcess({ ...BASE_ENV, DATA_DIR: dataDir, ...env });
  return {
    name: 'npm start',
    baseUrl: server.baseUrl,
    async stop() {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};

/** Both targets, in the order their figures are printed. */
export const TARGETS: readonly OpenTarget[] = [inProcess, asProcess];

/** A JSON request to `baseUrl + path`; resolves to the parsed answer (null when empty). Throws on a non-2xx answer, naming the status and the body's start. */
export async function json(baseUrl: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
  return text === '' ? null : JSON.parse(text);
}

/** Like {@link json}, also resolving to the request's latency in milliseconds (answer read whole). */
export async function timedJson(baseUrl: string, method: string, path: string, body?: unknown): Promise<{ ms: number; answer: any }> {
  const t0 = performance.now();
  const answer = await json(baseUrl, method, path, body);
  return { ms: performance.now() - t0, answer };
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The integer flag `--name` of the command line, `fallback` when absent; throws (see `boundedInteger`) outside [`min`, `max`]. */
export function flag(name: string, fallback: number, min: number, max: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : boundedInteger(name, process.argv[at + 1], min, max);
}
