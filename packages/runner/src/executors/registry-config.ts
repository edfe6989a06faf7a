/**
 * The executor registry file: its shape, and its validation into resolved, ready-to-use settings.
 * Validation collects every problem with its JSON path and throws them all at once
 * ({@link RegistryConfigError}), so a bad registry stops the service at start with one clear message.
 */
import path from 'node:path';
import { BUILTIN_NAMES, isBuiltinName } from './builtin.ts';
import type { BuiltinName } from './builtin.ts';
import { expandVariables } from './expand-variables.ts';
import type { Variables } from './expand-variables.ts';

/**
 * An MCP server spawned as a child process and spoken to over stdin/stdout. All strings support
 * `${VAR}` / `${VAR:-default}` expansion, with `${REGISTRY_DIR}` and `${DATA_DIR}` built in.
 */
export interface StdioServerConfig {
  /** Executable; `node` means the Node.js binary running this service (`process.execPath`). */
  command: string;
  args?: string[];
  /** Added to (and overriding) the environment inherited from this process. */
  env?: Record<string, string>;
  /** Working directory; relative to the registry file's directory, which is also the default. */
  cwd?: string;
}

/** An MCP server reached over Streamable HTTP. Strings support `${VAR}` expansion. */
export interface HttpServerConfig {
  /** An `http:` or `https:` URL, e.g. `http://127.0.0.1:9000/mcp`. */
  url: string;
  /** Sent with every request, e.g. `{ "Authorization": "Bearer ${TOKEN}" }`. */
  headers?: Record<string, string>;
}

/** One entry of `mcpServers`: stdio when it has `command`, Streamable HTTP when it has `url`. */
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** Executor kind `mcp`: calls `tool` of the MCP server named `server`. */
export interface McpExecutorConfig {
  kind: 'mcp';
  /** A key of `mcpServers`. */
  server: string;
  /** The tool name, as the server lists it. */
  tool: string;
  /** Per-call timeout in milliseconds; default {@link DEFAULT_MCP_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** Executor kind `builtin`: an alias of one of the built-ins (tests and benchmarks only). */
export interface BuiltinExecutorConfig {
  kind: 'builtin';
  name: BuiltinName;
}

/** One entry of `executors`. */
export type ExecutorConfig = McpExecutorConfig | BuiltinExecutorConfig;

/** The registry file (JSON). Executor keys are what workflow steps name as `executorKey`. */
export interface RegistryConfig {
  /** Optional; ignored (lets editors attach a JSON schema). */
  $schema?: string;
  mcpServers?: Record<string, McpServerConfig>;
  executors?: Record<string, ExecutorConfig>;
}

/** What every resolved server has, whatever its transport. */
interface ServerTargetBase {
  /**
   * Values that must never appear in what is reported about this server (errors, logs, tool
   * output; see `redact.ts`): every value substituted for a `${VAR}` reference except the built-in
   * paths `${REGISTRY_DIR}` and `${DATA_DIR}` (so also the `${VAR}` parts of `env` entries, but
   * not their literal text, nor the inherited environment), the values of `headers` (and the
   * credentials after a scheme such as `Bearer`), and the
   * URL's user name, password and query parameter values. Unordered, without duplicates.
   */
  secrets: string[];
}

/** A stdio server after expansion: absolute `cwd`, full child environment. */
export interface StdioServerTarget extends ServerTargetBase {
  transport: 'stdio';
  command: string;
  args: string[];
  /** The inherited environment merged with the entry's `env`: exactly what the child gets. */
  env: Record<string, string>;
  cwd: string;
}

/** A Streamable HTTP server after expansion. */
export interface HttpServerTarget extends ServerTargetBase {
  transport: 'http';
  url: URL;
  headers: Record<string, string>;
}

/** How to reach one MCP server. */
export type McpServerTarget = StdioServerTarget | HttpServerTarget;

/** An executor entry after validation; `timeoutMs` is filled in. */
export type ResolvedExecutorConfig = Required<McpExecutorConfig> | BuiltinExecutorConfig;

/** A validated registry: servers by name, and every executor by key, built-ins included. */
export interface ResolvedRegistryConfig {
  servers: Map<string, McpServerTarget>;
  executors: Map<string, ResolvedExecutorConfig>;
}

/** Where a registry comes from, for resolving paths and variables. */
export interface ResolveContext {
  /** Directory relative paths are resolved against: the registry file's directory. */
  baseDir: string;
  /** Environment for `${VAR}` expansion and for stdio children to inherit. */
  env: NodeJS.ProcessEnv;
  /** Names the registry in error messages, e.g. its file path. */
  source: string;
}

/** Default per-call timeout of `mcp` executors, in milliseconds (60 s). */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/** Largest `timeoutMs` accepted (Node's timer limit, about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Registry keys of the built-ins, present in every registry: `builtin.echo`, ... */
export const BUILTIN_KEYS: readonly string[] = BUILTIN_NAMES.map((name) => `builtin.${name}`);

const EXECUTOR_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const RESERVED_PREFIX = 'builtin.';

/** Thrown when a registry is invalid; `problems` holds one `"<json path>: <what is wrong>"` each. */
export class RegistryConfigError extends Error {
  override readonly name = 'RegistryConfigError';
  readonly problems: readonly string[];
  constructor(source: string, problems: readonly string[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`Invalid executor registry ${source} (${count}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/** Variables holding paths the service itself reports: not secrets (see `ServerTargetBase.secrets`). */
const PATH_VARIABLES: ReadonlySet<string> = new Set(['REGISTRY_DIR', 'DATA_DIR']);

/**
 * The variables `${...}` may name: the environment, plus `REGISTRY_DIR` (absolute `baseDir`) and
 * `DATA_DIR` (env `DATA_DIR`, default `./data`, made absolute against `process.cwd()`).
 */
function registryVariables(context: Pick<ResolveContext, 'baseDir' | 'env'>): Variables {
  return {
    ...context.env,
    REGISTRY_DIR: path.resolve(context.baseDir),
    DATA_DIR: path.resolve(context.env['DATA_DIR'] || './data'),
  };
}

/**
 * Validates a parsed registry (`raw` is untrusted JSON) and resolves it: variables expanded, paths
 * made absolute, `node` replaced by `process.execPath`, built-ins added. Spawns and connects nothing.
 * @throws RegistryConfigError listing every problem found.
 */
export function resolveRegistryConfig(raw: unknown, context: ResolveContext): ResolvedRegistryConfig {
  const resolver = new Resolver(context);
  const resolved = resolver.registry(raw);
  if (resolver.problems.length > 0) throw new RegistryConfigError(context.source, resolver.problems);
  return resolved;
}

type JsonObject = Record<string, unknown>;

/** Walks one registry document, collecting problems instead of stopping at the first. */
class Resolver {
  readonly problems: string[] = [];
  private readonly variables: Variables;
  private readonly baseDir: string;
  private readonly inheritedEnv: Record<string, string>;

  constructor(context: ResolveContext) {
    this.variables = registryVariables(context);
    this.baseDir = path.resolve(context.baseDir);
    this.inheritedEnv = definedValues(context.env);
  }

  registry(raw: unknown): ResolvedRegistryConfig {
    const servers = new Map<string, McpServerTarget>();
    const executors = new Map<string, ResolvedExecutorConfig>(
      BUILTIN_NAMES.map((name) => [`${RESERVED_PREFIX}${name}`, { kind: 'builtin', name }]),
    );
    const root = this.object(raw, '$');
    if (root === undefined) return { servers, executors };
    this.knownKeys(root, '$', ['$schema', 'mcpServers', 'executors']);

    const serverEntries = this.entries(root['mcpServers'], '$.mcpServers');
    for (const [name, entry] of serverEntries) {
      const target = this.server(entry, jsonPath('$.mcpServers', name));
      if (target !== undefined) servers.set(name, target);
    }
    const serverNames = serverEntries.map(([name]) => name);
    for (const [key, entry] of this.entries(root['executors'], '$.executors')) {
      const where = jsonPath('$.executors', key);
      this.executorKey(key, where);
      const executor = this.executor(entry, where, serverNames);
      if (executor !== undefined) executors.set(key, executor);
    }
    return { servers, executors };
  }

  private server(raw: unknown, where: string): McpServerTarget | undefined {
    const entry = this.object(raw, where);
    if (entry === undefined) return undefined;
    const isStdio = 'command' in entry;
    const isHttp = 'url' in entry;
    if (isStdio === isHttp) {
      this.problem(where, isStdio
        ? 'set either "command" (stdio server) or "url" (Streamable HTTP server), not both'
        : 'must set "command" (stdio server) or "url" (Streamable HTTP server)');
      return undefined;
    }
    return isStdio ? this.stdioServer(entry, where) : this.httpServer(entry, where);
  }

  private stdioServer(entry: JsonObject, where: string): StdioServerTarget | undefined {
    this.knownKeys(entry, where, ['command', 'args', 'env', 'cwd']);
    const secrets = new Set<string>();
    const command = this.expanded(entry['command'], jsonPath(where, 'command'), secrets);
    const args = this.stringArray(entry['args'], jsonPath(where, 'args'), secrets);
    const env = this.stringRecord(entry['env'], jsonPath(where, 'env'), secrets);
    const cwd = entry['cwd'] === undefined ? this.baseDir : this.expanded(entry['cwd'], jsonPath(where, 'cwd'), secrets);
    if (command === undefined || args === undefined || env === undefined || cwd === undefined) return undefined;
    return {
      transport: 'stdio',
      command: command === 'node' ? process.execPath : command,
      args,
      env: { ...this.inheritedEnv, ...env },
      cwd: path.resolve(this.baseDir, cwd),
      secrets: [...secrets],
    };
  }

  private httpServer(entry: JsonObject, where: string): HttpServerTarget | undefined {
    this.knownKeys(entry, where, ['url', 'headers']);
    const secrets = new Set<string>();
    const text = this.expanded(entry['url'], jsonPath(where, 'url'), secrets);
    const headers = this.stringRecord(entry['headers'], jsonPath(where, 'headers'), secrets);
    const url = text === undefined ? undefined : URL.parse(text);
    const validUrl = url !== null && url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:');
    // The configured text, not the expanded one: the expansion may hold a secret.
    if (text !== undefined && !validUrl) this.problem(jsonPath(where, 'url'), `must be an http: or https: URL, got "${String(entry['url'])}"`);
    if (!validUrl || headers === undefined) return undefined;
    for (const value of Object.values(headers)) addHeaderSecrets(secrets, value);
    addUrlSecrets(secrets, url);
    return { transport: 'http', url, headers, secrets: [...secrets] };
  }

  private executorKey(key: string, where: string): void {
    if (key.startsWith(RESERVED_PREFIX)) {
      this.problem(where, `keys starting with "${RESERVED_PREFIX}" are reserved for the built-ins (${BUILTIN_KEYS.join(', ')})`);
    } else if (!EXECUTOR_KEY.test(key)) {
      this.problem(where, 'key must be 1-128 characters: letters, digits and _ . : - (starting with a letter or digit)');
    }
  }

  private executor(raw: unknown, where: string, serverNames: readonly string[]): ResolvedExecutorConfig | undefined {
    const entry = this.object(raw, where);
    if (entry === undefined) return undefined;
    const kind = this.requiredString(entry, 'kind', where);
    switch (kind) {
      case undefined:
        return undefined;
      case 'mcp':
        return this.mcpExecutor(entry, where, serverNames);
      case 'builtin':
        return this.builtinExecutor(entry, where);
      default:
        this.problem(jsonPath(where, 'kind'), `unknown kind "${kind}" (supported: mcp, builtin)`);
        return undefined;
    }
  }

  private mcpExecutor(entry: JsonObject, where: string, serverNames: readonly string[]): Required<McpExecutorConfig> | undefined {
    this.knownKeys(entry, where, ['kind', 'server', 'tool', 'timeoutMs']);
    const server = this.requiredString(entry, 'server', where);
    const tool = this.requiredString(entry, 'tool', where);
    const timeoutMs = entry['timeoutMs'] ?? DEFAULT_MCP_TIMEOUT_MS;
    const knownServer = server !== undefined && serverNames.includes(server);
    if (server !== undefined && !knownServer) {
      const known = serverNames.length > 0 ? `configured: ${serverNames.join(', ')}` : 'no mcpServers are configured';
      this.problem(jsonPath(where, 'server'), `unknown MCP server "${server}" (${known})`);
    }
    const validTimeout = typeof timeoutMs === 'number' && Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS;
    if (!validTimeout) {
      this.problem(jsonPath(where, 'timeoutMs'), `must be an integer number of milliseconds in 1..${MAX_TIMEOUT_MS}, got ${JSON.stringify(timeoutMs)}`);
    }
    if (!knownServer || tool === undefined || !validTimeout) return undefined;
    return { kind: 'mcp', server, tool, timeoutMs };
  }

  private builtinExecutor(entry: JsonObject, where: string): BuiltinExecutorConfig | undefined {
    this.knownKeys(entry, where, ['kind', 'name']);
    const name = this.requiredString(entry, 'name', where);
    if (name === undefined) return undefined;
    if (!isBuiltinName(name)) {
      this.problem(jsonPath(where, 'name'), `unknown builtin "${name}" (one of: ${BUILTIN_NAMES.join(', ')})`);
      return undefined;
    }
    return { kind: 'builtin', name };
  }

  /** `entry[key]` as a non-empty string; a problem when missing, not a string, or empty. */
  private requiredString(entry: JsonObject, key: string, where: string): string | undefined {
    const value = entry[key];
    const at = jsonPath(where, key);
    if (value === undefined) this.problem(at, 'is required');
    else if (typeof value !== 'string') this.problem(at, `must be a string, got ${describe(value)}`);
    else if (value === '') this.problem(at, 'must not be empty');
    else return value;
    return undefined;
  }

  /**
   * A string with `${...}` references expanded; a problem when not a string or not expandable.
   * The substituted values, except {@link PATH_VARIABLES}, are added to `secrets`.
   */
  private expanded(value: unknown, where: string, secrets: Set<string>): string | undefined {
    if (typeof value !== 'string') {
      this.problem(where, `must be a string, got ${describe(value)}`);
      return undefined;
    }
    const expansion = expandVariables(value, this.variables);
    if (!expansion.ok) {
      for (const problem of expansion.problems) this.problem(where, problem);
      return undefined;
    }
    for (const { name, value: substituted } of expansion.substitutions) {
      if (!PATH_VARIABLES.has(name)) secrets.add(substituted);
    }
    return expansion.value;
  }

  /** Optional array of strings, each expanded; `[]` when absent. */
  private stringArray(value: unknown, where: string, secrets: Set<string>): string[] | undefined {
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.problem(where, `must be an array of strings, got ${describe(value)}`);
      return undefined;
    }
    const items = value.map((item, index) => this.expanded(item, jsonPath(where, index), secrets));
    return items.every(isDefined) ? items : undefined;
  }

  /** Optional object of strings, each value expanded; `{}` when absent. */
  private stringRecord(value: unknown, where: string, secrets: Set<string>): Record<string, string> | undefined {
    if (value === undefined) return {};
    const object = this.object(value, where);
    if (object === undefined) return undefined;
    const entries = Object.entries(object).map(([key, item]): [string, string | undefined] => [key, this.expanded(item, jsonPath(where, key), secrets)]);
    return entries.every(hasDefinedValue) ? Object.fromEntries(entries) : undefined;
  }

  /** Entries of an optional object; `[]` (plus a problem unless absent) when not an object. */
  private entries(value: unknown, where: string): [string, unknown][] {
    if (value === undefined) return [];
    const object = this.object(value, where);
    return object === undefined ? [] : Object.entries(object);
  }

  private object(value: unknown, where: string): JsonObject | undefined {
    if (isObject(value)) return value;
    this.problem(where, `must be an object, got ${describe(value)}`);
    return undefined;
  }

  private knownKeys(entry: JsonObject, where: string, allowed: readonly string[]): void {
    for (const key of Object.keys(entry)) {
      if (!allowed.includes(key)) this.problem(jsonPath(where, key), `unknown property (allowed: ${allowed.join(', ')})`);
    }
  }

  private problem(where: string, message: string): void {
    this.problems.push(`${where}: ${message}`);
  }
}

/** Adds a header value and, for `<scheme> <credentials>` (e.g. `Bearer abc`), the credentials alone. */
function addHeaderSecrets(secrets: Set<string>, value: string): void {
  secrets.add(value);
  const credentials = /^\S+\s+(\S.*)$/s.exec(value)?.[1];
  if (credentials !== undefined) secrets.add(credentials);
}

/** Adds the user name, password (as written and decoded) and query parameter values of `url`. */
function addUrlSecrets(secrets: Set<string>, url: URL): void {
  for (const part of [url.username, url.password].filter((text) => text !== '')) {
    secrets.add(part);
    secrets.add(decodeComponent(part));
  }
  for (const value of url.searchParams.values()) if (value !== '') secrets.add(value);
}

/** `text` percent-decoded, or as is when it is not valid percent-encoding. */
function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/** `parent.key`, `parent["odd key"]` or `parent[3]`. */
function jsonPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

function isDefined<T>(value: T | undefined): value is T {
  return value !== undefined;
}

function hasDefinedValue<T>(entry: [string, T | undefined]): entry is [string, T] {
  return entry[1] !== undefined;
}

function definedValues(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(hasDefinedValue));
}
