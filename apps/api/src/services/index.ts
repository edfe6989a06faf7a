/**
 * Wiring: store -> repositories -> executors + CEL -> engine. `openServices` builds everything
 * the API needs from the configuration; `buildApp` receives the result, so tests can pass their
 * own (embedded, in-memory) services.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { openRepositories, openStore, timedStore, type DocumentStore, type Repositories } from '@switchyard/store';
import {
  CelEngine,
  HmacTokenMinter,
  RetentionSweeper,
  RunEngine,
  ScheduleLoop,
  TimeoutSweeper,
  definitionChecks,
  loadExecutorRegistry,
  publicErrorText,
  systemClock,
  type Clock,
  type DownstreamTokenMinter,
  type ExecutorRegistry,
  type Logger,
} from '@switchyard/runner';
import type { ServiceConfig } from '../config.ts';
import { Authenticator } from '../auth/authenticator.ts';
import { Readiness } from './readiness.ts';
import { Metrics } from '../metrics/metrics.ts';
import { runEventMetrics } from '../metrics/run-event-metrics.ts';
import { fireScheduleTick, startBufferedTicks } from './schedule-fire.ts';

/** How often scrapes may read the store-backed gauges, ms (see `MetricsOptions.storeReadIntervalMs`). */
const METRICS_STORE_READ_INTERVAL_MS = 1_000;

/** Runs the pending-approvals gauge reads at most per scrape (see `WorkflowRuns.countUndecidedRequirements`). */
const PENDING_APPROVALS_MAX_RUNS = 10_000;

import type { AppServices } from './app-services.ts';
export type { AppServices } from './app-services.ts';

/**
 * Everything the process owns, with one `close()` that releases it in order: the sweepers stop,
 * the engine shuts down gracefully (`config.shutdownGraceMs`, see `RunEngine.close`), then the
 * executors and the store close. Every step runs even when an earlier one fails; `close()` then
 * rejects with the first failure.
 */
export interface OpenServices extends AppServices {
  /** Who may call the API (`config.auth`): hand it to `buildApp`. */
  authenticator: Authenticator;
  /** Decides HITL gates past their timeout (started unless `background` says otherwise). */
  sweeper: TimeoutSweeper;
  /** Fires schedule ticks (services/schedule-fire.ts; started unless `background` says otherwise). */
  scheduleLoop: ScheduleLoop;
  /** The readiness checks of this instance: the store, the recovery scan and both sweepers. */
  readiness: Readiness;
  store: DocumentStore;
  executors: ExecutorRegistry;
  engine: RunEngine;
  /** This instance's metrics (its own registry), fed by the run-event seam, the store port and the app. */
  metrics: Metrics;
  close(): Promise<void>;
}

/** What a caller other than the server may change about {@link openServices}. */
export interface OpenServicesOptions {
  /**
   * Which background work starts: the recovery scan of runs without an owner, the HITL timeout
   * sweeper, the retention sweeper, the schedule loop. `true` (default): all; `false`: none.
   */
  background?: boolean | { recovery?: boolean; sweeper?: boolean; retention?: boolean; schedules?: boolean };
  /** A store the caller opened (a test's own MongoDB database, an in-memory embedded store); closed by `close()`. Default: opened from `config`. */
  store?: DocumentStore;
  /** The environment the registry expands (default: this process's, with `DATA_DIR` = `config.dataDir`). */
  registryEnv?: NodeJS.ProcessEnv;
  /** Jitter of retry backoff, [0, 1) (tests make it deterministic). */
  random?: () => number;
  /** Mints downstream tokens (default: from `config.downstreamToken`). */
  downstreamTokens?: DownstreamTokenMinter;
  /**
   * The one clock of the engine (leases, heartbeats, backoff, recovery scan), the sweepers and the
   * routes (tests pass a `ManualClock`). Default: the system clock.
   */
  clock?: Clock;
}

/**
 * The composition root of the server, the tests and the benches: builds the authenticator
 * (reading the API keys file) and the downstream token minter, opens the store (embedded unless
 * `mongodbUri`, or the one given) and its indexes, loads the executor registry, builds CEL, the
 * engine and the sweepers, and the metrics (fed by the run-event seam and the timed store the
 * repositories use; docs/operations/metrics.md), and starts the background work
 * `options.background` names. Throws when
 * the registry file, the auth configuration or the store is unusable (closing what it opened).
 */
export async function openServices(config: ServiceConfig, logger: Logger, options: OpenServicesOptions = {}): Promise<OpenServices> {
  await mkdir(join(config.dataDir, 'files'), { recursive: true });
  // Before the store: a bad keys file or JWT setting stops the start before anything is opened.
  const authenticator = await Authenticator.create(config.auth);
  const clock = options.clock ?? systemClock;
  const downstreamTokens = options.downstreamTokens ?? (config.downstreamToken === null ? undefined : new HmacTokenMinter({ ...config.downstreamToken, clock }));
  const store = options.store ?? (await openStore({ mongodbUri: config.mongodbUri, dataDir: config.dataDir, logger, compactionMinBytes: config.compactJournalBytes }));
  const opened: Array<() => Promise<void>> = [() => store.close()];
  let closing: Promise<void> | undefined;
  // In the reverse order of opening; once. Every step runs even when one before it fails or
  // rejects (a failing sweeper stop must not keep the engine from releasing its leases); the
  // failures are logged and the first is thrown at the end.
  const closeAll = (): Promise<void> =>
    (closing ??= (async () => {
      const failures: unknown[] = [];
      for (const close of [...opened].reverse()) {
        try {
          await close();
        } catch (error) {
          failures.push(error);
          logger.error({ err: error }, 'a component failed to close');
        }
      }
      if (failures.length > 0) throw failures[0];
    })());
  // Scrapes read the store-backed gauges at most once a second, however many scrapers there are.
  const metrics = new Metrics({
    maxWorkflows: config.metricsMaxWorkflows,
    scrapeToken: config.metricsToken,
    logger,
    storeReadIntervalMs: METRICS_STORE_READ_INTERVAL_MS,
    now: () => clock.now().getTime(),
  });
  try {
    // Repositories and sweepers see the store through the timing decorator (store operation latency).
    const repos = await openRepositories(timedStore(store, metrics.observeStore));
    // Workflows stored before per-workflow access (issue #18) get the configured default once.
    const given = await repos.definitions.applyDefaultAccess(config.defaultAccess);
    if (given > 0) logger.info({ workflows: given, access: config.defaultAccess }, 'gave SWITCHYARD_DEFAULT_ACCESS to workflows stored without access');
    const publicText = publicErrorText({ dataDir: config.dataDir });
    const executors = await loadExecutorRegistry({
      file: config.executorsFile,
      logger,
      env: options.registryEnv ?? { ...process.env, DATA_DIR: config.dataDir },
      maxOutputBytes: config.maxOutputBytes,
      maxConcurrentCalls: config.maxConcurrentCalls,
      maxConcurrentCallsPerOrigin: config.maxConcurrentCallsPerOrigin,
    });
    opened.push(() => executors.close());
    const cel = new CelEngine();
    const engine = new RunEngine({
      repos,
      executors,
      cel,
      logger,
      leaseMs: config.leaseMs,
      recoveryIntervalMs: config.recoveryIntervalMs,
      parallelLimit: config.parallelLimit,
      maxActiveRuns: config.maxActiveRuns,
      shutdownGraceMs: config.shutdownGraceMs,
      maxOutputBytes: config.maxOutputBytes,
      downstreamTokens,
      // Node-run errors name no path of DATA_DIR and no network address (docs/operations/security.md).
      publicText,
      random: options.random,
      clock,
    });
    opened.push(() => engine.close());
    // The run-event seam feeds the run, node, retry, takeover and timeout metrics.
    opened.push(ignoreResult(repos.events.onAppend(runEventMetrics(metrics, (key) => executors.kindOf(key)))));
    metrics.setSources({
      runsExecuting: () => engine.activeCount,
      runsQueued: () => repos.runs.countByStatus('pending'),
      pendingApprovals: () => repos.runs.countUndecidedRequirements(PENDING_APPROVALS_MAX_RUNS),
    });
    const sweeper = new TimeoutSweeper({ repos, wake: (runId) => engine.start(runId), engine, logger, clock, intervalMs: config.sweepIntervalMs });
    // Stopped before the engine closes, so that no timeout wakes a closed engine.
    opened.push(() => sweeper.stop());
    const retention = new RetentionSweeper({
      repos,
      store,
      logger,
      retentionDays: config.runRetentionDays,
      keepPerWorkflow: config.runsKeptPerWorkflow,
      intervalMs: config.retentionIntervalMs,
      clock,
      onDeleted: (runs) => metrics.sweeperAction('retention_delete', runs),
    });
    opened.push(() => retention.stop());
    // The schedule loop fires ticks through the same services the routes use; stopped before the engine closes.
    const checks = definitionChecks(executors, cel, { maxNodes: config.maxNodes, maxStepExecutions: config.maxStepExecutions });
    const scheduleServices: AppServices = { repos, engine, checks, executors, clock, logger, publicText, idempotencyTtlMs: config.idempotencyTtlHours * 3_600_000 };
    const scheduleLoop = new ScheduleLoop({
      schedules: repos.schedules,
      fire: (schedule, scheduledAt, tick) => fireScheduleTick(scheduleServices, schedule, scheduledAt, { tookRun: tick.tookRun }),
      startBuffered: (now) => startBufferedTicks(scheduleServices, now),
      logger,
      clock,
      intervalMs: config.scheduleIntervalMs,
    });
    opened.push(() => scheduleLoop.stop());
    const readiness = new Readiness({
      store,
      clock,
      instance: engine.owner,
      publicText,
      loops: {
        recovery: () => engine.recoveryStatus(),
        timeoutSweeper: () => sweeper.loopStatus(),
        retention: () => retention.loopStatus(),
        schedules: () => scheduleLoop.loopStatus(),
      },
    });
    const all = options.background !== false;
    const background = typeof options.background === 'object' ? options.background : { recovery: all, sweeper: all, retention: all, schedules: all };
    if (background.recovery) engine.startRecovery();
    if (background.sweeper) sweeper.start();
    if (background.retention) retention.start();
    if (background.schedules) scheduleLoop.start();
    return {
      authenticator,
      store,
      repos,
      executors,
      engine,
      sweeper,
      scheduleLoop,
      readiness,
      checks,
      clock,
      logger,
      idempotencyTtlMs: config.idempotencyTtlHours * 3_600_000,
      cel,
      eventRetentionMs: config.eventRetentionDays * 86_400_000,
      scheduleMinIntervalSeconds: config.scheduleMinIntervalSeconds,
      publicText,
      metrics,
      runBounds: {
        maxOpenHumanRequests: config.maxOpenHumanRequests,
        maxStoredRequirements: config.maxStoredRequirements,
        humanRequestRunBudgetBytes: config.humanRequestRunBudgetBytes,
        maxDecisionBytes: config.maxDecisionBytes,
      },
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** `stop` as a close step: unregisters, resolves. */
function ignoreResult(stop: () => unknown): () => Promise<void> {
  return async () => {
    stop();
  };
}
