/**
 * The Prometheus metrics of one service instance (issue #20 item 2, docs/operations/metrics.md):
 * its own prom-client `Registry` (never the global one, so tests and several apps in one process
 * do not clash), the metric objects, and the three ways they are fed:
 *
 * - the run-event seam (`RunEvents.onAppend`, see run-event-metrics.ts): runs started and
 *   finished by workflow, node attempt durations, retries, lease takeovers, gate and run timeouts;
 * - the store port (`timedStore` of @switchyard/store): store operation latency;
 * - the HTTP layer (plugins/metrics.ts): request durations by route pattern and status;
 *
 * plus gauges computed at scrape time from {@link MetricsSources} and the process defaults of
 * prom-client (CPU, memory, event-loop lag, GC, handles).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { StoreTiming } from '@switchyard/store';
import type { Logger } from '@switchyard/runner';
import { SharedRead } from '../shared-read.ts';
import { BoundedLabelValues, DEFAULT_METRICS_MAX_WORKFLOWS } from './bounded-labels.ts';

export { DEFAULT_METRICS_MAX_WORKFLOWS };

/** Kinds of the sweeper actions counted by `switchyard_sweeper_actions_total`. */
export type SweeperActionKind = 'gate_timeout' | 'run_timeout' | 'retention_delete';

/** What the scrape-time gauges read; set once the engine and repositories exist ({@link Metrics.setSources}). */
export interface MetricsSources {
  /** Runs this instance executes right now (the engine's `activeCount`). */
  runsExecuting(): number;
  /** Runs waiting to be claimed (`pending`), in the whole store. */
  runsQueued(): Promise<number>;
  /** Undecided requirements (gates and human requests) of runs that can still be decided, in the whole store. */
  pendingApprovals(): Promise<number>;
}

/** Options of {@link Metrics}. */
export interface MetricsOptions {
  /** Distinct workflow ids labelled; later ones are counted as `other` (default {@link DEFAULT_METRICS_MAX_WORKFLOWS}). */
  maxWorkflows?: number;
  /** `SWITCHYARD_METRICS_TOKEN`: the bearer token `GET /metrics` requires; null: public. */
  scrapeToken?: string | null;
  /** Told when a scrape-time gauge cannot be read (it keeps its last value). */
  logger?: Logger;
  /** Collect prom-client's process defaults (default true). */
  processDefaults?: boolean;
  /**
   * The gauges read from the store (`runsQueued`, `pendingApprovals`) are read at most once per this
   * many ms; scrapes in between, and concurrent scrapes, share that read (default 0: every scrape
   * reads). `/metrics` may be public: this bounds the store load any number of scrapers makes.
   */
  storeReadIntervalMs?: number;
  /** Milliseconds now, for {@link storeReadIntervalMs} (default `Date.now`; the service passes its clock). */
  now?: () => number;
}

/** Buckets of HTTP request durations, seconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets of node attempt durations, seconds (executor calls take milliseconds to many minutes). */
const NODE_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Buckets of store operation durations, seconds. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** The route label of a request no route matched (a 404): never the raw URL, whose values are unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The metrics of one service instance (see the module comment and docs/operations/metrics.md). */
export class Metrics {
  /** This instance's registry: what `GET /metrics` renders. */
  readonly registry = new Registry();
  /** The bearer token `GET /metrics` requires, or null when it is public. */
  readonly scrapeToken: string | null;
  /** The bound on workflow id labels. */
  readonly workflows: BoundedLabelValues;

  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly runsStarted: Counter<'workflow'>;
  readonly runsFinished: Counter<'workflow' | 'status'>;
  readonly nodeDuration: Histogram<'executor_kind' | 'outcome'>;
  readonly retries: Counter<'workflow'>;
  readonly leaseTakeovers: Counter;
  readonly sweeperActions: Counter<'kind'>;
  readonly storeDuration: Histogram<'collection' | 'operation' | 'outcome'>;

  private sources: MetricsSources | null = null;
  private readonly logger: Logger | undefined;
  private readonly storeReadIntervalMs: number;
  private readonly now: () => number;
  /** The shared read of each store-backed gauge, by metric name (see {@link MetricsOptions.storeReadIntervalMs}). */
  private readonly storeReads = new Map<string, SharedRead<number>>();

  constructor(options: MetricsOptions = {}) {
    this.scrapeToken = options.scrapeToken ?? null;
    this.workflows = new BoundedLabelValues(options.maxWorkflows ?? DEFAULT_METRICS_MAX_WORKFLOWS);
    this.logger = options.logger;
    this.storeReadIntervalMs = Math.max(0, options.storeReadIntervalMs ?? 0);
    this.now = options.now ?? Date.now;
    const registers = [this.registry];
    this.httpDuration = new Histogram({
      name: 'switchyard_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern (unmatched: no route) and status code, seconds from arrival to the answer sent',
      labelNames: ['method', 'route', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.runsStarted = new Counter({
      name: 'switchyard_runs_started_total',
      help: 'Runs this instance started executing (run.started), by workflow id (other past the label bound)',
      labelNames: ['workflow'],
      registers,
    });
    this.runsFinished = new Counter({
      name: 'switchyard_runs_finished_total',
      help: 'Runs ended by this instance, by workflow id and status (completed, failed, cancelled)',
      labelNames: ['workflow', 'status'],
      registers,
    });
    this.nodeDuration = new Histogram({
      name: 'switchyard_node_attempt_duration_seconds',
      help: 'Step attempts ended in this instance, by executor kind and outcome (the node run status: completed, failed, skipped, awaiting_approval), seconds from node.started to its end',
      labelNames: ['executor_kind', 'outcome'],
      buckets: NODE_BUCKETS,
      registers,
    });
    this.retries = new Counter({
      name: 'switchyard_node_retries_total',
      help: 'Failed step attempts that will be retried (node.retrying), by workflow id',
      labelNames: ['workflow'],
      registers,
    });
    this.leaseTakeovers = new Counter({
      name: 'switchyard_lease_takeovers_total',
      help: "Runs this instance claimed from another owner whose lease had expired (a dead or cut-off instance)",
      registers,
    });
    this.sweeperActions = new Counter({
      name: 'switchyard_sweeper_actions_total',
      help: 'Actions of the sweepers of this instance by kind: gate_timeout (a gate decided by its timeout), run_timeout (a run stopped at its deadline), retention_delete (an ended run deleted by the retention policy)',
      labelNames: ['kind'],
      registers,
    });
    this.storeDuration = new Histogram({
      name: 'switchyard_store_operation_duration_seconds',
      help: 'Store operations by collection, operation (insertOne, find, findOneAndUpdate, ...) and outcome (ok, error), seconds',
      labelNames: ['collection', 'operation', 'outcome'],
      buckets: STORE_BUCKETS,
      registers,
    });
    for (const kind of ['gate_timeout', 'run_timeout', 'retention_delete'] as const) this.sweeperActions.inc({ kind }, 0);
    const gauge = (name: string, help: string, read: (sources: MetricsSources) => number | Promise<number>): void => {
      const metric: Gauge = new Gauge({ name, help, registers, collect: () => this.#read(name, read, (value) => metric.set(value)) });
    };
    gauge('switchyard_runs_executing', 'Runs this instance executes right now', (sources) => sources.runsExecuting());
    gauge('switchyard_runs_queued', 'Runs waiting to be claimed (status pending), in the whole store', (sources) =>
      this.#shared('switchyard_runs_queued', () => sources.runsQueued()),
    );
    gauge(
      'switchyard_pending_approvals',
      'Undecided gates and human requests of runs that can still be decided, in the whole store (counted over the oldest 10,000 such runs)',
      (sources) => this.#shared('switchyard_pending_approvals', () => sources.pendingApprovals()),
    );
    if (options.processDefaults !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the scrape-time gauges read from; until set they stay 0. */
  setSources(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** The label of workflow `workflowId`: itself for the first {@link MetricsOptions.maxWorkflows} ids seen, else `other`. */
  workflowLabel(workflowId: string): string {
    return this.workflows.label(workflowId);
  }

  /** Records one answered HTTP request. `route`: the route pattern (undefined: no route matched); `seconds`: its duration. */
  observeHttp(method: string, route: string | undefined, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method, route: route ?? UNMATCHED_ROUTE, status_code: String(statusCode) }, seconds);
  }

  /** Records one store call (the observer of `timedStore`). */
  readonly observeStore = (timing: StoreTiming): void => {
    this.storeDuration.observe({ collection: timing.collection, operation: timing.operation, outcome: timing.failed ? 'error' : 'ok' }, timing.seconds);
  };

  /** Counts `count` sweeper actions of `kind`. */
  sweeperAction(kind: SweeperActionKind, count = 1): void {
    this.sweeperActions.inc({ kind }, count);
  }

  /** The exposition text of every metric (Prometheus text format 0.0.4). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The Content-Type of {@link render}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The value of `read()` for gauge `name`, read at most once per {@link MetricsOptions.storeReadIntervalMs} and shared by concurrent scrapes. */
  #shared(name: string, read: () => Promise<number>): Promise<number> {
    let shared = this.storeReads.get(name);
    if (shared === undefined) {
      shared = new SharedRead(read, { maxAgeMs: this.storeReadIntervalMs, now: this.now });
      this.storeReads.set(name, shared);
    }
    return shared.get();
  }

  async #read(name: string, read: (sources: MetricsSources) => number | Promise<number>, set: (value: number) => void): Promise<void> {
    if (this.sources === null) return;
    try {
      set(await read(this.sources));
    } catch (error) {
      this.logger?.warn({ err: error, metric: name }, 'metric not read; it keeps its last value');
    }
  }
}
