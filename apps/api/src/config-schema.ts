/**
 * Every environment variable of the API, declared once: its name (the property key), type, default,
 * bounds, description and documentation group. `loadConfig` (config.ts) validates the environment
 * against {@link CONFIG_SCHEMA}, and `npm run docs` renders docs/reference/configuration.md from it
 * ({@link renderConfigDocs}).
 *
 * Conventions of an entry:
 * - `Type.Integer({ minimum, maximum, default })`: a decimal integer within the bounds (both inclusive);
 *   `Type.Optional(Type.Integer(...))` without a default: unset means "off" (null in the config).
 * - `Type.Boolean({ default })`: `true` / `false` / `1` / `0` (any case, surrounding spaces ignored).
 * - `Type.String({ format })`: the format names a check of {@link CONFIG_FORMATS} (registered with
 *   TypeBox's format registry, so `Value.Check` applies it), which also words the error.
 * - `group`: the section of the documentation the variable is listed in ({@link CONFIG_GROUPS}).
 * - `defaultText`: how the documentation shows a default that is not a plain value.
 * An empty value is the same as an unset one everywhere.
 *
 * The MCP bridge's variables (apps/mcp-bridge/src/config.ts) are not declared here.
 */
import { isIP } from 'node:net';
import Type, { type Static, type TSchema } from 'typebox';
import { Format } from 'typebox/format';
import { Value } from 'typebox/value';
import {
  DEFAULT_LEGACY_ACCESS,
  WorkflowAccessBody,
  normalizeAccess,
  type WorkflowAccess,
  DEFAULT_HUMAN_REQUEST_RUN_BUDGET_BYTES,
  DEFAULT_MAX_DECISION_BYTES,
  DEFAULT_MAX_NODES,
  DEFAULT_MAX_OPEN_HUMAN_REQUESTS,
  DEFAULT_MAX_STEP_EXECUTIONS,
  DEFAULT_MAX_STORED_REQUIREMENTS,
  MAX_HUMAN_REQUEST_RUN_BUDGET_BYTES,
} from '@switchyard/domain';
import { DEFAULT_YAML_QUEUE, DEFAULT_YAML_THREADS } from './plugins/yaml-parse-pool.ts';
import { DEFAULT_MAX_ACTIVE_RUNS, DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN, DEFAULT_MAX_OUTPUT_BYTES } from '@switchyard/runner';
import { DEFAULT_COMPACTION_MIN_BYTES } from '@switchyard/store';
import { AUTH_MODES } from './auth/authenticator.ts';
import { DEFAULT_JWT_GROUPS_CLAIM, DEFAULT_JWT_MAX_TTL_SECONDS } from './auth/jwt.ts';
import { DEFAULT_METRICS_MAX_WORKFLOWS } from './metrics/bounded-labels.ts';

/**
 * Default of `SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE`: 6,000 a minute (100 a second), a level no
 * single real integration reaches, so it stops only a runaway client (docs/operations/edge.md).
 */
export const DEFAULT_TRIGGERS_PER_MINUTE = 6_000;
/** Default of `SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE`. */
export const DEFAULT_APPROVALS_PER_MINUTE = 1_200;
/** Default of `SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE`. */
export const DEFAULT_DEFINITIONS_PER_MINUTE = 300;
/** Largest per-minute limit accepted (a million a minute: effectively unlimited, but a number). */
const MAX_PER_MINUTE = 1_000_000;

/** The documentation sections, in order (the `group` of every entry is one of these). */
export const CONFIG_GROUPS = [
  'Server',
  'Storage',
  'Engine',
  'Definition limits',
  'Run bounds',
  'Retention',
  'Connections and streams',
  'Browsers',
  'Rate limits',
  'Authentication',
  'Access control',
  'Downstream tokens',
  'Metrics',
  'Tracing',
] as const;
export type ConfigGroup = (typeof CONFIG_GROUPS)[number];

/** A custom string shape: its check (the problem with a value, worded with the variable's name, or undefined when fine) and how the docs name it. */
export interface ConfigFormat {
  /** The type column of the documentation. */
  readonly type: string;
  /** The range column of the documentation, when the shape has one. */
  readonly range?: string;
  /** The problem with `value` as the value of variable `name` (a whole sentence naming it), or undefined when it is valid. */
  problem(value: string, name: string): string | undefined;
}

/** `value` split at commas, entries trimmed, empty ones dropped (`' a, ,b '` → `['a', 'b']`). */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * `text` as a workflow access list (JSON of domain `WorkflowAccessBody`, normalized). Throws an
 * Error saying what is wrong: not JSON, a field of the wrong shape, no owner.
 */
export function parseWorkflowAccess(text: string): WorkflowAccess {
  const parsed: unknown = JSON.parse(text);
  if (!Value.Check(WorkflowAccessBody, parsed)) {
    const first = [...Value.Errors(WorkflowAccessBody, parsed)][0];
    throw new Error(`${first?.instancePath || '$'} ${first?.message ?? 'is invalid'}`);
  }
  return normalizeAccess(parsed);
}

/** The levels `LOG_LEVEL` may name (pino's). */
const PINO_LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * The custom formats, by name. Each is registered with TypeBox's format registry at load, so
 * `Value.Check(CONFIG_SCHEMA, …)` fails a value whose `problem` is defined.
 */
export const CONFIG_FORMATS = {
  /** Any file or directory path; resolved against the working directory. */
  path: {
    type: 'path',
    problem: () => undefined,
  },
  /** An IP address (IPv6 optionally in brackets) or a host name (letters, digits, `-`, `_`, dots) to listen on. */
  'listen-host': {
    type: 'address',
    range: 'IP address or host name',
    problem(value, name) {
      const bare = value.replace(/^\[(.*)\]$/, '$1');
      const hostName = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/i;
      return isIP(bare) !== 0 || hostName.test(value) ? undefined : `${name} must be an IP address or a host name, got '${value}'`;
    },
  },
  /** A pino level. */
  'log-level': {
    type: 'level',
    range: PINO_LEVELS.map((level) => `\`${level}\``).join(', '),
    problem: (value, name) => (PINO_LEVELS.includes(value) ? undefined : `${name} must be one of ${PINO_LEVELS.join(', ')}, got '${value}'`),
  },
  /** A MongoDB connection string (not quoted in the error: it may hold a password). */
  'mongodb-uri': {
    type: 'connection string',
    range: '`mongodb://…` or `mongodb+srv://…`',
    problem: (value, name) => (/^mongodb(\+srv)?:\/\/./.test(value) ? undefined : `${name} must be a mongodb:// or mongodb+srv:// connection string`),
  },
  /** `none`, `jwt`, `api-key` or both (comma-separated), any case. */
  'auth-modes': {
    type: 'list of modes',
    range: '`none`, `jwt`, `api-key`, `jwt,api-key`',
    problem(value, name) {
      // Strict, unlike the other lists: an empty entry (`jwt,`) is refused, as a likely typo.
      const names = value.trim().toLowerCase().split(',').map((mode) => mode.trim());
      const known = names.join() === '' || names.join() === 'none' || names.every((mode) => (AUTH_MODES as readonly string[]).includes(mode));
      return known ? undefined : `${name} must be none, jwt, api-key or jwt,api-key, got '${value}'`;
    },
  },
  /**
   * The name of a JWT claim, or a dot-separated path into nested claims (`realm_access.roles`):
   * 1–200 characters without whitespace, no empty segment (no leading, trailing or doubled dot).
   */
  'claim-path': {
    type: 'claim name',
    range: '`name` or `a.b.c`',
    problem(value, name) {
      const valid = value.length <= 200 && /^[^\s.]+(\.[^\s.]+)*$/.test(value);
      return valid ? undefined : `${name} must be a claim name or a dot-separated path of them (e.g. groups, realm_access.roles), got '${value.slice(0, 200)}'`;
    },
  },
  /** A workflow access list as JSON (domain access.ts `WorkflowAccessBody`: `owners` required, at least one). */
  'workflow-access': {
    type: 'JSON',
    range: '`{ "owners": [...], "editors": [...], "operators": [...], "viewers": [...] }`',
    problem(value, name) {
      try {
        parseWorkflowAccess(value);
        return undefined;
      } catch (error) {
        return `${name} must be a JSON access list { "owners": [...], "editors"?, "operators"?, "viewers"? } of principals (user:<id>, group:<name>, *): ${(error as Error).message}`;
      }
    },
  },
  /** An absolute `http:` or `https:` URL. */
  'http-url': {
    type: 'URL',
    range: 'http: or https:',
    problem(value, name) {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        // The value is not quoted: a URL may carry credentials or a token in its query.
        return `${name} is not a URL`;
      }
      return url.protocol === 'https:' || url.protocol === 'http:' ? undefined : `${name} must be an http: or https: URL`;
    },
  },
  /** A bearer token a client sends in `Authorization`: 16–4,096 visible ASCII characters (not quoted in the error: it is a secret). */
  'bearer-token': {
    type: 'secret',
    range: '16–4,096 visible ASCII characters',
    problem: (value, name) => (/^[\x21-\x7e]{16,4096}$/.test(value) ? undefined : `${name} must be 16 to 4096 visible ASCII characters (no spaces)`),
  },
  /** An HMAC-SHA-256 key: at least 32 bytes of UTF-8. */
  'hs256-key': {
    type: 'secret',
    range: '≥ 32 bytes',
    problem: (value, name) => (Buffer.byteLength(value, 'utf8') < 32 ? `${name} must be at least 32 bytes (HS256)` : undefined),
  },
  /**
   * A comma-separated list of exact origins (`https://canvas.example.com`, `http://localhost:5173`),
   * or `*` alone for any origin. Each entry must be an origin as a browser sends it in the `Origin`
   * header (http or https, lower-case host, no default port, no path or trailing slash), since
   * origins are compared exactly; a near miss names the form to write.
   */
  'cors-origins': {
    type: 'list of origins',
    range: '`scheme://host[:port]`, or `*`',
    problem(value, name) {
      const entries = commaList(value);
      if (entries.includes('*')) {
        return entries.length > 1 ? `${name}: '*' allows every origin and cannot be combined with other origins, got '${value}'` : undefined;
      }
      for (const entry of entries) {
        let url: URL;
        try {
          url = new URL(entry);
        } catch {
          return `${name}: '${entry}' is not an origin (scheme://host[:port], e.g. https://canvas.example.com)`;
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${name}: '${entry}' is not an http or https origin`;
        if (url.origin !== entry) return `${name}: '${entry}' is not an exact origin (scheme://host[:port], no path, no trailing slash); write '${url.origin}'`;
      }
      return undefined;
    },
  },
  /**
   * A comma-separated list of host names as browsers send them in `Host`: `api.example.com` (any
   * port) or `api.example.com:8443` (that port only); IPv6 in brackets. Any case; no scheme, path
   * or wildcard.
   */
  'host-names': {
    type: 'list of host names',
    range: '`name` or `name:port`',
    problem(value, name) {
      for (const entry of commaList(value.toLowerCase())) {
        let url: URL | undefined;
        try {
          url = new URL(`http://${entry}`);
        } catch {
          url = undefined;
        }
        if (url === undefined || url.host !== entry.replace(/:80$/, '') || url.username !== '' || entry.includes('/') || entry.includes('*')) {
          return `${name}: '${entry}' is not a host name (name or name:port, e.g. api.example.com or api.example.com:8443; no scheme, path or wildcard)`;
        }
      }
      return undefined;
    },
  },
} satisfies Record<string, ConfigFormat>;
export type ConfigFormatName = keyof typeof CONFIG_FORMATS;

for (const [name, format] of Object.entries(CONFIG_FORMATS) as [string, ConfigFormat][]) {
  Format.Set(name, (value) => format.problem(value, name) === undefined);
}

/** Every variable: `{ NAME: schema }` (see the module comment for the conventions). */
export const CONFIG_SCHEMA = Type.Object({
  // Server
  PORT: Type.Integer({ group: 'Server', default: 8080, minimum: 0, maximum: 65_535, description: 'HTTP port' }),
  HOST: Type.String({ group: 'Server', format: 'listen-host', default: '127.0.0.1', description: 'listen address (`0.0.0.0` in containers)' }),
  LOG_LEVEL: Type.String({
    group: 'Server',
    format: 'log-level',
    default: 'info',
    description: 'log level; at `info` every request costs one `request completed` line (method, URL, host, client address, `statusCode`, `responseTime` in ms)',
  }),
  // Storage
  MONGODB_URI: Type.Optional(
    Type.String({ group: 'Storage', format: 'mongodb-uri', description: 'MongoDB connection string (a replica set is recommended); unset = embedded store' }),
  ),
  DATA_DIR: Type.String({
    group: 'Storage',
    format: 'path',
    default: './data',
    description: 'embedded store files, and `files/` for the example filesystem MCP server',
  }),
  SWITCHYARD_COMPACT_JOURNAL_BYTES: Type.Integer({
    group: 'Storage',
    default: DEFAULT_COMPACTION_MIN_BYTES,
    minimum: 1024 * 1024,
    maximum: 1024 ** 4,
    description: "bytes; the embedded store's journal is compacted past max(this, 4 × live data) too",
  }),
  // Engine
  SWITCHYARD_EXECUTORS: Type.Optional(
    Type.String({ group: 'Engine', format: 'path', defaultText: '`examples/executors.json`', description: 'executor registry file' }),
  ),
  SWITCHYARD_PARALLEL_LIMIT: Type.Integer({ group: 'Engine', default: 8, minimum: 1, maximum: 1_000, description: 'max concurrent children of one parallel node' }),
  SWITCHYARD_LEASE_MS: Type.Integer({
    group: 'Engine',
    default: 30_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description: 'run lease, ms; a run whose owner stops heartbeating is taken over after this',
  }),
  SWITCHYARD_RECOVERY_INTERVAL_MS: Type.Integer({
    group: 'Engine',
    default: 15_000,
    minimum: 100,
    maximum: 3_600_000,
    description: 'how often each instance looks for runs without a live owner, ms',
  }),
  SWITCHYARD_MAX_ACTIVE_RUNS: Type.Integer({
    group: 'Engine',
    default: DEFAULT_MAX_ACTIVE_RUNS,
    minimum: 1,
    maximum: 10_000,
    description: 'most runs one instance executes at once; more stay `pending` and are claimed as runs end, oldest trigger first',
  }),
  SWITCHYARD_SHUTDOWN_GRACE_MS: Type.Integer({
    group: 'Engine',
    default: 10_000,
    minimum: 0,
    maximum: 3_600_000,
    description: 'on SIGTERM/SIGINT, how long executing nodes may finish before they are aborted and their runs released, ms (0: abort at once)',
  }),
  SWITCHYARD_SWEEP_INTERVAL_MS: Type.Integer({
    group: 'Engine',
    default: 1_000,
    minimum: 10,
    maximum: 3_600_000,
    description: 'how often HITL gates past their `timeoutAt` are decided, ms',
  }),
  SWITCHYARD_SCHEDULE_INTERVAL_MS: Type.Integer({
    group: 'Engine',
    default: 1_000,
    minimum: 100,
    maximum: 60_000,
    description: 'how often the schedule loop looks for due ticks and buffered ticks whose run ended, ms (docs/guide/schedules.md)',
  }),
  SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS: Type.Integer({
    group: 'Engine',
    default: 10,
    minimum: 1,
    maximum: 86_400,
    description:
      "the shortest period a schedule may have, s: an intervalSeconds below it, or a cron firing more often, is refused (ticks bypass the trigger rate limit, so this bounds the runs a schedule starts)",
  }),
  SWITCHYARD_MAX_OUTPUT_BYTES: Type.Integer({
    group: 'Engine',
    default: DEFAULT_MAX_OUTPUT_BYTES,
    minimum: 1_024,
    maximum: 8 * 1024 * 1024,
    description:
      'largest node output kept (bytes of JSON); larger ones fail the node. Executor answers are read up to this + max(64 KiB, 25 %), then cut off unparsed',
  }),
  SWITCHYARD_MAX_CONCURRENT_CALLS: Type.Integer({
    group: 'Engine',
    default: DEFAULT_MAX_CONCURRENT_CALLS,
    minimum: 1,
    maximum: 100_000,
    description: 'executor calls in flight in one instance; more wait in line (within their time limit)',
  }),
  SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN: Type.Integer({
    group: 'Engine',
    default: DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN,
    minimum: 1,
    maximum: 100_000,
    description: "executor calls (and sockets) in flight to one target (a webhook's or agent's origin, an MCP server)",
  }),
  // Definition limits
  SWITCHYARD_MAX_NODES: Type.Integer({
    group: 'Definition limits',
    default: DEFAULT_MAX_NODES,
    minimum: 1,
    maximum: 100_000,
    description: 'most nodes one workflow definition may have, every level counted; more is a 400 naming the limit',
  }),
  SWITCHYARD_MAX_STEP_EXECUTIONS: Type.Integer({
    group: 'Definition limits',
    default: DEFAULT_MAX_STEP_EXECUTIONS,
    minimum: 1,
    maximum: 100_000_000,
    description: 'most step executions a definition may imply: the sum over its steps of the product of the `maxIterations` of the loops around each; more is a 400',
  }),
  SWITCHYARD_YAML_PARSER_THREADS: Type.Integer({
    group: 'Definition limits',
    default: DEFAULT_YAML_THREADS,
    minimum: 0,
    maximum: 16,
    description:
      'worker threads that parse YAML definition bodies (started with the first one), so a large body does not stall other requests; ' +
      `when all are busy, ${DEFAULT_YAML_QUEUE} more bodies wait and further ones get 503 \`too_busy\`. \`0\` parses on the event loop (for comparison only: ` +
      'a 1 MiB body then stalls every request for up to seconds)',
  }),
  // Run bounds
  SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS: Type.Integer({
    group: 'Run bounds',
    default: DEFAULT_MAX_OPEN_HUMAN_REQUESTS,
    minimum: 1,
    maximum: 10_000,
    description: 'undecided human requests one run may have; more are a 409 `limit_reached`',
  }),
  SWITCHYARD_MAX_STORED_REQUIREMENTS: Type.Integer({
    group: 'Run bounds',
    default: DEFAULT_MAX_STORED_REQUIREMENTS,
    minimum: 1,
    maximum: 100_000,
    description: 'requirements (gates and human requests) a run stores before it takes no new human request',
  }),
  SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES: Type.Integer({
    group: 'Run bounds',
    default: DEFAULT_HUMAN_REQUEST_RUN_BUDGET_BYTES,
    minimum: 64 * 1024,
    maximum: MAX_HUMAN_REQUEST_RUN_BUDGET_BYTES,
    description: 'bytes of JSON of a run document past which it takes no new human request',
  }),
  SWITCHYARD_MAX_DECISION_BYTES: Type.Integer({
    group: 'Run bounds',
    default: DEFAULT_MAX_DECISION_BYTES,
    minimum: 1_024,
    maximum: 1024 * 1024,
    description: 'largest `editedOutput`, `userInput` or `feedback` of a decision, bytes of JSON',
  }),
  // Retention
  SWITCHYARD_RUN_RETENTION_DAYS: Type.Optional(
    Type.Integer({
      group: 'Retention',
      minimum: 1,
      maximum: 36_500,
      description: 'delete ended runs (with node runs and events) that finished more than this many days ago; unset keeps them',
    }),
  ),
  SWITCHYARD_RUNS_KEPT_PER_WORKFLOW: Type.Optional(
    Type.Integer({
      group: 'Retention',
      minimum: 1,
      maximum: 10_000_000,
      description: 'keep only this many ended runs per workflow (the newest); unset keeps all',
    }),
  ),
  SWITCHYARD_RETENTION_INTERVAL_MS: Type.Integer({
    group: 'Retention',
    default: 3_600_000,
    minimum: 1_000,
    maximum: 86_400_000,
    description: 'how often the retention policy is applied (when one is set) and expired idempotency keys are purged, ms',
  }),
  SWITCHYARD_IDEMPOTENCY_TTL_HOURS: Type.Integer({
    group: 'Retention',
    default: 24,
    minimum: 1,
    maximum: 8_760,
    description: "how long a run start's `Idempotency-Key` (trigger, retry, replay, node rerun) is remembered, hours",
  }),
  SWITCHYARD_EVENT_RETENTION_DAYS: Type.Integer({
    group: 'Retention',
    default: 7,
    minimum: 1,
    maximum: 3_650,
    description: 'how long events posted to `POST /api/v1/events` are kept (listed, with the runs they started), days; a repeated event `id` is deduplicated for 24 h regardless',
  }),
  // Connections and streams
  SWITCHYARD_ALLOWED_HOSTS: Type.Optional(
    Type.String({
      group: 'Connections and streams',
      format: 'host-names',
      description:
        '`Host` names the API answers to (`name` or `name:port`, comma-separated); loopback names are always allowed. Unset: without authentication only loopback names, with it any (see [Security](../operations/security.md))',
    }),
  ),
  SWITCHYARD_REQUEST_TIMEOUT_MS: Type.Integer({
    group: 'Connections and streams',
    default: 30_000,
    minimum: 1_000,
    maximum: 600_000,
    description: 'time a client has to send a whole request (headers and body), ms; then 408 and the connection closes',
  }),
  SWITCHYARD_CONNECTION_TIMEOUT_MS: Type.Integer({
    group: 'Connections and streams',
    default: 120_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description: 'idle connections are closed after this, ms',
  }),
  SWITCHYARD_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({
    group: 'Connections and streams',
    default: 256,
    minimum: 0,
    maximum: 1_000_000,
    description: 'open connections one client address may hold; one more is answered 429 and closed; `0` = unlimited',
  }),
  SWITCHYARD_SSE_MAX_STREAMS_PER_CALLER: Type.Integer({
    group: 'Connections and streams',
    default: 16,
    minimum: 1,
    maximum: 10_000,
    description: 'event streams one caller may hold open; one more is a 429',
  }),
  SWITCHYARD_SSE_MAX_LIFETIME_MS: Type.Integer({
    group: 'Connections and streams',
    default: 3_600_000,
    minimum: 1_000,
    maximum: 86_400_000,
    description: "the service ends an event stream after this (or when the caller's JWT expires), ms; clients resume with `Last-Event-ID`",
  }),
  // Browsers
  SWITCHYARD_CORS_ORIGINS: Type.Optional(
    Type.String({
      group: 'Browsers',
      format: 'cors-origins',
      description:
        'browser origins allowed to call the API from another origin (CORS): comma-separated exact origins such as `https://canvas.example.com,http://localhost:5173` (scheme, host, port unless the default; no path or trailing slash), or `*` alone for any (refused without authentication); unset = no CORS headers (same-origin only). Only these origins (and the service\'s own) may send state-changing requests from a browser',
    }),
  ),
  // Rate limits
  SWITCHYARD_RATE_LIMIT_TRIGGERS_PER_MINUTE: Type.Integer({
    group: 'Rate limits',
    default: DEFAULT_TRIGGERS_PER_MINUTE,
    minimum: 0,
    maximum: MAX_PER_MINUTE,
    description:
      'trigger, retry, replay and node-rerun requests one client may send a minute (counted together); more get 429 `rate_limited`; `0` = unlimited. ' +
      'The default, 100 a second, is above what one real integration sends and stops only a runaway client (a retry loop without backoff)',
  }),
  SWITCHYARD_RATE_LIMIT_APPROVALS_PER_MINUTE: Type.Integer({
    group: 'Rate limits',
    default: DEFAULT_APPROVALS_PER_MINUTE,
    minimum: 0,
    maximum: MAX_PER_MINUTE,
    description: 'approve, pause, resume and cancel requests and new human requests one client may send a minute (counted together); `0` = unlimited',
  }),
  SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE: Type.Integer({
    group: 'Rate limits',
    default: DEFAULT_DEFINITIONS_PER_MINUTE,
    minimum: 0,
    maximum: MAX_PER_MINUTE,
    description: 'create, update and validate requests of workflows one client may send a minute (their definition checks cost the most CPU); `0` = unlimited',
  }),
  // Authentication
  SWITCHYARD_AUTH: Type.String({
    group: 'Authentication',
    format: 'auth-modes',
    default: 'none',
    description:
      '`none`, `jwt`, `api-key` or `jwt,api-key` (see [authentication](../operations/authentication.md)); `none` is refused with a non-loopback `HOST` unless `SWITCHYARD_TRUST_PROXY_IDENTITY=true`',
  }),
  SWITCHYARD_JWT_SECRET: Type.Optional(
    Type.String({ group: 'Authentication', format: 'hs256-key', description: 'HS256 secret for `jwt`; `jwt` needs exactly one of this and `SWITCHYARD_JWKS_URL`' }),
  ),
  SWITCHYARD_JWKS_URL: Type.Optional(
    Type.String({
      group: 'Authentication',
      format: 'http-url',
      description: 'JSON Web Key Set URL for `jwt` (RS/PS/ES/EdDSA keys; fetched and cached, refetched for an unknown `kid`)',
    }),
  ),
  SWITCHYARD_JWT_ISSUER: Type.Optional(Type.String({ group: 'Authentication', description: 'required `iss` of tokens, when set' })),
  SWITCHYARD_JWT_AUDIENCE: Type.Optional(Type.String({ group: 'Authentication', description: 'required `aud` of tokens, when set' })),
  SWITCHYARD_JWT_MAX_TTL_SECONDS: Type.Integer({
    group: 'Authentication',
    default: DEFAULT_JWT_MAX_TTL_SECONDS,
    minimum: 60,
    maximum: 31_536_000,
    description: 'longest lifetime (`exp` − `iat`) of an accepted JWT, seconds; `iat` may not lie in the future',
  }),
  SWITCHYARD_JWT_GROUPS_CLAIM: Type.String({
    group: 'Authentication',
    format: 'claim-path',
    default: DEFAULT_JWT_GROUPS_CLAIM,
    description:
      'the JWT claim holding the caller\'s groups (principals `group:<name>`): an array of strings or one string of names separated by commas or spaces; a dot-separated path reaches a nested claim (`realm_access.roles`) when no top-level claim has the exact name. At most 100 groups, each 1–200 characters without whitespace or commas, else the token is refused (401)',
  }),
  SWITCHYARD_API_KEYS_FILE: Type.Optional(
    Type.String({
      group: 'Authentication',
      format: 'path',
      description: 'required by `api-key`: JSON `{ "keys": [{ "name", "sha256", "scopes", "subject"?, "groups"? }] }` (make entries with `npm run api-key`)',
    }),
  ),
  SWITCHYARD_TRUST_PROXY_IDENTITY: Type.Boolean({
    group: 'Authentication',
    default: false,
    description:
      '`true`: honour `X-Switchyard-User-Id` / `-Username` / `-Scopes` / `-Groups` set by an authenticating proxy in front, for requests without a credential; only with `SWITCHYARD_AUTH=none` (with `jwt` or `api-key` on, a missing credential is a 401 whatever the headers say). The `Host` allow-list stays on: set `SWITCHYARD_ALLOWED_HOSTS` to the name the proxy forwards',
  }),
  // Access control
  SWITCHYARD_DEFAULT_ACCESS: Type.String({
    group: 'Access control',
    format: 'workflow-access',
    default: JSON.stringify(DEFAULT_LEGACY_ACCESS),
    defaultText: '`{"owners":["group:admins"],"editors":[],"operators":["*"],"viewers":["*"]}`',
    description:
      'the access given at start-up to workflows stored before per-workflow access existed (their creator is unknown); see [access control](../guide/access-control.md)',
  }),
  // Downstream tokens
  SWITCHYARD_DOWNSTREAM_TOKEN_SECRET: Type.Optional(
    Type.String({
      group: 'Downstream tokens',
      format: 'hs256-key',
      description: 'HS256 key that signs the short-lived token every executor call over HTTP carries; unset = no token. Must differ from `SWITCHYARD_JWT_SECRET`',
    }),
  ),
  SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE: Type.String({
    group: 'Downstream tokens',
    default: 'switchyard-executors',
    description:
      "fallback `aud` of downstream tokens for executors without a URL; webhooks, agents and MCP servers over HTTP get their own origin (or their entry's `tokenAudience`)",
  }),
  SWITCHYARD_DOWNSTREAM_TOKEN_ISSUER: Type.String({ group: 'Downstream tokens', default: 'switchyard', description: '`iss` of downstream tokens' }),
  SWITCHYARD_DOWNSTREAM_TOKEN_TTL_SECONDS: Type.Integer({
    group: 'Downstream tokens',
    default: 300,
    minimum: 10,
    maximum: 86_400,
    description: 'lifetime of a downstream token, seconds',
  }),
  // Metrics
  SWITCHYARD_METRICS_TOKEN: Type.Optional(
    Type.String({
      group: 'Metrics',
      format: 'bearer-token',
      description:
        'when set, `GET /metrics` requires `Authorization: Bearer <this>` (else 401); unset = `/metrics` is public (see [metrics](../operations/metrics.md))',
    }),
  ),
  SWITCHYARD_METRICS_MAX_WORKFLOWS: Type.Integer({
    group: 'Metrics',
    default: DEFAULT_METRICS_MAX_WORKFLOWS,
    minimum: 0,
    maximum: 100_000,
    description: 'distinct workflow ids the run metrics label by; runs of further workflows are counted under `workflow="other"` (bounds the number of time series)',
  }),
  // Tracing: OpenTelemetry's standard variables, read by its SDK (docs/operations/tracing.md).
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    Type.String({
      group: 'Tracing',
      format: 'http-url',
      description:
        'OpenTelemetry standard: the OTLP/HTTP collector base URL (traces go to `<this>/v1/traces`); set = tracing on (see [tracing](../operations/tracing.md)), unset = off',
    }),
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(
    Type.String({
      group: 'Tracing',
      format: 'http-url',
      description: 'OpenTelemetry standard: the full OTLP/HTTP traces URL (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`); set = tracing on',
    }),
  ),
  OTEL_SERVICE_NAME: Type.Optional(
    Type.String({ group: 'Tracing', defaultText: '`switchyard-api`', description: 'OpenTelemetry standard: `service.name` of the spans' }),
  ),
  OTEL_SDK_DISABLED: Type.Boolean({
    group: 'Tracing',
    default: false,
    description: 'OpenTelemetry standard: `true` keeps tracing off even with an endpoint set. The SDK reads the other `OTEL_*` variables itself (sampler, headers, batching)',
  }),
});

/** The validated environment: every variable with a default has its value, the others may be undefined. */
export type ConfigEnv = Static<typeof CONFIG_SCHEMA>;
/** The name of a declared variable. */
export type ConfigVariable = keyof ConfigEnv & string;

/** What the documentation and the error messages read of an entry (TypeBox keeps extra options on the schema). */
export interface ConfigEntry {
  type?: string;
  format?: string;
  default?: unknown;
  defaultText?: string;
  minimum?: number;
  maximum?: number;
  description?: string;
  group?: ConfigGroup;
}

/** The declared variables with their schemas, in declaration order. */
export function configEntries(): [ConfigVariable, ConfigEntry & TSchema][] {
  return Object.entries(CONFIG_SCHEMA.properties) as [ConfigVariable, ConfigEntry & TSchema][];
}
