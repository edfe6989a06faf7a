/**
 * The executor registry: loads and validates the registry file, then maps executor keys to
 * executors, each built by the factory of its kind (see `kinds.ts`). Loading spawns and connects
 * nothing; MCP servers are connected, and the HTTP agent created, on first use.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../output-limit.ts';
import { CallLimiter } from './shared/call-limiter.ts';
import { errorMessage } from './shared/error-message.ts';
import { EXECUTOR_KINDS } from './kinds.ts';
import { silentLogger } from './shared/logger.ts';
import type { ExecutorLogger } from './shared/logger.ts';
import { RegistryConfigError, resolveRegistryConfig } from './registry-config.ts';
import type { RegistryConfig } from './registry-config.ts';
import type { Resolver } from './shared/target-policy.ts';
import { ExecutorError } from './types.ts';
import type { Executor, ExecutorDescription, ExecutorDetails, ExecutorRegistry } from './types.ts';

/** The example registry (`examples/executors.json` of the repository), used when none is named. */
export const DEFAULT_REGISTRY_FILE = fileURLToPath(new URL('../../../../examples/executors.json', import.meta.url));

/** Environment variable naming the registry file. */
export const REGISTRY_FILE_ENV = 'SWITCHYARD_EXECUTORS';

/** Options shared by {@link loadExecutorRegistry} and {@link createExecutorRegistry}. */
export interface RegistryOptions {
  /**
   * Receives connection events, MCP server stderr (debug) and failures, with each server's secrets
   * redacted (see `redact.ts`); default: silent.
   */
  logger?: ExecutorLogger;
  /** For `${VAR}` expansion (including `DATA_DIR`) and inherited by stdio servers; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * How `a2a` executors resolve hostnames before connecting (every address is checked against
   * their target rules, see `target-policy.ts`); default `dns.lookup` with `all: true`. For tests.
   */
  resolver?: Resolver;
  /**
   * The output limit, bytes of JSON (`SWITCHYARD_MAX_OUTPUT_BYTES`; default 1 MiB): executors stop
   * reading an answer past `answerReadLimit(maxOutputBytes)` (see `answer-limit.ts`).
   */
  maxOutputBytes?: number;
  /** Most executor calls in flight in this registry (`SWITCHYARD_MAX_CONCURRENT_CALLS`; default 256; see `call-limiter.ts`). */
  maxConcurrentCalls?: number;
  /**
   * Most executor calls in flight to one target: URL origin (`http`), agent origin (`a2a`), MCP
   * server (`SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN`; default 32); also the HTTP agents'
   * sockets per origin.
   */
  maxConcurrentCallsPerOrigin?: number;
}

/** Options of {@link loadExecutorRegistry}. */
export interface LoadRegistryOptions extends RegistryOptions {
  /**
   * The registry JSON file, relative to `process.cwd()` or absolute. Default: env
   * `SWITCHYARD_EXECUTORS` when set and not empty, else {@link DEFAULT_REGISTRY_FILE}.
   */
  file?: string;
}

/** Options of {@link createExecutorRegistry}. */
export interface CreateRegistryOptions extends RegistryOptions {
  /** Directory relative paths and `${REGISTRY_DIR}` refer to (the registry file's directory). */
  baseDir: string;
  /** Names the registry in error messages; default `baseDir`. */
  source?: string;
}

/**
 * Reads, validates and builds the executor registry from a JSON file (see `RegistryConfig`).
 * @throws RegistryConfigError listing every problem (with its JSON path) when the file is invalid,
 * including malformed JSON; Error when it cannot be read.
 */
export async function loadExecutorRegistry(options: LoadRegistryOptions = {}): Promise<ExecutorRegistry> {
  const env = options.env ?? process.env;
  const file = path.resolve(options.file || env[REGISTRY_FILE_ENV] || DEFAULT_REGISTRY_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read executor registry ${file}: ${errorMessage(error)}`, { cause: error });
  }
  let config: RegistryConfig;
  try {
    config = JSON.parse(text) as RegistryConfig;
  } catch (error) {
    throw new RegistryConfigError(file, [`$: malformed JSON: ${errorMessage(error)}`]);
  }
  const registry = createExecutorRegistry(config, { ...options, env, baseDir: path.dirname(file), source: file });
  options.logger?.info({ file, executors: registry.keys().length }, 'executor registry loaded');
  return registry;
}

/**
 * Builds a registry from a config object (tests, or a config read elsewhere). It holds the
 * built-ins `builtin.echo`, `builtin.fail`, `builtin.sleep` plus every configured executor.
 * `close()` closes what each kind's executors share (MCP connections and servers, the HTTP agent).
 * @throws RegistryConfigError listing every problem when `config` is invalid (it is checked at run
 * time, so untyped JSON may be passed).
 */
export function createExecutorRegistry(config: RegistryConfig, options: CreateRegistryOptions): ExecutorRegistry {
  const logger = options.logger ?? silentLogger;
  const resolved = resolveRegistryConfig(config, {
    baseDir: options.baseDir,
    env: options.env ?? process.env,
    source: options.source ?? options.baseDir,
  });
  const limiter = new CallLimiter({ maxCalls: options.maxConcurrentCalls, maxCallsPerTarget: options.maxConcurrentCallsPerOrigin });
  const context = {
    logger,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    connectionsPerOrigin: limiter.maxCallsPerTarget,
    ...(options.resolver === undefined ? {} : { resolver: options.resolver }),
  };
  // One factory per kind: what a kind's executors share (MCP connections, the HTTP agent) lives there.
  const factories = new Map(EXECUTOR_KINDS.map((kind) => [kind.kind, kind.open({ ...context, connections: resolved.connections.get(kind.kind)! })]));
  const executors = new Map<string, Executor>();
  const describers = new Map<string, () => Promise<ExecutorDetails>>();
  for (const [key, entry] of resolved.executors) {
    // The entry was resolved by this kind (registry-config.ts), so it has the kind's resolved shape.
    const factory = factories.get(entry.kind)!;
    // Every call of an executor that reaches out waits for a slot first (see call-limiter.ts).
    executors.set(key, limiter.wrap(factory.create(key, entry as never)));
    describers.set(key, () => factory.describe(key, entry as never));
  }
  const keys = [...executors.keys()].sort();
  let closing: Promise<void> | undefined;

  return {
    has: (key) => executors.has(key),
    kindOf: (key) => executors.get(key)?.kind,
    get(key) {
      const executor = executors.get(key);
      if (executor === undefined) throw new ExecutorError(`unknown executor key "${key}"`, { retryable: false });
      return executor;
    },
    keys: () => [...keys],
    // Concurrently: the keys of one MCP server share its one connect (see McpConnectionPool.acquire).
    describe: (options = {}) =>
      Promise.all(
        keys
          .filter((key) => options.kind === undefined || executors.get(key)!.kind === options.kind)
          .map(async (key): Promise<ExecutorDescription> => {
            const kind = executors.get(key)!.kind;
            try {
              return { key, kind, ...(await describers.get(key)!()) };
            } catch (error) {
              // Kinds do not reject; should one, the catalogue still answers (messages of kinds are already redacted).
              return { key, kind, description: `${kind} executor ${key}`, available: false, error: errorMessage(error) };
            }
          }),
      ),
    close: () => (closing ??= Promise.all([...factories.values()].map((factory) => factory.close())).then(() => undefined)),
  };
}
