/**
 * End-to-end test support: the real Switchyard app (built by the server's composition root,
 * `openServices`) listening on a real port, spoken to over HTTP
 * with the global `fetch`.
 *
 * Store: MongoDB when `MONGODB_URI` is set (a fresh database `switchyard_test_<random>`, emptied
 * at close), else the embedded store in memory. Executors: the example registry
 * (`examples/executors.json`: real MCP servers from npm plus the built-in aliases) with `DATA_DIR`
 * pointing at a fresh temporary directory, so the filesystem server's `files/` is per instance
 * (see {@link TestService.filesDir}). Background work: the HITL timeout sweeper runs every
 * `sweepIntervalMs` (default 50 ms); the orphaned-run recovery scan is not started.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Authenticator, buildApp, loadConfig, openServices, API_PREFIX, type BuildAppOptions, type OpenServices } from '@switchyard/api';
import type { Clock, DownstreamTokenMinter, RunEngine, ScheduleLoop, TimeoutSweeper } from '@switchyard/runner';
import { DECLARED_INDEXES, openEmbeddedStore, openMongoStore, type DocumentStore, type Repositories } from '@switchyard/store';

/** The example registry of the repository. */
export const EXAMPLE_REGISTRY = fileURLToPath(new URL('../../examples/executors.json', import.meta.url));

/** The collections the service writes (every one with declared indexes); emptied at close when running against MongoDB. */
const COLLECTIONS = Object.keys(DECLARED_INDEXES);

/** Terminal run statuses. */
export const TERMINAL = ['completed', 'failed', 'cancelled'] as const;

/** An HTTP answer: status, parsed JSON body (or the raw text when it is not JSON; null when empty), headers. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/** Options of {@link ApiClient.request} for bodies that are not JSON values. */
export interface RawRequest {
  /** Sent verbatim. */
  raw?: string;
  /** Content-Type header; default `application/json` when there is a body. */
  contentType?: string;
}

/** A small JSON client. Paths are relative to the service root, e.g. `/api/v1/workflows`. */
export interface ApiClient {
  get<T = any>(path: string): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  put<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  delete<T = any>(path: string): Promise<ApiResponse<T>>;
  /** Any method with a JSON body (`body`) or a raw one (`options.raw`, `options.contentType`). */
  request<T = any>(method: string, path: string, body?: unknown, options?: RawRequest): Promise<ApiResponse<T>>;
}

export interface WaitOptions {
  /** Statuses to wait for; default the terminal ones. */
  until?: readonly string[];
  /** Default 15 s. */
  timeoutMs?: number;
  /** Time between two polls, ms (default 20). */
  pollMs?: number;
}

export interface StartOptions {
  /** Period of the HITL timeout sweeper, milliseconds (default 50). */
  sweepIntervalMs?: number;
  /** The edge: CORS origins, rate limits, authentication, connection bounds, YAML parser threads (default as buildApp). */
  edge?: Pick<BuildAppOptions, 'corsOrigins' | 'rateLimits' | 'authenticator' | 'edge' | 'yamlParser'>;
  /**
   * Trusted-proxy mode without other authentication: the `x-switchyard-*` headers say who calls.
   * The test client then stands in for the proxy: it sends {@link PROXY_HEADERS} with every request.
   */
  trustProxyIdentity?: boolean;
  /** Headers the test client sends with every request (e.g. a credential when `edge.authenticator` requires one). */
  apiHeaders?: Record<string, string>;
  /** The executor registry file (default {@link EXAMPLE_REGISTRY}); `DATA_DIR` is set for it as for the example. */
  registryFile?: string;
  /** Mints each executor call's downstream token (default: none, as without a signing key). */
  downstreamTokens?: DownstreamTokenMinter;
  /**
   * The clock of the whole service: the engine (leases, heartbeats, retry backoff), the HITL
   * timeout sweeper, the retention sweeper and the API's routes (event-stream lifetimes,
   * idempotency keys). Pass a `ManualClock` (`@switchyard/runner/testing/manual-clock`) to move
   * time by hand; the sweeper's timer then also fires only from `clock.advance`. Default: the
   * system clock.
   */
  clock?: Clock;
  /**
   * Without `MONGODB_URI`: the embedded store persisted under `<DATA_DIR>/store` (its journal and
   * snapshot, see {@link TestService.storeDir}, compacted as `SWITCHYARD_COMPACT_JOURNAL_BYTES` of
   * `env` says) instead of in memory. Ignored with MongoDB.
   */
  persistentStore?: boolean;
  /** More configuration variables for `loadConfig` (e.g. `SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS`). */
  env?: Record<string, string>;
  /**
   * Start the schedule loop's timer (default false: tests call {@link TestService.scheduleLoop}'s
   * `pass()` themselves, which with a `ManualClock` fires exactly the ticks due at `clock.now()`).
   */
  scheduleLoop?: boolean;
}

/** One `run_events` entry, as the store holds it (payload keys as given). */
export interface RunEvent {
  seq: number;
  type: string;
  payload: Record<string, any>;
}

export interface GateWaitOptions {
  /** Condition on the pending requirements; default: at least one. */
  until?: (pending: any[], run: any) => boolean;
  /** Default 10 s. */
  timeoutMs?: number;
}

export interface TestService {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  api: ApiClient;
  /** The filesystem MCP server's allowed directory (`<DATA_DIR>/files`) of this instance. */
  filesDir: string;
  /** Which store backs this instance. */
  backend: 'mongodb' | 'embedded';
  /** The embedded store's data directory with `persistentStore` (holding `journal.jsonl`, `snapshot.jsonl`); null otherwise. */
  storeDir: string | null;
  /** The store itself, for checks of what the API cannot show (e.g. leftovers after a delete). */
  store: DocumentStore;
  /** The repositories the app uses (fault injection, direct reads). */
  repos: Repositories;
  /** The engine executing this instance's runs. */
  engine: RunEngine;
  /** The HITL timeout sweeper, started; stopped at close. */
  sweeper: TimeoutSweeper;
  /** The schedule loop (started only with `scheduleLoop: true`; `pass()` runs one pass). */
  scheduleLoop: ScheduleLoop;
  /** What `GET /readyz` answers from (counts its store checks). */
  readiness: OpenServices['readiness'];
  /** A run's events in `seq` order (read from the store; the API has no events endpoint). */
  events(runId: string): Promise<RunEvent[]>;
  /** POST /workflows; throws unless 201. Returns the created workflow detail. */
  createWorkflow(body: Record<string, unknown>): Promise<any>;
  /** POST /workflows/{id}/toggle with enabled=true; throws unless 200. */
  enable(id: string): Promise<any>;
  /**
   * PUT /workflows/{id}/access as the service's own caller (issue #18): keeps it an owner and
   * adds `roles` (e.g. `{ viewers: ['*'] }`); throws unless 200.
   */
  share(id: string, roles: { editors?: string[]; operators?: string[]; viewers?: string[]; owners?: string[] }): Promise<any>;
  /** POST /workflows/{id}/runs; returns the raw response (202 expected). */
  trigger(id: string, body?: Record<string, unknown>): Promise<ApiResponse>;
  /** Polls the run detail every `pollMs` (20 ms) until its status is in `until`; throws with the last status on timeout. */
  waitForRun(workflowId: string, runId: string, options?: WaitOptions): Promise<any>;
  /** Creates, enables and triggers a workflow; does not wait. Throws unless the trigger answers 202. */
  startRun(body: Record<string, unknown>, initialInput?: Record<string, unknown>): Promise<{ workflowId: string; runId: string }>;
  /** POST /workflows/{id}/runs/{run_id}/approve with `body` (HITL decision); returns the raw response. */
  approve(workflowId: string, runId: string, body: Record<string, unknown>): Promise<ApiResponse>;
  /**
   * Polls the run detail every 10 ms until it is `awaiting_approval` with `pendingRequirements`
   * matching `until` (default: non-empty); throws early when the run ends, and on timeout.
   */
  waitForGate(workflowId: string, runId: string, options?: GateWaitOptions): Promise<any>;
  /** Creates, enables and triggers a workflow, then waits for a terminal status; returns the run detail. */
  runWorkflow(body: Record<string, unknown>, initialInput?: Record<string, unknown>): Promise<{ workflowId: string; run: any }>;
  close(): Promise<void>;
}

/** `/api/v1/workflows` + `suffix`. */
export function wf(suffix = ''): string {
  return `${API_PREFIX}${suffix}`;
}

/** `[[[...0...]]]` nested `depth` levels: JSON deeper than the service accepts, for depth checks. */
export function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** What an authenticating proxy in front would send for the test client: a user with every scope. */
export const PROXY_HEADERS: Readonly<Record<string, string>> = {
  'x-switchyard-user-id': 'e2e-client',
  'x-switchyard-scopes': 'workflows-read workflows-write workflows-control',
};

/** A unique name, so tests of one file never clash on the unique workflow name. */
export function uniqueName(prefix: string): string {
  return `${prefix} ${randomBytes(4).toString('hex')}`;
}

/** Canvas every create body needs. */
export const CANVAS = { viewport: { x: 0, y: 0, zoom: 1 } } as const;

/** A step node using the built-in echo executor. */
export function echoStep(name: string, config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, nodeType: 'step', executorKey: 'echo', config, ...extra };
}

/** A client of `baseUrl` sending `defaultHeaders` (credentials, proxy identity) with every request. */
/** An answer's body: its JSON, its text when it is not JSON, null when empty. */
export function bodyOf(text: string): unknown {
  if (text.length === 0) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function createClient(baseUrl: string, defaultHeaders: Readonly<Record<string, string>> = {}): ApiClient {
  async function request<T>(method: string, path: string, body?: unknown, options: RawRequest = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...defaultHeaders, accept: 'application/json' };
    let payload: string | undefined;
    if (options.raw !== undefined) payload = options.raw;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    else if (options.contentType) headers['content-type'] = options.contentType;
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
    const text = await response.text();
    return { status: response.status, body: bodyOf(text) as T, text, headers: response.headers };
  }
  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body),
    put: (path, body) => request('PUT', path, body),
    delete: (path) => request('DELETE', path),
    request,
  };
}

function describeResponse(response: ApiResponse): string {
  return `${response.status} ${response.text.slice(0, 2000)}`;
}

/** Starts a service instance. Call `close()` in afterAll. */
export async function startService(options: StartOptions = {}): Promise<TestService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-e2e-'));
  const filesDir = join(dataDir, 'files');
  await mkdir(filesDir, { recursive: true });

  const mongodbUri = process.env['MONGODB_URI'];
  const storeDir = options.persistentStore && !mongodbUri ? join(dataDir, 'store') : null;
  // The service's configuration: the example registry over this instance's directory, plus the caller's variables.
  const configEnv: NodeJS.ProcessEnv = {
    DATA_DIR: dataDir,
    SWITCHYARD_EXECUTORS: options.registryFile ?? EXAMPLE_REGISTRY,
    SWITCHYARD_SWEEP_INTERVAL_MS: String(options.sweepIntervalMs ?? 50),
    // Closing a test service aborts runs in flight at once, as before the shutdown grace existed.
    SWITCHYARD_SHUTDOWN_GRACE_MS: '0',
    ...options.env,
  };
  const store: DocumentStore = mongodbUri
    ? await openMongoStore(mongodbUri, `switchyard_test_${randomBytes(6).toString('hex')}`)
    : await openEmbeddedStore({ dataDir: storeDir, compactionMinBytes: storeDir === null ? undefined : loadConfig(configEnv).compactJournalBytes });

  const cleanups: Array<() => Promise<unknown>> = [];
  const closeAll = async () => {
    const errors: unknown[] = [];
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  };
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  // Closed by the services once they are open; this is for a failure before that.
  cleanups.push(() => store.close());

  try {
    // The server's composition root, with this instance's store, directory and seams.
    const config = loadConfig(configEnv);
    const services = await openServices(config, pino({ level: 'silent' }), {
      store,
      background: { sweeper: true, recovery: false, retention: false, schedules: options.scheduleLoop ?? false },
      random: () => 0,
      downstreamTokens: options.downstreamTokens,
      clock: options.clock,
    });
    cleanups.push(() => services.close());
    if (mongodbUri) {
      // Before the services close the store (cleanups run in reverse).
      cleanups.push(() => Promise.all(COLLECTIONS.map((name) => store.collection(name).deleteMany({}))));
    }
    const { repos, engine, sweeper } = services;
    const authenticator = options.trustProxyIdentity ? await Authenticator.create({ modes: [], trustProxyIdentity: true }) : undefined;
    const app = await buildApp({ services, docs: true, authenticator, ...options.edge });
    cleanups.push(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error(`unexpected server address ${String(address)}`);
    const baseUrl = `http://127.0.0.1:${address.port}`;
    const api = createClient(baseUrl, { ...(options.trustProxyIdentity ? PROXY_HEADERS : {}), ...options.apiHeaders });

    const service: TestService = {
      baseUrl,
      api,
      filesDir,
      backend: store.backend,
      storeDir,
      store,
      repos,
      engine,
      sweeper,
      scheduleLoop: services.scheduleLoop,
      readiness: services.readiness,
      async events(runId) {
        const records = await repos.events.listByRun(runId);
        return records.map((e) => ({ seq: e.seq, type: e.type, payload: e.payload as Record<string, any> }));
      },
      async createWorkflow(body) {
        const response = await api.post(wf(), body);
        if (response.status !== 201) throw new Error(`create workflow failed: ${describeResponse(response)}`);
        return response.body;
      },
      async enable(id) {
        const response = await api.post(wf(`/${id}/toggle`), { enabled: true });
        if (response.status !== 200) throw new Error(`enable workflow failed: ${describeResponse(response)}`);
        return response.body;
      },
      async share(id, roles) {
        const current = await api.get(wf(`/${id}/access`));
        if (current.status !== 200) throw new Error(`read access failed: ${describeResponse(current)}`);
        const access = current.body.access as Record<string, string[]>;
        const body = { ...access, ...roles, owners: [...new Set([...access.owners!, ...(roles.owners ?? [])])] };
        const response = await api.put(wf(`/${id}/access`), body);
        if (response.status !== 200) throw new Error(`share workflow failed: ${describeResponse(response)}`);
        return response.body;
      },
      trigger(id, body) {
        return body === undefined ? api.post(wf(`/${id}/runs`)) : api.post(wf(`/${id}/runs`), body);
      },
      async waitForRun(workflowId, runId, options = {}) {
        const until = options.until ?? TERMINAL;
        const deadline = Date.now() + (options.timeoutMs ?? 15_000);
        let last: ApiResponse | undefined;
        for (;;) {
          last = await api.get(wf(`/${workflowId}/runs/${runId}`));
          if (last.status !== 200) throw new Error(`run detail failed: ${describeResponse(last)}`);
          if (until.includes(last.body.status)) return last.body;
          if (Date.now() > deadline) {
            throw new Error(`run ${runId} did not reach ${until.join('|')} in time; last: ${describeResponse(last)}`);
          }
          await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 20));
        }
      },
      async startRun(body, initialInput) {
        const created = await service.createWorkflow(body);
        await service.enable(created.id);
        const triggered = await service.trigger(created.id, initialInput === undefined ? {} : { initialInput });
        if (triggered.status !== 202) throw new Error(`trigger failed: ${describeResponse(triggered)}`);
        return { workflowId: created.id as string, runId: triggered.body.runId as string };
      },
      approve(workflowId, runId, body) {
        return api.post(wf(`/${workflowId}/runs/${runId}/approve`), body);
      },
      async waitForGate(workflowId, runId, options = {}) {
        const until = options.until ?? ((pending: any[]) => pending.length > 0);
        const deadline = Date.now() + (options.timeoutMs ?? 10_000);
        for (;;) {
          const last = await api.get(wf(`/${workflowId}/runs/${runId}`));
          if (last.status !== 200) throw new Error(`run detail failed: ${describeResponse(last)}`);
          const run = last.body;
          if (run.status === 'awaiting_approval' && until(run.pendingRequirements, run)) return run;
          if ((TERMINAL as readonly string[]).includes(run.status)) {
            throw new Error(`run ${runId} ended ${run.status} while waiting for a gate: ${describeResponse(last)}`);
          }
          if (Date.now() > deadline) throw new Error(`run ${runId} did not reach the expected gate in time; last: ${describeResponse(last)}`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      },
      async runWorkflow(body, initialInput) {
        const created = await service.createWorkflow(body);
        await service.enable(created.id);
        const triggered = await service.trigger(created.id, initialInput === undefined ? {} : { initialInput });
        if (triggered.status !== 202) throw new Error(`trigger failed: ${describeResponse(triggered)}`);
        const run = await service.waitForRun(created.id, triggered.body.runId);
        return { workflowId: created.id as string, run };
      },
      close: closeAll,
    };
    return service;
  } catch (error) {
    await closeAll().catch(() => undefined);
    throw error;
  }
}
