/**
 * Service configuration from the environment. Every variable is declared once, in
 * config-schema.ts (docs/reference/configuration.md is generated from it); this module validates
 * the environment against that schema and shapes the result as a {@link ServiceConfig}.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isIP } from 'node:net';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { HmacTokenMinterOptions } from '@switchyard/runner';
import type { AuthConfig, AuthMode } from './auth/authenticator.ts';
import type { WorkflowAccess } from '@switchyard/domain';
import {
  CONFIG_FORMATS,
  CONFIG_SCHEMA,
  commaList,
  parseWorkflowAccess,
  configEntries,
  type ConfigEntry,
  type ConfigEnv,
  type ConfigFormat,
  type ConfigVariable,
} from './config-schema.ts';

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
  /** Most runs this instance executes at once (more wait `pending`). */
  maxActiveRuns: number;
  /** How long executing nodes may finish at shutdown before they are aborted, ms (0: at once). */
  shutdownGraceMs: number;
  /** How often the HITL timeout sweeper runs. */
  sweepIntervalMs: number;
  /** How often the schedule loop runs, ms. */
  scheduleIntervalMs: number;
  /** The shortest period a schedule may have, seconds. */
  scheduleMinIntervalSeconds: number;
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
  /** How long posted events are kept, days (docs/guide/event-triggers.md). */
  eventRetentionDays: number;
  /**
   * Browser origins allowed to call the API from another origin (CORS), exact `scheme://host[:port]`;
   * `['*']` allows any origin; empty: no CORS headers (same-origin only).
   */
  corsOrigins: readonly string[];
  /** Trigger-type requests (trigger, retry, replay, node rerun, event posts) one client may send a minute; 0: unlimited. */
  rateLimitTriggersPerMinute: number;
  /** Approval-type requests (approve, pause, resume, cancel, human requests) one client may send a minute; 0: unlimited. */
  rateLimitApprovalsPerMinute: number;
  /** Definition requests (create, update, validate a workflow) one client may send a minute; 0: unlimited. */
  rateLimitDefinitionsPerMinute: number;
  /** Worker threads parsing YAML bodies (plugins/yaml-parse-pool.ts); 0: on the event loop. */
  yamlParserThreads: number;
  /** Who may call the API (`SWITCHYARD_AUTH` and friends, docs/operations/authentication.md). */
  auth: AuthConfig;
  /** The access workflows stored before #18 get at start-up (`SWITCHYARD_DEFAULT_ACCESS`, docs/guide/access-control.md). */
  defaultAccess: WorkflowAccess;
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
  /** The bearer token `GET /metrics` requires (`SWITCHYARD_METRICS_TOKEN`); null: public. */
  metricsToken: string | null;
  /** Distinct workflow ids the run metrics label by before `other` (`SWITCHYARD_METRICS_MAX_WORKFLOWS`, default 1,000). */
  metricsMaxWorkflows: number;
  /** OpenTelemetry tracing (telemetry/tracing.ts): on when an OTLP endpoint is set and `OTEL_SDK_DISABLED` is not true; null: off. */
  tracing: { serviceName: string } | null;
}

/** The edge's bounds (docs/operations/security.md). Durations in milliseconds. */
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

export { DEFAULT_APPROVALS_PER_MINUTE, DEFAULT_DEFINITIONS_PER_MINUTE, DEFAULT_TRIGGERS_PER_MINUTE } from './config-schema.ts';

/**
 * A configuration that cannot be used: every problem found, each naming its variable. The message
 * is `Invalid configuration: <problem>; <problem>; …`.
 */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads the configuration from `env` against the schema of every variable (config-schema.ts):
 * unset or empty variables take their defaults, durations are milliseconds unless the name says
 * otherwise, paths are resolved against the working directory. Throws one {@link ConfigError}
 * listing every malformed variable and every broken cross-variable rule (jwt needs exactly one of
 * `SWITCHYARD_JWT_SECRET` and `SWITCHYARD_JWKS_URL`, api-key needs `SWITCHYARD_API_KEYS_FILE`, the
 * downstream token key differs from the JWT secret), so that a misconfigured service refuses to
 * start and says everything to fix at once.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const { values: v, problems } = readEnv(env);
  const rules: string[] = [];
  const modes = problems.has('SWITCHYARD_AUTH') ? [] : authModes(v.SWITCHYARD_AUTH);
  if (modes.includes('jwt') && (v.SWITCHYARD_JWT_SECRET === undefined) === (v.SWITCHYARD_JWKS_URL === undefined)) {
    rules.push('SWITCHYARD_AUTH=jwt needs exactly one of SWITCHYARD_JWT_SECRET (HS256) and SWITCHYARD_JWKS_URL');
  }
  if (modes.includes('api-key') && v.SWITCHYARD_API_KEYS_FILE === undefined) rules.push('SWITCHYARD_AUTH=api-key needs SWITCHYARD_API_KEYS_FILE');
  // A downstream token signed with the API's own key would let every webhook, agent or MCP server
  // that receives one call this API as the user.
  if (modes.includes('jwt') && v.SWITCHYARD_DOWNSTREAM_TOKEN_SECRET !== undefined && v.SWITCHYARD_DOWNSTREAM_TOKEN_SECRET === v.SWITCHYARD_JWT_SECRET) {
    rules.push('SWITCHYARD_DOWNSTREAM_TOKEN_SECRET must differ from SWITCHYARD_JWT_SECRET: executors receiving a downstream token could otherwise call this API');
  }
  if (problems.size > 0 || rules.length > 0) throw new ConfigError([...problems.values(), ...rules]);

  const auth: AuthConfig = { modes, trustProxyIdentity: v.SWITCHYARD_TRUST_PROXY_IDENTITY };
  if (modes.includes('jwt')) {
    auth.jwt = {
      secret: v.SWITCHYARD_JWT_SECRET,
      jwksUrl: v.SWITCHYARD_JWKS_URL,
      issuer: v.SWITCHYARD_JWT_ISSUER,
      audience: v.SWITCHYARD_JWT_AUDIENCE,
      maxTtlSeconds: v.SWITCHYARD_JWT_MAX_TTL_SECONDS,
      groupsClaim: v.SWITCHYARD_JWT_GROUPS_CLAIM,
    };
  }
  if (modes.includes('api-key')) auth.apiKeysFile = resolve(v.SWITCHYARD_API_KEYS_FILE!);
  return {
    port: v.PORT,
    host: v.HOST,
    mongodbUri: v.MONGODB_URI,
    dataDir: resolve(v.DATA_DIR),
    executorsFile: resolve(v.SWITCHYARD_EXECUTORS ?? EXAMPLE_EXECUTORS_FILE),
    logLevel: v.LOG_LEVEL,
    leaseMs: v.SWITCHYARD_LEASE_MS,
    recoveryIntervalMs: v.SWITCHYARD_RECOVERY_INTERVAL_MS,
    parallelLimit: v.SWITCHYARD_PARALLEL_LIMIT,
    maxActiveRuns: v.SWITCHYARD_MAX_ACTIVE_RUNS,
    shutdownGraceMs: v.SWITCHYARD_SHUTDOWN_GRACE_MS,
    sweepIntervalMs: v.SWITCHYARD_SWEEP_INTERVAL_MS,
    scheduleIntervalMs: v.SWITCHYARD_SCHEDULE_INTERVAL_MS,
    scheduleMinIntervalSeconds: v.SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS,
    maxOutputBytes: v.SWITCHYARD_MAX_OUTPUT_BYTES,
    maxNodes: v.SWITCHYARD_MAX_NODES,
    runRetentionDays: v.SWITCHYARD_RUN_RETENTION_DAYS ?? null,
    runsKeptPerWorkflow: v.SWITCHYARD_RUNS_KEPT_PER_WORKFLOW ?? null,
    retentionIntervalMs: v.SWITCHYARD_RETENTION_INTERVAL_MS,
    idempotencyTtlHours: v.SWITCHYARD_IDEMPOTENCY_TTL_HOURS,
    eventRetentionDays: v.SWITCHYARD_EVENT_RETENTION_DAYS,
    corsOrigins: corsOrigins(v.SWITCHYARD_CORS_ORIGINS),
    rateLimitTriggersPerMinute: v.SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE,
    rateLimitApprovalsPerMinute: v.SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE,
    rateLimitDefinitionsPerMinute: v.SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE,
    yamlParserThreads: v.SWITCHYARD_YAML_PARSER_THREADS,
    auth,
    defaultAccess: parseWorkflowAccess(v.SWITCHYARD_DEFAULT_ACCESS),
    downstreamToken:
      v.SWITCHYARD_DOWNSTREAM_TOKEN_SECRET === undefined
        ? null
        : {
            secret: v.SWITCHYARD_DOWNSTREAM_TOKEN_SECRET,
            audience: v.SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE,
            issuer: v.SWITCHYARD_DOWNSTREAM_TOKEN_ISSUER,
            ttlSeconds: v.SWITCHYARD_DOWNSTREAM_TOKEN_TTL_SECONDS,
          },
    edge: edgeConfig(v),
    maxStepExecutions: v.SWITCHYARD_MAX_STEP_EXECUTIONS,
    maxOpenHumanRequests: v.SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS,
    maxStoredRequirements: v.SWITCHYARD_MAX_STORED_REQUIREMENTS,
    humanRequestRunBudgetBytes: v.SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES,
    maxDecisionBytes: v.SWITCHYARD_MAX_DECISION_BYTES,
    compactJournalBytes: v.SWITCHYARD_COMPACT_JOURNAL_BYTES,
    maxConcurrentCalls: v.SWITCHYARD_MAX_CONCURRENT_CALLS,
    maxConcurrentCallsPerOrigin: v.SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN,
    metricsToken: v.SWITCHYARD_METRICS_TOKEN ?? null,
    metricsMaxWorkflows: v.SWITCHYARD_METRICS_MAX_WORKFLOWS,
    tracing:
      (v.OTEL_EXPORTER_OTLP_ENDPOINT ?? v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) === undefined || v.OTEL_SDK_DISABLED
        ? null
        : { serviceName: v.OTEL_SERVICE_NAME ?? 'switchyard-api' },
  };
}

/**
 * The declared variables of `env` validated against {@link CONFIG_SCHEMA} (`Value.Default`, then
 * `Value.Check` of each variable against its entry): `values` with the defaults filled in
 * (meaningful only for the variables without a problem) and `problems`, one message per malformed
 * variable, keyed by its name, in declaration order. Empty values count as unset. Never throws.
 */
function readEnv(env: NodeJS.ProcessEnv): { values: ConfigEnv; problems: Map<ConfigVariable, string> } {
  const input: Record<string, unknown> = {};
  const entries = new Map(configEntries());
  for (const [name, entry] of entries) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    input[name] = fromEnvString(entry, raw);
  }
  const values = Value.Default(CONFIG_SCHEMA, input) as ConfigEnv;
  // Checked one variable at a time: a whole-object check stops collecting at TypeBox's
  // `maxErrors` (8), and every malformed variable is to be named.
  const problems = new Map<ConfigVariable, string>();
  for (const [name, entry] of entries) {
    const value = values[name];
    if (value === undefined || Value.Check(entry, value)) continue;
    problems.set(name, problemOf(name, entry, env[name] ?? '', Value.Errors(entry, value)[0]?.message ?? 'is malformed'));
  }
  return { values, problems };
}

/**
 * The raw string of a variable as the value its entry checks: integers of decimal digits as `Number(raw)` (not
 * `Value.Convert`, which truncates `1.5` to 1 and reads `true` as 1; a non-integer stays and fails
 * the check), booleans through `Value.Convert` (true/false/1/0, any case, trimmed), strings as
 * they are. A string that does not convert is returned as is, for the check to refuse.
 */
function fromEnvString(entry: ConfigEntry & TSchema, raw: string): unknown {
  // Decimal digits only: `Number` alone would also read 0x50, 1e3 or 0b1.
  if (entry.type === 'integer') return /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (entry.type === 'boolean') return Value.Convert(entry, raw.trim());
  return raw;
}

/** The message for a malformed variable: worded from its entry (bounds, format), naming it and quoting what it got. */
function problemOf(name: ConfigVariable, entry: ConfigEntry, raw: string, fallback: string): string {
  if (entry.type === 'integer') return `${name} must be an integer between ${entry.minimum} and ${entry.maximum}, got '${raw}'`;
  if (entry.type === 'boolean') return `${name} must be true or false, got '${raw}'`;
  const format = entry.format === undefined ? undefined : (CONFIG_FORMATS as Record<string, ConfigFormat>)[entry.format];
  return format?.problem(raw, name) ?? `${name} ${fallback}, got '${raw}'`;
}

/** The modes of a valid `SWITCHYARD_AUTH` (`none` → none), lower-cased, each once, in order. */
function authModes(value: string): AuthMode[] {
  const names = commaList(value.toLowerCase());
  return names.length === 1 && names[0] === 'none' ? [] : ([...new Set(names)] as AuthMode[]);
}

/** A valid `SWITCHYARD_CORS_ORIGINS` as its distinct origins (`['*']` for any); unset: none. */
function corsOrigins(value: string | undefined): readonly string[] {
  return [...new Set(commaList(value ?? ''))];
}

/** The {@link EdgeConfig} of validated variables. */
function edgeConfig(v: ConfigEnv): EdgeConfig {
  return {
    allowedHosts: [...new Set(commaList((v.SWITCHYARD_ALLOWED_HOSTS ?? '').toLowerCase()))],
    requestTimeoutMs: v.SWITCHYARD_REQUEST_TIMEOUT_MS,
    connectionTimeoutMs: v.SWITCHYARD_CONNECTION_TIMEOUT_MS,
    maxConnectionsPerAddress: v.SWITCHYARD_MAX_CONNECTIONS_PER_ADDRESS,
    sseMaxStreamsPerCaller: v.SWITCHYARD_SSE_MAX_STREAMS_PER_CALLER,
    sseMaxLifetimeMs: v.SWITCHYARD_SSE_MAX_LIFETIME_MS,
  };
}

/** Defaults of {@link EdgeConfig} (what `buildApp` uses when given none): the schema's defaults. */
export const DEFAULT_EDGE: EdgeConfig = Object.freeze(edgeConfig(readEnv({}).values));

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
      '(docs/operations/authentication.md), put an authenticating proxy in front and set SWITCHYARD_TRUST_PROXY_IDENTITY=true, or bind HOST=127.0.0.1',
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
