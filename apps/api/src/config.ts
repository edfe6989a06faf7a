/**
 * Service configuration from the environment (README "Configuration").
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isIP } from 'node:net';
import {
  DEFAULT_HUMAN_REQUEST_RUN_BUDGET_BYTES,
  DEFAULT_MAX_DECISION_BYTES,
  DEFAULT_MAX_NODES,
  DEFAULT_MAX_OPEN_HUMAN_REQUESTS,
  DEFAULT_MAX_STEP_EXECUTIONS,
  DEFAULT_MAX_STORED_REQUIREMENTS,
  MAX_HUMAN_REQUEST_RUN_BUDGET_BYTES,
} from '@switchyard/domain';
import { DEFAULT_MAX_OUTPUT_BYTES, type HmacTokenMinterOptions } from '@switchyard/runner';
import { DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN } from '@switchyard/runner';
import { AUTH_MODES, type AuthConfig, type AuthMode } from './auth/authenticator.ts';
import { DEFAULT_JWT_MAX_TTL_SECONDS } from './auth/jwt.ts';
import { DEFAULT_COMPACTION_MIN_BYTES } from '@switchyard/store';

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
  /** Most nodes one workflow definition may have, every level counted. */
  maxNodes: number;
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
  /** Approval-type requests (approve, pause, resume, cancel, human requests) one client may send a minute; 0: unlimited. */
  rateLimitApprovalsPerMinute: number;
  /** Definition requests (create, update, validate a workflow) one client may send a minute; 0: unlimited. */
  rateLimitDefinitionsPerMinute: number;
  /** Who may call the API (`SWITCHYARD_AUTH` and friends, README "Authentication"). */
  auth: AuthConfig;
  /** Signing of downstream tokens (`SWITCHYARD_DOWNSTREAM_TOKEN_*`); null: executors get none. */
  downstreamToken: Omit<HmacTokenMinterOptions, 'clock'> | null;
  /** Connection-level bounds and the request-origin checks (plugins/edge-limits.ts, plugins/request-origin.ts). */
  edge: EdgeConfig;
  /** Most step executions (node runs of steps, every loop iteration counted) one definition may imply. */
  maxStepExecutions: number;
  /** Executor calls in flight at most in this instance (`SWITCHYARD_MAX_CONCURRENT_CALLS`); more wait for a slot. */
  maxConcurrentCalls: number;
  /** Executor calls in flight at most to one origin / agent / MCP server (`SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN`); also HTTP sockets per origin. */
  maxConcurrentCallsPerOrigin: number;
  // Run bounds (security item 4; domain run-bounds.ts, .notes/security-run-bounds.md).
  /** Undecided human requests one run may have (`SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS`, default 100). */
  maxOpenHumanRequests: number;
  /** Requirements a run stores past which it takes no new human request (`SWITCHYARD_MAX_STORED_REQUIREMENTS`, default 1 000). */
  maxStoredRequirements: number;
  /** Bytes of JSON of a run document past which it takes no new human request (`SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES`, default 8 MiB, at most 12 MiB). */
  humanRequestRunBudgetBytes: number;
  /** Largest `editedOutput`, `userInput` or `feedback` of a decision, bytes of JSON (`SWITCHYARD_MAX_DECISION_BYTES`, default 256 KiB). */
  maxDecisionBytes: number;
  /** Embedded store: journal bytes past which it is compacted, at least (`SWITCHYARD_COMPACT_JOURNAL_BYTES`, default 64 MiB; see embedded-store.ts). */
  compactJournalBytes: number;
}

/** The edge's bounds (README "Security"). Durations in milliseconds. */
export interface EdgeConfig {
  /**
   * `Host` names (optionally `name:port`) the API answers to (`SWITCHYARD_ALLOWED_HOSTS`); loopback
   * names are always allowed. Empty: without authentication only loopback names, with it any host.
   */
  allowedHosts: readonly string[];
  /** Time to receive a whole request, headers and body (`SWITCHYARD_REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs: number;
  /** Time a connection may stay idle before it is closed (`SWITCHYARD_CONNECTION_TIMEOUT_MS`). */
  connectionTimeoutMs: number;
  /** Open connections one client address may hold (`SWITCHYARD_MAX_CONNECTIONS_PER_ADDRESS`); 0: unlimited. */
  maxConnectionsPerAddress: number;
  /** Event streams (SSE) one caller may hold open at once (`SWITCHYARD_SSE_MAX_STREAMS_PER_CALLER`). */
  sseMaxStreamsPerCaller: number;
  /** Longest life of one event stream before the service ends it (`SWITCHYARD_SSE_MAX_LIFETIME_MS`); clients resume with `Last-Event-ID`. */
  sseMaxLifetimeMs: number;
}

/** Default of `SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE`. */
export const DEFAULT_TRIGGERS_PER_MINUTE = 600;
/** Default of `SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE`. */
export const DEFAULT_APPROVALS_PER_MINUTE = 1_200;
/** Default of `SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE`. */
export const DEFAULT_DEFINITIONS_PER_MINUTE = 300;
/** Largest per-minute limit accepted (a million a minute: effectively unlimited, but a number). */
const MAX_PER_MINUTE = 1_000_000;

/**
 * Reads the configuration. Throws an Error naming the variable when a value is malformed, so
 * that a misconfigured service refuses to start.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const config: ServiceConfig = {
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
    maxNodes: integer(env, 'SWITCHYARD_MAX_NODES', DEFAULT_MAX_NODES, 1, 100_000),
    runRetentionDays: optionalInteger(env, 'SWITCHYARD_RUN_RETENTION_DAYS', 1, 36_500),
    runsKeptPerWorkflow: optionalInteger(env, 'SWITCHYARD_RUNS_KEPT_PER_WORKFLOW', 1, 10_000_000),
    retentionIntervalMs: integer(env, 'SWITCHYARD_RETENTION_INTERVAL_MS', 3_600_000, 1_000, 86_400_000),
    idempotencyTtlHours: integer(env, 'SWITCHYARD_IDEMPOTENCY_TTL_HOURS', 24, 1, 8_760),
    corsOrigins: corsOrigins(env, 'SWITCHYARD_CORS_ORIGINS'),
    rateLimitTriggersPerMinute: integer(env, 'SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE', DEFAULT_TRIGGERS_PER_MINUTE, 0, MAX_PER_MINUTE),
    rateLimitApprovalsPerMinute: integer(env, 'SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE', DEFAULT_APPROVALS_PER_MINUTE, 0, MAX_PER_MINUTE),
    rateLimitDefinitionsPerMinute: integer(env, 'SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE', DEFAULT_DEFINITIONS_PER_MINUTE, 0, MAX_PER_MINUTE),
    auth: authConfig(env),
    downstreamToken: downstreamTokenConfig(env),
    edge: {
      allowedHosts: allowedHosts(env, 'SWITCHYARD_ALLOWED_HOSTS'),
      requestTimeoutMs: integer(env, 'SWITCHYARD_REQUEST_TIMEOUT_MS', DEFAULT_EDGE.requestTimeoutMs, 1_000, 600_000),
      connectionTimeoutMs: integer(env, 'SWITCHYARD_CONNECTION_TIMEOUT_MS', DEFAULT_EDGE.connectionTimeoutMs, 1_000, 3_600_000),
      maxConnectionsPerAddress: integer(env, 'SWITCHYARD_MAX_CONNECTIONS_PER_ADDRESS', DEFAULT_EDGE.maxConnectionsPerAddress, 0, 1_000_000),
      sseMaxStreamsPerCaller: integer(env, 'SWITCHYARD_SSE_MAX_STREAMS_PER_CALLER', DEFAULT_EDGE.sseMaxStreamsPerCaller, 1, 10_000),
      sseMaxLifetimeMs: integer(env, 'SWITCHYARD_SSE_MAX_LIFETIME_MS', DEFAULT_EDGE.sseMaxLifetimeMs, 1_000, 86_400_000),
    },
    maxStepExecutions: integer(env, 'SWITCHYARD_MAX_STEP_EXECUTIONS', DEFAULT_MAX_STEP_EXECUTIONS, 1, 100_000_000),
    // Run bounds (security item 4).
    maxOpenHumanRequests: integer(env, 'SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS', DEFAULT_MAX_OPEN_HUMAN_REQUESTS, 1, 10_000),
    maxStoredRequirements: integer(env, 'SWITCHYARD_MAX_STORED_REQUIREMENTS', DEFAULT_MAX_STORED_REQUIREMENTS, 1, 100_000),
    humanRequestRunBudgetBytes: integer(env, 'SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES', DEFAULT_HUMAN_REQUEST_RUN_BUDGET_BYTES, 64 * 1024, MAX_HUMAN_REQUEST_RUN_BUDGET_BYTES),
    maxDecisionBytes: integer(env, 'SWITCHYARD_MAX_DECISION_BYTES', DEFAULT_MAX_DECISION_BYTES, 1_024, 1024 * 1024),
    compactJournalBytes: integer(env, 'SWITCHYARD_COMPACT_JOURNAL_BYTES', DEFAULT_COMPACTION_MIN_BYTES, 1024 * 1024, 1024 ** 4),
    maxConcurrentCalls: integer(env, 'SWITCHYARD_MAX_CONCURRENT_CALLS', DEFAULT_MAX_CONCURRENT_CALLS, 1, 100_000),
    maxConcurrentCallsPerOrigin: integer(env, 'SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN', DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN, 1, 100_000),
  };
  // A downstream token signed with the API's own key would let every webhook, agent or MCP server
  // that receives one call this API as the user.
  if (config.downstreamToken !== null && config.downstreamToken.secret === config.auth.jwt?.secret) {
    throw new Error('SWITCHYARD_DOWNSTREAM_TOKEN_SECRET must differ from SWITCHYARD_JWT_SECRET: executors receiving a downstream token could otherwise call this API');
  }
  return config;
}

/** Defaults of {@link EdgeConfig} (what `buildApp` uses when given none). */
export const DEFAULT_EDGE: EdgeConfig = Object.freeze({
  allowedHosts: [],
  requestTimeoutMs: 30_000,
  connectionTimeoutMs: 120_000,
  maxConnectionsPerAddress: 256,
  sseMaxStreamsPerCaller: 16,
  sseMaxLifetimeMs: 3_600_000,
});

/**
 * Refuses a configuration that would expose the API without authentication: a `HOST` that is not
 * a loopback address with `SWITCHYARD_AUTH=none` (unless an authenticating proxy vouches for every
 * request: `SWITCHYARD_TRUST_PROXY_IDENTITY=true`). Throws an Error that says what to set.
 */
export function assertSafeBinding(config: Pick<ServiceConfig, 'host' | 'auth' | 'corsOrigins'>): void {
  const unauthenticated = config.auth.modes.length === 0 && !config.auth.trustProxyIdentity;
  // Any web page the user visits could drive an unauthenticated API through the user's browser.
  if (unauthenticated && config.corsOrigins.includes('*')) {
    throw new Error(
      "SWITCHYARD_CORS_ORIGINS=* lets every web page call the API, but SWITCHYARD_AUTH is none: list the canvas's exact origins " +
        '(e.g. SWITCHYARD_CORS_ORIGINS=https://canvas.example.com) or turn authentication on (SWITCHYARD_AUTH=jwt and/or api-key)',
    );
  }
  if (!unauthenticated || isLoopback(config.host)) return;
  throw new Error(
    `HOST=${config.host} exposes the API beyond this machine, but SWITCHYARD_AUTH is none: set SWITCHYARD_AUTH=jwt and/or api-key ` +
      '(README "Authentication"), put an authenticating proxy in front and set SWITCHYARD_TRUST_PROXY_IDENTITY=true, or bind HOST=127.0.0.1',
  );
}

/** `localhost`, `127.0.0.0/8`, `::1` (also IPv4-mapped). */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.');
  return false;
}

/**
 * `SWITCHYARD_AUTH` (`none` | `jwt` | `api-key` | `jwt,api-key`, default none) with what each mode
 * needs: `SWITCHYARD_JWT_SECRET` or `SWITCHYARD_JWKS_URL` (not both), optional
 * `SWITCHYARD_JWT_ISSUER` / `SWITCHYARD_JWT_AUDIENCE` / `SWITCHYARD_JWT_MAX_TTL_SECONDS`; `SWITCHYARD_API_KEYS_FILE`;
 * `SWITCHYARD_TRUST_PROXY_IDENTITY` (`true`/`false`).
 */
function authConfig(env: NodeJS.ProcessEnv): AuthConfig {
  const raw = (env.SWITCHYARD_AUTH ?? '').trim().toLowerCase();
  const names = raw === '' || raw === 'none' ? [] : raw.split(',').map((name) => name.trim());
  const modes: AuthMode[] = [];
  for (const name of names) {
    if (!(AUTH_MODES as readonly string[]).includes(name)) throw new Error(`SWITCHYARD_AUTH must be none, jwt, api-key or jwt,api-key, got '${env.SWITCHYARD_AUTH}'`);
    if (!modes.includes(name as AuthMode)) modes.push(name as AuthMode);
  }
  const config: AuthConfig = { modes, trustProxyIdentity: boolean(env, 'SWITCHYARD_TRUST_PROXY_IDENTITY') };
  if (modes.includes('jwt')) {
    const secret = env.SWITCHYARD_JWT_SECRET || undefined;
    const jwksUrl = env.SWITCHYARD_JWKS_URL || undefined;
    if ((secret === undefined) === (jwksUrl === undefined)) throw new Error('SWITCHYARD_AUTH=jwt needs exactly one of SWITCHYARD_JWT_SECRET (HS256) and SWITCHYARD_JWKS_URL');
    if (jwksUrl !== undefined) httpUrl(jwksUrl, 'SWITCHYARD_JWKS_URL');
    config.jwt = {
      secret,
      jwksUrl,
      issuer: env.SWITCHYARD_JWT_ISSUER || undefined,
      audience: env.SWITCHYARD_JWT_AUDIENCE || undefined,
      maxTtlSeconds: integer(env, 'SWITCHYARD_JWT_MAX_TTL_SECONDS', DEFAULT_JWT_MAX_TTL_SECONDS, 60, 31_536_000),
    };
  }
  if (modes.includes('api-key')) {
    if (!env.SWITCHYARD_API_KEYS_FILE) throw new Error('SWITCHYARD_AUTH=api-key needs SWITCHYARD_API_KEYS_FILE');
    config.apiKeysFile = resolve(env.SWITCHYARD_API_KEYS_FILE);
  }
  return config;
}

/**
 * `SWITCHYARD_DOWNSTREAM_TOKEN_SECRET` (HS256, ≥ 32 bytes) turns downstream tokens on, with
 * `SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE` (default `switchyard-executors`; since tokens are bound
 * to their receiver it is only the fallback `aud` of executors that call no URL — built-ins,
 * stdio MCP servers —; the others use their entry's `tokenAudience`, else their target's origin,
 * see `token-binding.ts` in the runner),
 * `SWITCHYARD_DOWNSTREAM_TOKEN_ISSUER` (default `switchyard`) and
 * `SWITCHYARD_DOWNSTREAM_TOKEN_TTL_SECONDS` (default 300, 10 s to a day).
 */
function downstreamTokenConfig(env: NodeJS.ProcessEnv): Omit<HmacTokenMinterOptions, 'clock'> | null {
  const secret = env.SWITCHYARD_DOWNSTREAM_TOKEN_SECRET;
  if (!secret) return null;
  if (Buffer.byteLength(secret, 'utf8') < 32) throw new Error('SWITCHYARD_DOWNSTREAM_TOKEN_SECRET must be at least 32 bytes (HS256)');
  return {
    secret,
    audience: env.SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE || 'switchyard-executors',
    issuer: env.SWITCHYARD_DOWNSTREAM_TOKEN_ISSUER || 'switchyard',
    ttlSeconds: integer(env, 'SWITCHYARD_DOWNSTREAM_TOKEN_TTL_SECONDS', 300, 10, 86_400),
  };
}

function boolean(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new Error(`${name} must be true or false, got '${env[name]}'`);
}

function httpUrl(value: string, name: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is not a URL: '${value}'`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${name} must be an http: or https: URL`);
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

/**
 * A comma-separated list of host names as browsers send them in `Host`: `api.example.com` (any
 * port) or `api.example.com:8443` (that port only); IPv6 in brackets. Lower-cased; no scheme, path
 * or wildcard.
 */
function allowedHosts(env: NodeJS.ProcessEnv, name: string): readonly string[] {
  const entries = (env[name] ?? '').split(',').map((entry) => entry.trim().toLowerCase()).filter((entry) => entry !== '');
  for (const entry of entries) {
    let url: URL | undefined;
    try {
      url = new URL(`http://${entry}`);
    } catch {
      url = undefined;
    }
    if (url === undefined || url.host !== entry.replace(/:80$/, '') || url.username !== '' || entry.includes('/') || entry.includes('*')) {
      throw new Error(`${name}: '${entry}' is not a host name (name or name:port, e.g. api.example.com or api.example.com:8443; no scheme, path or wildcard)`);
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
