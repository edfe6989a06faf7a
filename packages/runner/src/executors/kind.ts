/**
 * The contract of one executor kind (`builtin`, `mcp`, `http`, ...): the TypeBox schema of its
 * registry entries, how a valid entry is resolved (variables expanded, references checked), the
 * registry section of connection settings it may own (`mcpServers`), the entries every registry
 * holds (the `builtin.*` keys), and a factory that builds its executors on resources the kind
 * shares within one registry (an MCP connection pool, an HTTP agent) and describes them for the
 * catalogue. The table of kinds is `kinds.ts`; adding a kind is one module exporting an
 * {@link ExecutorKind} and one line there. A kind imports this module, `types.ts` and `shared/*`,
 * never another kind nor the registry (`no-import-cycles.test.ts` keeps the graph acyclic).
 */
import { STEP_TIMEOUT_SECONDS_RANGE } from '@switchyard/domain';
import Type, { type Static, type TObject, type TProperties, type TSchema } from 'typebox';
import type { ExecutorLogger } from './shared/logger.ts';
import type { Resolver } from './shared/target-policy.ts';
import type { Executor, ExecutorDetails } from './types.ts';

/** Default per-call limit of every executor whose entry sets none (60 s). */
export const DEFAULT_TIMEOUT_SECONDS = 60;

/**
 * Longest wait of a kind's `describe` for what it asks (an MCP server's tool list, connect
 * included; an A2A agent's card), milliseconds.
 */
export const DESCRIBE_TIMEOUT_MS = 10_000;

/** `timeoutSeconds` of any registry entry: its default per-call limit (bounds as `stepConfig.timeoutSeconds`: 1 s to a day). */
export const TimeoutSeconds = Type.Number({
  ...STEP_TIMEOUT_SECONDS_RANGE,
  unit: 'seconds',
  description: `Default limit of one call, seconds (default ${DEFAULT_TIMEOUT_SECONDS}); a step's stepConfig.timeoutSeconds overrides it`,
});

/** `description` of any registry entry: what the catalogue (`GET /api/v1/executors`) shows for the key. */
export const EntryDescription = Type.String({ maxLength: 2000, description: 'Shown by GET /api/v1/executors; default: generated from the entry' });

/**
 * The schema of one `executors` entry of `kind`: `{ "kind": "<kind>", ...properties, "description"?, "timeoutSeconds"? }`,
 * no other keys.
 */
export function entrySchema<K extends string, P extends TProperties>(kind: K, properties: P) {
  return Type.Object(
    { kind: Type.Literal(kind), ...properties, description: Type.Optional(EntryDescription), timeoutSeconds: Type.Optional(TimeoutSeconds) },
    { additionalProperties: false },
  );
}

/** Where a URL may start before expansion: `http://`, `https://` (any case), or a `${VAR}` holding the whole URL. */
const URL_PATTERN = '^(?:[Hh][Tt][Tt][Pp][Ss]?://|\\$\\{)';

/** A URL field: `http:` or `https:`, `${VAR}` expansion allowed (checked again after expansion, see {@link EntryScope.url}). */
export function urlSchema(description: string) {
  return Type.String({ pattern: URL_PATTERN, problem: 'must be an http: or https: URL', description });
}

/** Header values by name; values support `${VAR}` expansion and are treated as secrets. */
export const HeadersSchema = Type.Record(Type.String(), Type.String(), {
  description: 'Sent with every request; values expand ${VAR} and are treated as secrets',
});

/** A field of an entry: `"url"` or a path below it, `["headers", "Authorization"]`. */
export type EntryField = string | readonly (string | number)[];

/**
 * What resolving one valid entry may use. Problems are collected (not thrown), each with the JSON
 * path of the entry and field, so that a registry reports everything wrong with it at once.
 */
export interface EntryScope {
  /** JSON path of the entry, e.g. `$.executors.hook`. */
  readonly where: string;
  /**
   * Every name in the connection section of the entry's kind ({@link ExecutorKind.connections},
   * e.g. `mcpServers`), valid or not (so a bad server is not also reported as unknown); empty for
   * kinds without one, and while resolving a section's own entries.
   */
  readonly connectionNames: readonly string[];
  /** The registry file's directory, absolute: what relative paths of an entry refer to. */
  readonly baseDir: string;
  /** The environment with its defined values only: what a spawned child inherits. */
  readonly env: Readonly<Record<string, string>>;
  /** True when `value` (the entry, or its `field`) matches `schema`; else its problems are reported. */
  check(schema: TSchema, value: unknown, field?: EntryField): boolean;
  /** Reports a problem at `field` of the entry (the entry itself when undefined). */
  problem(field: EntryField | undefined, message: string): void;
  /**
   * `text` with `${VAR}` / `${VAR:-default}` expanded; undefined (and a problem) when a variable is
   * unset or a reference malformed. Every substituted value (except the built-in paths
   * `${REGISTRY_DIR}` and `${DATA_DIR}`) is added to `secrets`.
   */
  expand(text: string, field: EntryField, secrets: Set<string>): string | undefined;
  /** {@link expand}, then parsed as an `http:`/`https:` URL whose credentials and query values are added to `secrets`. */
  url(text: string, field: EntryField, secrets: Set<string>): URL | undefined;
  /** Header values expanded; each value (and the credentials after a scheme such as `Bearer`) is added to `secrets`. */
  headers(headers: Readonly<Record<string, string>> | undefined, field: EntryField, secrets: Set<string>): Record<string, string> | undefined;
}

/** What every resolved entry holds, whatever its kind. */
export interface ResolvedCommon {
  kind: string;
  /** Default limit of one call, milliseconds (see {@link ExecutorKind.timeoutMs}). */
  timeoutMs: number;
  /** The entry's `description`, when its kind's `resolve` kept it. */
  description?: string;
}

/**
 * A section of the registry file that one kind owns besides its `executors` entries: named
 * connection settings its entries refer to (`mcpServers`: the MCP servers `mcp` entries name).
 * `N` is the section's key, `E` the schema of one of its entries, `C` what an entry resolves to.
 */
export interface ConnectionSection<C = unknown, N extends string = string, E extends TSchema = TSchema> {
  /** The key of the section in the registry file, e.g. `mcpServers`. */
  readonly name: N;
  /** Schema of one entry: the registry file's type (`RegistryConfig`) is derived from it. */
  readonly schema: E;
  /**
   * Checks (`scope.check`) and resolves one entry of the section, an object of untrusted JSON;
   * undefined after reporting problems on `scope`. Pure: spawns and connects nothing.
   */
  resolve(entry: Readonly<Record<string, unknown>>, scope: EntryScope): C | undefined;
}

/** What a kind's executors may share within one registry. `C`: what its connection section's entries resolve to. */
export interface KindContext<C = unknown> {
  /** The kind's connection section, resolved, by name (e.g. the MCP servers); empty for kinds without one. */
  connections: ReadonlyMap<string, C>;
  /** The registry's logger (not redacting: each kind redacts its own secrets). */
  logger: ExecutorLogger;
  /** How executors that check their targets resolve hostnames (`target-policy.ts`); default `dns.lookup`. Tests inject one. */
  resolver?: Resolver;
  /**
   * The output limit, bytes of JSON (`SWITCHYARD_MAX_OUTPUT_BYTES`): answers are read up to
   * `answerReadLimit(maxOutputBytes)` only (`answer-limit.ts`).
   */
  maxOutputBytes: number;
  /** Most sockets an HTTP agent of the kind opens to one origin (the per-target call cap). */
  connectionsPerOrigin: number;
}

/** The executors of one kind within one registry, and what they share. */
export interface KindFactory<R> {
  /** Builds executor `key`; connects nothing. */
  create(key: string, entry: R & ResolvedCommon): Executor;
  /**
   * What executor `key` is, for the catalogue; must not reject (an unreachable dependency gives
   * `available: false` and a redacted `error`). May connect (MCP lists its server's tools).
   */
  describe(key: string, entry: R & ResolvedCommon): Promise<ExecutorDetails>;
  /** Releases what the kind's executors share (connections, sockets, child processes). Idempotent. */
  close(): Promise<void>;
}

/**
 * Entries every registry holds without configuring them (the `builtin.*` keys): their keys start
 * with `prefix`, which keys in the file may not use.
 */
export interface KindPresets<R> {
  /** What keys of the file may not start with, e.g. `builtin.`. */
  readonly prefix: string;
  /** Names the presets in the problem a reserved key gets, e.g. `the built-ins`. */
  readonly label: string;
  /** The preset entries, resolved, by key (each key starts with `prefix`). Their call limit is {@link DEFAULT_TIMEOUT_SECONDS}. */
  readonly entries: ReadonlyArray<readonly [key: string, entry: R]>;
}

/**
 * One executor kind: see the module comment. `S` is the entry schema, `R` what an entry resolves
 * to, `C` what an entry of its connection section resolves to (when it has one).
 */
export interface ExecutorKind<S extends TObject = TObject, R extends object = object, C = unknown> {
  /** The `kind` value of its entries. */
  readonly kind: string;
  /** Schema of one entry, `kind` and `timeoutSeconds` included (see {@link entrySchema}). */
  readonly schema: S;
  /**
   * May a step's `a2aPool` list executors of this kind? The spec wants A2A agents there: true on
   * `a2a`, and on `builtin` (tests and demos fail over between built-ins); false on `mcp` and
   * `http`, whose keys in a pool make the definition invalid (400 at save).
   */
  readonly a2aPool: boolean;
  /**
   * Checks what the schema cannot (references, expansions) and resolves a schema-valid entry;
   * undefined after reporting problems on `scope`. Pure: spawns and connects nothing.
   */
  resolve(entry: Static<S>, scope: EntryScope): R | undefined;
  /**
   * The entry's own default call limit in milliseconds when it sets no `timeoutSeconds` (e.g. the
   * `timeoutMs` `mcp` entries had first); undefined: {@link DEFAULT_TIMEOUT_SECONDS}.
   */
  timeoutMs?(entry: Static<S>): number | undefined;
  /** The section of connection settings this kind owns, if any (see {@link ConnectionSection}). */
  readonly connections?: ConnectionSection<C>;
  /** Entries of this kind every registry holds, if any (see {@link KindPresets}). */
  readonly presets?: KindPresets<R>;
  /** The factory of this kind's executors for one registry. Must not connect or spawn anything yet. */
  open(context: KindContext<C>): KindFactory<R>;
}

/**
 * Type helper: checks a kind against its own schema and resolved types, and keeps the type of its
 * connection section (`Sec`, undefined when it has none) for the registry file's type.
 */
export function defineKind<S extends TObject, R extends object, C = never, Sec extends ConnectionSection<C> | undefined = undefined>(
  kind: ExecutorKind<S, R, C> & { readonly connections?: Sec },
): ExecutorKind<S, R, C> & { readonly connections: Sec } {
  return kind as ExecutorKind<S, R, C> & { readonly connections: Sec };
}
