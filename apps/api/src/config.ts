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
  /**
   * Browser origins allowed to call the API from another origin (CORS), exact `scheme://host[:port]`;
   * `['*']` allows any origin; empty: no CORS headers (same-origin only).
   */
  corsOrigins: readonly string[];
  /** Trigger-type requests (trigger, retry, replay, node rerun) one client may send a minute; 0: unlimited. */
  rateLimitTriggersPerMinute: number;
  /** Approval-type requests (approve, pause, resume, cancel) one client may send a minute; 0: unlimited. */
  rateLimitApprovalsPerMinute: number;
}

/** Default of `SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE`. */
export const DEFAULT_TRIGGERS_PER_MINUTE = 600;
/** Default of `SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE`. */
export const DEFAULT_APPROVALS_PER_MINUTE = 1_200;
/** Largest per-minute limit accepted (a million a minute: effectively unlimited, but a number). */
const MAX_PER_MINUTE = 1_000_000;

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
    corsOrigins: corsOrigins(env, 'SWITCHYARD_CORS_ORIGINS'),
    rateLimitTriggersPerMinute: integer(env, 'SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE', DEFAULT_TRIGGERS_PER_MINUTE, 0, MAX_PER_MINUTE),
    rateLimitApprovalsPerMinute: integer(env, 'SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE', DEFAULT_APPROVALS_PER_MINUTE, 0, MAX_PER_MINUTE),
  };
}

/**
 * A comma-separated list of exact origins (`https://canvas.example.com`, `http://localhost:5173`),
 * or `*` alone for any origin. Unset, empty or only separators: none. Each entry must be an origin
 * as a browser sends it in the `Origin` header (http or https, lower-case host, no default port, no
 * path or trailing slash), since origins are compared exactly; a near miss names the form to write.
 */
function corsOrigins(env: NodeJS.ProcessEnv, name: string): readonly string[] {
  const entries = (env[name] ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.includes('*')) {
    if (entries.length > 1) throw new Error(`${name}: '*' allows every origin and cannot be combined with other origins, got '${env[name]}'`);
    return ['*'];
  }
  for (const entry of entries) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`${name}: '${entry}' is not an origin (scheme://host[:port], e.g. https://canvas.example.com)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${name}: '${entry}' is not an http or https origin`);
    if (url.origin !== entry) {
      throw new Error(`${name}: '${entry}' is not an exact origin (scheme://host[:port], no path, no trailing slash); write '${url.origin}'`);
    }
  }
  return [...new Set(entries)];
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
