/**
 * Service configuration from the environment (README "Configuration").
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_OUTPUT_BYTES } from '@switchyard/runner';

/** The example executor registry shipped with the repository (used when SWITCHYARD_EXECUTORS is unset). */
export const EXAMPLE_EXECUTORS_FILE = fileURLToPath(new URL('../../../examples/executors.json', import.meta.url));

/** Settled configuration. Durations in milliseconds. */
export interface ServiceConfig {
  port: number;
  host: string;
  /** MongoDB connection string; undefined selects the embedded store. */
  mongodbUri: string | undefined;
  /** Directory of the embedded store's files (and of the example registry's `files/`). Absolute. */
  dataDir: string;
  /** Executor registry file. Absolute. */
  executorsFile: string;
  logLevel: string;
  /** Run lease duration. */
  leaseMs: number;
  /** Orphaned-run recovery scan period. */
  recoveryIntervalMs: number;
  /** Max concurrent children of one parallel node. */
  parallelLimit: number;
  /** How often the HITL timeout sweeper runs. */
  sweepIntervalMs: number;
  /** Largest step output kept, bytes of JSON (larger ones fail the attempt). */
  maxOutputBytes: number;
  /** Ended runs older than this many days are deleted; null keeps them. */
  runRetentionDays: number | null;
  /** Ended runs kept per workflow (the newest); null keeps all. */
  runsKeptPerWorkflow: number | null;
  /** How often the retention policy is applied. */
  retentionIntervalMs: number;
  /** How long a trigger's `Idempotency-Key` is remembered, hours. */
  idempotencyTtlHours: number;
}

/**
 * Reads the configuration. Throws an Error naming the variable when a value is malformed, so
 * that a misconfigured service refuses to start.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  return {
    port: integer(env, 'PORT', 8080, 0, 65_535),
    host: env.HOST || '127.0.0.1',
    mongodbUri: env.MONGODB_URI || undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    executorsFile: resolve(env.SWITCHYARD_EXECUTORS || EXAMPLE_EXECUTORS_FILE),
    logLevel: env.LOG_LEVEL || 'info',
    leaseMs: integer(env, 'SWITCHYARD_LEASE_MS', 30_000, 1_000, 3_600_000),
    recoveryIntervalMs: integer(env, 'SWITCHYARD_RECOVERY_INTERVAL_MS', 15_000, 100, 3_600_000),
    parallelLimit: integer(env, 'SWITCHYARD_PARALLEL_LIMIT', 8, 1, 1_000),
    sweepIntervalMs: integer(env, 'SWITCHYARD_SWEEP_INTERVAL_MS', 1_000, 10, 3_600_000),
    maxOutputBytes: integer(env, 'SWITCHYARD_MAX_OUTPUT_BYTES', DEFAULT_MAX_OUTPUT_BYTES, 1_024, 8 * 1024 * 1024),
    runRetentionDays: optionalInteger(env, 'SWITCHYARD_RUN_RETENTION_DAYS', 1, 36_500),
    runsKeptPerWorkflow: optionalInteger(env, 'SWITCHYARD_RUNS_KEPT_PER_WORKFLOW', 1, 10_000_000),
    retentionIntervalMs: integer(env, 'SWITCHYARD_RETENTION_INTERVAL_MS', 3_600_000, 1_000, 86_400_000),
    idempotencyTtlHours: integer(env, 'SWITCHYARD_IDEMPOTENCY_TTL_HOURS', 24, 1, 8_760),
  };
}

/** Like {@link integer}, but unset (or empty) gives null: the feature is off. */
function optionalInteger(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : integer(env, name, 0, min, max);
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer between ${min} and ${max}, got '${raw}'`);
  return value;
}
