/**
 * {@link AppServices}: what routes and use cases get (built by `openServices`, index.ts). In a
 * module of its own, types only, so that the use cases index.ts wires (the schedule loop's `fire`)
 * can name it without an import circle.
 */
import type { DefinitionChecks, RunBounds } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import type { CelEngine, Clock, ExecutorRegistry, Logger, RunEngine } from '@switchyard/runner';
import type { Readiness } from './readiness.ts';
import type { Metrics } from '../metrics/metrics.ts';

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
  /** Evaluates event triggers' `filterCel` and `inputCel` (event-service.ts); default a CelEngine of its own. */
  cel?: Pick<CelEngine, 'evaluate' | 'evaluateBool'>;
  /** The shortest period a schedule may have, seconds (`SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS`; default 10). */
  scheduleMinIntervalSeconds?: number;
  /** How long posted events are kept, ms (`SWITCHYARD_EVENT_RETENTION_DAYS`; default 7 days). */
  eventRetentionMs?: number;
  /** Per-run caps on human requests and the size bound of decisions (default `DEFAULT_RUN_BOUNDS`, domain run-bounds.ts). */
  runBounds?: RunBounds;
  /** Rewrites failure text before an answer shows it: no absolute DATA_DIR path, no network address (runner public-text.ts). Default: unchanged. */
  publicText?: (text: string) => string;
  /** What `GET /readyz` answers (services/readiness.ts). Default: ready, nothing checked (apps built on partial services). */
  readiness?: Pick<Readiness, 'check'>;
  /** Prometheus metrics: with them the app times its requests and serves `GET /metrics` (docs/operations/metrics.md). Default none. */
  metrics?: Metrics;
}
