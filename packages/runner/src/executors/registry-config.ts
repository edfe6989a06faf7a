/**
 * The executor registry file: its shape (TypeBox schemas: the file's own here, each kind's entry
 * schema in its module, see `kinds.ts`), and its validation into resolved, ready-to-use settings.
 * Validation collects every problem with its JSON path and throws them all at once
 * ({@link RegistryConfigError}), so a bad registry stops the service at start with one clear message.
 *
 * Order of work: the file's outline (sections are objects of objects), then each MCP server and
 * each executor entry in turn: its schema (an executor's is its kind's, from the table), then —
 * when it passed — what a schema cannot check: `${VAR}` / `${env:NAME}` expansion, URLs after expansion,
 * references to `mcpServers`.
 */
import path from 'node:path';
import Type, { type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { BUILTIN_NAMES } from './builtin/builtin.ts';
import type { BuiltinEntry } from './builtin/builtin.ts';
import { expandVariables } from './expand-variables.ts';
import type { Variables } from './expand-variables.ts';
import type { A2aEntry } from './a2a/a2a.ts';
import type { HttpEntry } from './http/http.ts';
import { DEFAULT_TIMEOUT_SECONDS, HeadersSchema, urlSchema } from './kind.ts';
import type { EntryField, EntryScope, ResolvedCommon } from './kind.ts';
import { EXECUTOR_KINDS, findKind } from './kinds.ts';
import type { McpEntry } from './mcp/mcp.ts';
import { describe, jsonPath, schemaProblems } from './schema-problems.ts';

/**
 * An MCP server spawned as a child process and spoken to over stdin/stdout. All strings support
 * `${env:NAME}` / `${VAR}` / `${VAR:-default}` expansion, with `${REGISTRY_DIR}` and `${DATA_DIR}` built in.
 */
export const StdioServerEntry = Type.Object(
  {
    command: Type.String({ minLength: 1, description: 'Executable; `node` means the Node.js binary running this service' }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Added to (and overriding) the environment inherited from this process' })),
    cwd: Type.Optional(Type.String({ description: "Working directory; relative to the registry file's directory, which is also the default" })),
  },
  { additionalProperties: false },
);
export type StdioServerConfig = Static<typeof StdioServerEntry>;

/** An MCP server reached over Streamable HTTP. Strings support `${VAR}` expansion. */
export const HttpServerEntry = Type.Object(
  { url: urlSchema('e.g. http://127.0.0.1:9000/mcp'), headers: Type.Optional(HeadersSchema) },
  { additionalProperties: false },
);
export type HttpServerConfig = Static<typeof HttpServerEntry>;

/** One entry of `mcpServers`: stdio when it has `command`, Streamable HTTP when it has `url`. */
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** The outline of the file: sections are objects whose entries are objects (each checked on its own). */
const RegistryOutline = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: 'Ignored (lets editors attach a JSON schema)' })),
    mcpServers: Type.Optional(Type.Record(Type.String(), Type.Object({}))),
    executors: Type.Optional(Type.Record(Type.String(), Type.Object({}))),
  },
  { additionalProperties: false },
);

/** Executor kind `mcp` (see `mcp.ts`). */
export type McpExecutorConfig = Static<typeof McpEntry>;
/** Executor kind `builtin` (see `builtin.ts`). */
export type BuiltinExecutorConfig = Static<typeof BuiltinEntry>;
/** Executor kind `http` (see `http.ts`). */
export type HttpExecutorConfig = Static<typeof HttpEntry>;
/** Executor kind `a2a` (see `a2a.ts`). */
export type A2aExecutorConfig = Static<typeof A2aEntry>;
/** One entry of `executors`. */
export type ExecutorConfig = McpExecutorConfig | BuiltinExecutorConfig | HttpExecutorConfig | A2aExecutorConfig;

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
   * output; see `redact.ts`): every value substituted for a `${VAR}` or `${env:NAME}` reference except the built-in
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

/**
 * An executor entry after validation: its kind, its default call limit in milliseconds, and what
 * its kind resolved it to (e.g. `server` and `tool` for `mcp`; see each kind's module).
 */
export type ResolvedExecutorConfig = ResolvedCommon & Record<string, unknown>;

/** A validated registry: servers by name, and every executor by key, built-ins included. */
export interface ResolvedRegistryConfig {
  servers: Map<string, McpServerTarget>;
  executors: Map<string, ResolvedExecutorConfig>;
}

/** Where a registry comes from, for resolving paths and variables. */
export interface ResolveContext {
  /** Directory relative paths are resolved against: the registry file's directory. */
  baseDir: string;
  /** Environment for `${VAR}` / `${env:NAME}` expansion and for stdio children to inherit. */
  env: NodeJS.ProcessEnv;
  /** Names the registry in error messages, e.g. its file path. */
  source: string;
}

/** Default per-call limit of `mcp` executors, in milliseconds (60 s): {@link DEFAULT_TIMEOUT_SECONDS}, as for every kind. */
export const DEFAULT_MCP_TIMEOUT_MS = DEFAULT_TIMEOUT_SECONDS * 1000;

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

/**
 * Variables holding paths the service itself reports: not secrets (see `ServerTargetBase.secrets`).
 * Only as `${REGISTRY_DIR}` / `${DATA_DIR}`: a substitution for `${env:DATA_DIR}` is named
 * `env:DATA_DIR` (see `expandVariables`), so it is a secret like every `${env:NAME}`.
 */
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
  /** What `${env:NAME}` names: the environment alone, without the built-in paths. */
  private readonly environment: Variables;
  private readonly baseDir: string;
  private readonly inheritedEnv: Record<string, string>;

  constructor(context: ResolveContext) {
    this.variables = registryVariables(context);
    this.environment = context.env;
    this.baseDir = path.resolve(context.baseDir);
    this.inheritedEnv = definedValues(context.env);
  }

  registry(raw: unknown): ResolvedRegistryConfig {
    const servers = new Map<string, McpServerTarget>();
    const builtinTimeoutMs = DEFAULT_TIMEOUT_SECONDS * 1000;
    const executors = new Map<string, ResolvedExecutorConfig>(
      BUILTIN_NAMES.map((name) => [`${RESERVED_PREFIX}${name}`, { kind: 'builtin', name, timeoutMs: builtinTimeoutMs }]),
    );
    this.problems.push(...schemaProblems(RegistryOutline, raw, '$'));
    if (!isObject(raw)) return { servers, executors };

    const serverEntries = objectEntries(raw['mcpServers']);
    for (const [name, entry] of serverEntries) {
      const target = this.server(entry, jsonPath('$.mcpServers', name));
      if (target !== undefined) servers.set(name, target);
    }
    const serverNames = isObject(raw['mcpServers']) ? Object.keys(raw['mcpServers']) : [];
    for (const [key, entry] of objectEntries(raw['executors'])) {
      const where = jsonPath('$.executors', key);
      this.executorKey(key, where);
      const executor = this.executor(entry, where, serverNames);
      if (executor !== undefined) executors.set(key, executor);
    }
    return { servers, executors };
  }

  private server(entry: JsonObject, where: string): McpServerTarget | undefined {
    const isStdio = 'command' in entry;
    const isHttp = 'url' in entry;
    if (isStdio === isHttp) {
      this.problem(where, isStdio
        ? 'set either "command" (stdio server) or "url" (Streamable HTTP server), not both'
        : 'must set "command" (stdio server) or "url" (Streamable HTTP server)');
      return undefined;
    }
    const schema = isStdio ? StdioServerEntry : HttpServerEntry;
    if (!this.valid(schema, entry, where)) return undefined;
    const scope = this.scope(where, []);
    return isStdio ? this.stdioServer(entry as StdioServerConfig, scope) : this.httpServer(entry as HttpServerConfig, scope);
  }

  private stdioServer(entry: StdioServerConfig, scope: EntryScope): StdioServerTarget | undefined {
    const secrets = new Set<string>();
    const command = scope.expand(entry.command, 'command', secrets);
    const args = (entry.args ?? []).map((arg, index) => scope.expand(arg, ['args', index], secrets));
    const env = Object.entries(entry.env ?? {}).map(([name, value]): [string, string | undefined] => [name, scope.expand(value, ['env', name], secrets)]);
    const cwd = entry.cwd === undefined ? this.baseDir : scope.expand(entry.cwd, 'cwd', secrets);
    if (command === undefined || !args.every(isDefined) || !env.every(hasDefinedValue) || cwd === undefined) return undefined;
    return {
      transport: 'stdio',
      command: command === 'node' ? process.execPath : command,
      args,
      env: { ...this.inheritedEnv, ...Object.fromEntries(env) },
      cwd: path.resolve(this.baseDir, cwd),
      secrets: [...secrets],
    };
  }

  private httpServer(entry: HttpServerConfig, scope: EntryScope): HttpServerTarget | undefined {
    const secrets = new Set<string>();
    const url = scope.url(entry.url, 'url', secrets);
    const headers = scope.headers(entry.headers, 'headers', secrets);
    if (url === undefined || headers === undefined) return undefined;
    return { transport: 'http', url, headers, secrets: [...secrets] };
  }

  private executorKey(key: string, where: string): void {
    if (key.startsWith(RESERVED_PREFIX)) {
      this.problem(where, `keys starting with "${RESERVED_PREFIX}" are reserved for the built-ins (${BUILTIN_KEYS.join(', ')})`);
    } else if (!EXECUTOR_KEY.test(key)) {
      this.problem(where, 'key must be 1-128 characters: letters, digits and _ . : - (starting with a letter or digit)');
    }
  }

  /** One `executors` entry: its kind from the table, its schema, then the kind's own resolution. */
  private executor(entry: JsonObject, where: string, serverNames: readonly string[]): ResolvedExecutorConfig | undefined {
    const kindName = entry['kind'];
    const supported = EXECUTOR_KINDS.map((kind) => kind.kind).join(', ');
    if (kindName === undefined) {
      this.problem(jsonPath(where, 'kind'), `is required (one of: ${supported})`);
      return undefined;
    }
    const kind = findKind(kindName);
    if (kind === undefined) {
      this.problem(jsonPath(where, 'kind'), `unknown kind ${typeof kindName === 'string' ? JSON.stringify(kindName) : describe(kindName)} (supported: ${supported})`);
      return undefined;
    }
    if (!this.valid(kind.schema, entry, where)) return undefined;
    const resolved = kind.resolve(entry, this.scope(where, serverNames));
    if (resolved === undefined) return undefined;
    const timeoutSeconds = entry['timeoutSeconds'];
    const timeoutMs = typeof timeoutSeconds === 'number' ? Math.round(timeoutSeconds * 1000) : kind.timeoutMs?.(entry);
    return { kind: kind.kind, ...resolved, timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_SECONDS * 1000 };
  }

  /** True when `value` matches `schema`; else its problems are recorded. */
  private valid(schema: TSchema, value: unknown, where: string): boolean {
    if (Value.Check(schema, value)) return true;
    this.problems.push(...schemaProblems(schema, value, where));
    return false;
  }

  /** The {@link EntryScope} of the entry at `where`. */
  private scope(where: string, serverNames: readonly string[]): EntryScope {
    const at = (field: EntryField | undefined): string =>
      field === undefined ? where : (typeof field === 'string' ? [field] : field).reduce<string>((parent, key) => jsonPath(parent, key), where);
    const scope: EntryScope = {
      where,
      serverNames,
      problem: (field, message) => this.problem(at(field), message),
      expand: (text, field, secrets) => {
        const expansion = expandVariables(text, this.variables, this.environment);
        if (!expansion.ok) {
          for (const problem of expansion.problems) this.problem(at(field), problem);
          return undefined;
        }
        // `${env:NAME}` is always a secret (even `${env:DATA_DIR}`); `${NAME}` unless a built-in path.
        for (const { name, value } of expansion.substitutions) {
          if (!PATH_VARIABLES.has(name)) secrets.add(value);
        }
        return expansion.value;
      },
      url: (text, field, secrets) => {
        const expanded = scope.expand(text, field, secrets);
        if (expanded === undefined) return undefined;
        const url = URL.parse(expanded);
        if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
          // The configured text, not the expanded one: the expansion may hold a secret.
          this.problem(at(field), `must be an http: or https: URL, got ${JSON.stringify(text)} (after expansion)`);
          return undefined;
        }
        addUrlSecrets(secrets, url);
        return url;
      },
      headers: (headers, field, secrets) => {
        const base = typeof field === 'string' ? [field] : field;
        const entries = Object.entries(headers ?? {}).map(([name, value]): [string, string | undefined] => [name, scope.expand(value, [...base, name], secrets)]);
        if (!entries.every(hasDefinedValue)) return undefined;
        for (const [, value] of entries) addHeaderSecrets(secrets, value);
        return Object.fromEntries(entries);
      },
    };
    return scope;
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

/** The entries of a section whose values are objects (the outline check reported the others). */
function objectEntries(section: unknown): [string, JsonObject][] {
  if (!isObject(section)) return [];
  return Object.entries(section).filter((entry): entry is [string, JsonObject] => isObject(entry[1]));
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
