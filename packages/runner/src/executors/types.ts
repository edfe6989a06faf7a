/**
 * Executor contracts (DESIGN.md "Executors"). An executor performs the side effect of one step
 * attempt; the interpreter owns retries, backoff and node-run bookkeeping.
 */

import type { TokenBinding } from './shared/token-binding.ts';

/** What the interpreter hands an executor for one attempt of one step. */
export interface ExecutorCall {
  /** The step's `config` after CEL expressions were evaluated: the tool's arguments. */
  arguments: Record<string, unknown>;
  /** The step input: the previous step's output in sequence, or the run input for a first step. */
  input: unknown;
  /** 1-based attempt number of this node run. */
  attempt: number;
  /**
   * Aborted when the run is cancelled, the process shuts down, or the call's time is up (then its
   * reason is a `TimeoutError` DOMException; see `abort.ts` `abortedError`). Executors must honour it.
   */
  signal: AbortSignal;
  /**
   * The limit, in milliseconds, the caller enforces on this call through `signal` (the step runner
   * always sets it). An executor whose library has a timer of its own disables it then, so that one
   * limit applies; without it (a direct call) the executor may apply {@link Executor.timeoutMs}.
   */
  timeoutMs?: number;
  /**
   * A short-lived bearer token minted for this call from the run's triggering identity
   * (`downstream-token.ts`); undefined when no signing key is configured or the run has no identity.
   * Executors that call over HTTP send it as `Authorization: Bearer` unless their entry sets
   * `Authorization` itself (see `downstreamAuthorization`). Never logged, never stored.
   */
  downstreamToken?: string;
  /** Identifies the call in logs: run id, node id, node name. */
  context: {
    runId: string;
    nodeId: string;
    nodeName: string;
    /** Where in the run's loops the step executes ('' outside loops). */
    iterationPath?: string;
    /**
     * Who triggered the run (captured at trigger time, also after a HITL pause), for executors
     * that act on a user's behalf. Null fields when the trigger carried no identity.
     */
    identity?: { userId: string | null; username: string | null; scopes: string[] };
  };
}

/** One configured executor, looked up by `executorKey`. */
export interface Executor {
  /** Registry kind: `builtin`, `mcp`, `http`, `a2a`. */
  readonly kind: string;
  /** The registry key this executor is known by. */
  readonly key: string;
  /**
   * What a call reaches, for the per-target cap on concurrent calls (`call-limiter.ts`): an `http`
   * entry's URL origin, an `a2a` agent's origin, `mcp:<server>` for an MCP server. Undefined for
   * in-process executors (`builtin`), whose calls are not limited.
   */
  readonly target?: string;
  /**
   * Default limit of one call, milliseconds: the entry's `timeoutSeconds` (or an `mcp` entry's
   * `timeoutMs`), else 60 s. A step's `stepConfig.timeoutSeconds` overrides it.
   */
  readonly timeoutMs: number;
  /**
   * What the downstream token of this executor's calls is bound to: its `aud` and the scopes it
   * may carry (`token-binding.ts`); absent: the minter's configured audience and no scopes.
   */
  readonly token?: TokenBinding;
  /**
   * Runs one attempt. Resolves with the output snapshot (any JSON value).
   * Rejects with {@link ExecutorError} (or any Error, treated as retryable).
   */
  invoke(call: ExecutorCall): Promise<unknown>;
}

/**
 * A failed executor call. `retryable: false` tells the interpreter that another attempt cannot
 * help (bad arguments, unknown tool), so `stepConfig.maxRetries` is not spent on it.
 */
export class ExecutorError extends Error {
  override readonly name = 'ExecutorError';
  readonly retryable: boolean;
  readonly details?: unknown;
  /**
   * The least time to wait before another attempt, milliseconds, when the other side said so (an
   * HTTP `Retry-After`); the step runner waits at least this long instead of its backoff alone.
   */
  readonly retryAfterMs?: number;
  constructor(message: string, options: { retryable?: boolean; details?: unknown; cause?: unknown; retryAfterMs?: number } = {}) {
    super(message, { cause: options.cause });
    this.retryable = options.retryable ?? true;
    this.details = options.details;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/** True when another attempt may succeed: any error except an ExecutorError marked otherwise. */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof ExecutorError) || error.retryable;
}

/** The set of executors loaded at start (see `registry.ts`). */
export interface ExecutorRegistry {
  /** True when `key` names a configured executor. */
  has(key: string): boolean;
  /** The kind of executor `key` (`builtin`, `mcp`, `http`, ...); undefined when unknown. */
  kindOf(key: string): string | undefined;
  /** The executor for `key`; throws ExecutorError (not retryable) when unknown. */
  get(key: string): Executor;
  /** All configured keys, sorted. */
  keys(): string[];
  /**
   * What each key is, for a catalogue (`GET /api/v1/executors`), sorted by key; only keys of
   * `options.kind` when given. MCP entries list their server's tools through the connection pool
   * (connecting when needed; the list is cached per connection and re-listed after the server's
   * `notifications/tools/list_changed`). Never rejects for an unreachable server: its keys have
   * `available: false` and a redacted `error`.
   */
  describe(options?: { kind?: string }): Promise<ExecutorDescription[]>;
  /** Closes pooled connections (MCP clients, spawned stdio servers, the HTTP agent). Idempotent. */
  close(): Promise<void>;
}

/** What the catalogue says about one registry key (see {@link ExecutorRegistry.describe}). */
export interface ExecutorDescription {
  key: string;
  kind: string;
  /** The entry's own `description`, else one generated from its configuration. */
  description: string;
  /** False when what the key needs cannot be reached now (an MCP server that does not start, a missing tool). */
  available: boolean;
  /** Why `available` is false (secrets redacted). */
  error?: string;
  /** `builtin`: the built-in the key runs. */
  builtin?: string;
  /** `mcp`: the server name. */
  server?: string;
  /** `mcp`: the tool, with what its server lists for it (absent when the server could not be asked). */
  tool?: { name: string; description?: string; inputSchema?: Record<string, unknown> };
  /** `http`: the method. */
  method?: string;
  /** `http`: scheme, host and port of the URL only (path and query may carry secrets). */
  origin?: string;
  /**
   * `a2a`: what the agent's card says (absent when the card could not be fetched): its name,
   * description, version, skills (`id`, `name`, `description`, `tags` when it lists some), and
   * `url`, the entry's base URL without credentials or query.
   */
  agent?: {
    name: string;
    description: string;
    version?: string;
    skills: Array<{ id: string; name: string; description: string; tags?: string[] }>;
    url: string;
  };
}

/** What a kind adds about one of its entries: an {@link ExecutorDescription} without `key` and `kind`. */
export type ExecutorDetails = Omit<ExecutorDescription, 'key' | 'kind'>;
