/**
 * The executor registry file: its shape, derived from the table of kinds (`kinds.ts`: each kind's
 * entry schema and connection section, e.g. `mcpServers`, live in its module), and its validation
 * into resolved, ready-to-use settings.
 * Validation collects every problem with its JSON path and throws them all at once
 * ({@link RegistryConfigError}), so a bad registry stops the service at start with one clear message.
 *
 * Order of work: the file's outline (sections are objects of objects), then each entry of each
 * kind's connection section (the kind checks and resolves it), then each executor entry in turn:
 * its schema (its kind's, from the table), then — when it passed — what a schema cannot check:
 * `${VAR}` / `${env:NAME}` expansion, URLs after expansion, references to `mcpServers`.
 */
import path from 'node:path';
import Type, { type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { expandVariables } from './expand-variables.ts';
import type { Variables } from './expand-variables.ts';
import { DEFAULT_TIMEOUT_SECONDS } from './kind.ts';
import type { EntryField, EntryScope, ResolvedCommon } from './kind.ts';
import { EXECUTOR_KINDS, findKind, type KindTable } from './kinds.ts';
import { describe, jsonPath, schemaProblems } from './schema-problems.ts';
import { hasDefinedValue } from './shared/defined.ts';

/** The kinds of the table, each with its own types (schema, connection section). */
type TableKind = KindTable[number];

/** The entry type of kind `K`: what its schema accepts. */
type EntryOf<K> = K extends { readonly schema: infer S extends TSchema } ? Static<S> : never;

/** `{ <section>?: Record<string, entry> }` for a kind with a connection section; never (nothing to add) for the others. */
type SectionOf<K> = K extends { readonly connections: { readonly name: infer N extends string; readonly schema: infer E extends TSchema } }
  ? { [P in N]?: Record<string, Static<E>> }
  : never;

/** `A & B & ...` of a union `A | B | ...`. */
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** One entry of `executors`: an entry of any kind of the table (see `kinds.ts`). */
export type ExecutorConfig = EntryOf<TableKind>;

/**
 * The registry file (JSON): `$schema`, the connection sections kinds own (`mcpServers`), and
 * `executors`, whose keys are what workflow steps name as `executorKey`.
 */
export type RegistryConfig = {
  /** Optional; ignored (lets editors attach a JSON schema). */
  $schema?: string;
  executors?: Record<string, ExecutorConfig>;
} & Intersection<SectionOf<TableKind>>;

/** An object whose values are objects: the outline of a section (each entry is checked on its own). */
const Section = Type.Optional(Type.Record(Type.String(), Type.Object({})));

/** The outline of the file: `$schema`, each kind's connection section, `executors`; no other keys. */
const RegistryOutline = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: 'Ignored (lets editors attach a JSON schema)' })),
    ...Object.fromEntries(EXECUTOR_KINDS.flatMap((kind) => (kind.connections === undefined ? [] : [[kind.connections.name, Section]]))),
    executors: Section,
  },
  { additionalProperties: false },
);

/**
 * An executor entry after validation: its kind, its default call limit in milliseconds, and what
 * its kind resolved it to (e.g. `server` and `tool` for `mcp`; see each kind's module).
 */
export type ResolvedExecutorConfig = ResolvedCommon & Record<string, unknown>;

/** A validated registry: each kind's resolved connection section by kind name, and every executor by key, presets included. */
export interface ResolvedRegistryConfig {
  /** By kind name, then by entry name (e.g. `mcp` → the MCP servers); an empty map for kinds without a section. */
  connections: Map<string, Map<string, unknown>>;
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

const EXECUTOR_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

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
 * Variables holding paths the service itself reports: not secrets (see `McpServerTarget` secrets).
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
 * made absolute, `node` replaced by `process.execPath`, each kind's presets (the built-ins) added.
 * Spawns and connects nothing.
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
  /** The registry's directory, absolute. */
  private readonly baseDir: string;
  /** The environment's defined values: what stdio children inherit. */
  private readonly inheritedEnv: Record<string, string>;

  constructor(context: ResolveContext) {
    this.variables = registryVariables(context);
    this.environment = context.env;
    this.baseDir = path.resolve(context.baseDir);
    this.inheritedEnv = definedValues(context.env);
  }

  registry(raw: unknown): ResolvedRegistryConfig {
    const connections = new Map(EXECUTOR_KINDS.map((kind) => [kind.kind, new Map<string, unknown>()]));
    const defaultTimeoutMs = DEFAULT_TIMEOUT_SECONDS * 1000;
    const executors = new Map<string, ResolvedExecutorConfig>(
      EXECUTOR_KINDS.flatMap((kind) => (kind.presets?.entries ?? []).map(([key, entry]): [string, ResolvedExecutorConfig] => [key, { kind: kind.kind, ...entry, timeoutMs: defaultTimeoutMs }])),
    );
    this.problems.push(...schemaProblems(RegistryOutline, raw, '$'));
    if (!isObject(raw)) return { connections, executors };

    // Each kind's connection section first: its names are what the kind's entries may refer to.
    const connectionNames = new Map<string, readonly string[]>();
    for (const kind of EXECUTOR_KINDS) {
      if (kind.connections === undefined) continue;
      const section = raw[kind.connections.name];
      for (const [name, entry] of objectEntries(section)) {
        const resolved = kind.connections.resolve(entry, this.scope(jsonPath(jsonPath('$', kind.connections.name), name), []));
        if (resolved !== undefined) connections.get(kind.kind)!.set(name, resolved);
      }
      connectionNames.set(kind.kind, isObject(section) ? Object.keys(section) : []);
    }
    for (const [key, entry] of objectEntries(raw['executors'])) {
      const where = jsonPath('$.executors', key);
      this.executorKey(key, where);
      const executor = this.executor(entry, where, connectionNames);
      if (executor !== undefined) executors.set(key, executor);
    }
    return { connections, executors };
  }

  private executorKey(key: string, where: string): void {
    const presets = EXECUTOR_KINDS.map((kind) => kind.presets).find((presets) => presets !== undefined && key.startsWith(presets.prefix));
    if (presets !== undefined) {
      this.problem(where, `keys starting with "${presets.prefix}" are reserved for ${presets.label} (${presets.entries.map(([presetKey]) => presetKey).join(', ')})`);
    } else if (!EXECUTOR_KEY.test(key)) {
      this.problem(where, 'key must be 1-128 characters: letters, digits and _ . : - (starting with a letter or digit)');
    }
  }

  /** One `executors` entry: its kind from the table, its schema, then the kind's own resolution. */
  private executor(entry: JsonObject, where: string, connectionNames: ReadonlyMap<string, readonly string[]>): ResolvedExecutorConfig | undefined {
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
    const resolved = kind.resolve(entry, this.scope(where, connectionNames.get(kind.kind) ?? []));
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

  /** The {@link EntryScope} of the entry at `where`; `connectionNames`: see {@link EntryScope.connectionNames}. */
  private scope(where: string, connectionNames: readonly string[]): EntryScope {
    const at = (field: EntryField | undefined): string =>
      field === undefined ? where : (typeof field === 'string' ? [field] : field).reduce<string>((parent, key) => jsonPath(parent, key), where);
    const scope: EntryScope = {
      where,
      connectionNames,
      baseDir: this.baseDir,
      env: this.inheritedEnv,
      problem: (field, message) => this.problem(at(field), message),
      check: (schema, value, field) => this.valid(schema, value, at(field)),
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

function definedValues(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(hasDefinedValue));
}
