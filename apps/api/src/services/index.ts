/**
 * Wiring: store -> repositories -> executors + CEL -> engine. `openServices` builds everything
 * the API needs from the configuration; `buildApp` receives the result, so tests can pass their
 * own (embedded, in-memory) services.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DefinitionChecks } from '@switchyard/domain';
import { openRepositories, openStore, type DocumentStore, type Repositories } from '@switchyard/store';
import {
  CelEngine,
  HmacTokenMinter,
  RetentionSweeper,
  RunEngine,
  TimeoutSweeper,
  definitionChecks,
  loadExecutorRegistry,
  systemClock,
  type Clock,
  type ExecutorRegistry,
  type Logger,
} from '@switchyard/runner';
import type { ServiceConfig } from '../config.ts';
import { Authenticator } from '../auth/authenticator.ts';

/** What routes use. */
export interface AppServices {
  repos: Repositories;
  /** Starts runs in the background, signals them directives, stops them when their workflow is deleted. */
  engine: Pick<RunEngine, 'start' | 'abort' | 'signal'>;
  /** Save-time checks of definitions (executor keys, CEL). */
  checks: DefinitionChecks;
  /** The executor registry: the catalogue (`GET /api/v1/executors`) describes it. */
  executors: Pick<ExecutorRegistry, 'describe'>;
  clock: Clock;
  /** For what is worth logging but not failing a request over. */
  logger?: Logger;
  /** How long an `Idempotency-Key` of a trigger is remembered, ms (default 24 h). */
  idempotencyTtlMs?: number;
}

/** Everything the process owns, with one `close()` that releases it in order. */
export interface OpenServices extends AppServices {
  /** Who may call the API (`config.auth`): hand it to `buildApp`. */
  authenticator: Authenticator;
  store: DocumentStore;
  executors: ExecutorRegistry;
  engine: RunEngine;
  close(): Promise<void>;
}

/**
 * Builds the authenticator (reading the API keys file) and the downstream token minter, opens the
 * store (embedded unless `mongodbUri`), creates indexes, loads the executor registry,
 * and starts the background work: recovery of runs left without an owner, the HITL timeout
 * sweeper and, when a retention policy is configured, the retention sweeper (unless
 * `background: false`). Throws when the registry file is invalid or the store
 * cannot be opened.
 */
export async function openServices(config: ServiceConfig, logger: Logger, options: { background?: boolean } = {}): Promise<OpenServices> {
  await mkdir(join(config.dataDir, 'files'), { recursive: true });
  // Before the store: a bad keys file or JWT setting stops the start before anything is opened.
  const authenticator = await Authenticator.create(config.auth);
  const downstreamTokens = config.downstreamToken === null ? undefined : new HmacTokenMinter(config.downstreamToken);
  const store = await openStore({ mongodbUri: config.mongodbUri, dataDir: config.dataDir, logger });
  try {
    const repos = await openRepositories(store);
    const executors = await loadExecutorRegistry({ file: config.executorsFile, logger });
    const cel = new CelEngine();
    const engine = new RunEngine({
      repos,
      executors,
      cel,
      logger,
      leaseMs: config.leaseMs,
      recoveryIntervalMs: config.recoveryIntervalMs,
      parallelLimit: config.parallelLimit,
      maxOutputBytes: config.maxOutputBytes,
      downstreamTokens,
    });
    const sweeper = new TimeoutSweeper({ repos, wake: (runId) => engine.start(runId), engine, logger, intervalMs: config.sweepIntervalMs });
    const retention = new RetentionSweeper({
      repos,
      store,
      logger,
      retentionDays: config.runRetentionDays,
      keepPerWorkflow: config.runsKeptPerWorkflow,
      intervalMs: config.retentionIntervalMs,
    });
    if (options.background !== false) {
      engine.startRecovery();
      sweeper.start();
      retention.start();
    }
    return {
      authenticator,
      store,
      repos,
      executors,
      engine,
      checks: definitionChecks(executors, cel),
      clock: systemClock,
      logger,
      idempotencyTtlMs: config.idempotencyTtlHours * 3_600_000,
      async close() {
        await retention.stop();
        await sweeper.stop();
        await engine.close();
        await executors.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
