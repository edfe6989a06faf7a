/**
 * One pooled connection per MCP server, opened on first use and shared by every call and every
 * executor naming that server. Concurrent first calls share one connect. A connection that ends
 * (server exit, transport failure, or {@link McpConnectionPool.discard}) is forgotten, so the next
 * call connects again. Everything a server's connection logs goes through a logger that redacts
 * that server's secrets.
 */
import { DEFAULT_MAX_OUTPUT_BYTES } from '../../output-limit.ts';
import { describeTarget } from './mcp-transport.ts';
import { McpConnection } from './mcp-connection.ts';
import type { ExecutorLogger } from '../shared/logger.ts';
import { Redactor, redactingLogger } from '../shared/redact.ts';
import type { McpServerTarget } from './mcp-servers.ts';
import { ExecutorError } from '../types.ts';

interface PoolEntry {
  /** Settles when the connect finishes; rejected entries are removed from the pool. */
  readonly ready: Promise<McpConnection>;
  /** Set once connected. */
  connection?: McpConnection;
}

/** One configured server: how to reach it, and how to report about it without its secrets. */
interface ServerSetup {
  readonly target: McpServerTarget;
  readonly redactor: Redactor;
  readonly logger: ExecutorLogger;
}

/** The MCP connections of one executor registry. */
export class McpConnectionPool {
  readonly #servers: ReadonlyMap<string, ServerSetup>;
  readonly #logger: ExecutorLogger;
  readonly #entries = new Map<string, PoolEntry>();
  /** Closes of discarded connections still under way; {@link close} waits for them too. */
  readonly #discarding = new Set<Promise<void>>();
  #closed = false;
  readonly #maxOutputBytes: number;

  /**
   * `targets`: the configured servers by name. Nothing is started until {@link acquire}.
   * `options.maxOutputBytes`: the output limit, bytes, bounding what a connection reads of one
   * answer (see `McpConnectionOptions.maxOutputBytes`; default 1 MiB).
   */
  constructor(targets: ReadonlyMap<string, McpServerTarget>, logger: ExecutorLogger, options: { maxOutputBytes?: number } = {}) {
    this.#logger = logger;
    this.#maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.#servers = new Map([...targets].map(([server, target]) => {
      const redactor = new Redactor(target.secrets);
      return [server, { target, redactor, logger: redactingLogger(logger, redactor) }];
    }));
  }

  /** The redactor of `server`'s secrets ({@link Redactor.none} for a server not configured). */
  redactor(server: string): Redactor {
    return this.#servers.get(server)?.redactor ?? Redactor.none;
  }

  /** The logger for records about `server`: the registry's, redacting that server's secrets. */
  logger(server: string): ExecutorLogger {
    return this.#servers.get(server)?.logger ?? redactingLogger(this.#logger, Redactor.none);
  }

  /**
   * The live connection to `server`, connecting first when there is none.
   * @throws ExecutorError retryable when connecting fails (see {@link McpConnection.open});
   * not retryable when `server` is not configured or the pool is closed.
   */
  acquire(server: string): Promise<McpConnection> {
    if (this.#closed) return Promise.reject(new ExecutorError('executor registry is closed', { retryable: false }));
    const existing = this.#entries.get(server);
    if (existing !== undefined) return existing.ready;
    const setup = this.#servers.get(server);
    if (setup === undefined) {
      return Promise.reject(new ExecutorError(`no MCP server "${server}" is configured`, { retryable: false }));
    }
    const entry: PoolEntry = { ready: this.#connect(server, setup) };
    entry.ready.then(
      (connection) => {
        // The server may already have gone away between the handshake and now.
        if (connection.closed) this.#forget(server, entry);
        else entry.connection = connection;
      },
      () => this.#forget(server, entry),
    );
    this.#entries.set(server, entry);
    return entry.ready;
  }

  /**
   * Drops `connection` after a transport-level failure and closes it, so that the next call
   * reconnects instead of reusing a broken session. No-op for a connection already replaced.
   */
  discard(connection: McpConnection): void {
    const entry = this.#entries.get(connection.server);
    if (entry?.connection === connection) this.#forget(connection.server, entry);
    const closing = connection.close();
    this.#discarding.add(closing);
    void closing.finally(() => this.#discarding.delete(closing));
  }

  /**
   * Closes every connection, including ones still connecting or being discarded, and refuses new
   * ones. Resolves once spawned servers have exited (or were killed). Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all([
      ...entries.map((entry) => entry.ready.then((connection) => connection.close(), () => undefined)),
      ...this.#discarding,
    ]);
  }

  async #connect(server: string, { target, redactor, logger }: ServerSetup): Promise<McpConnection> {
    const started = performance.now();
    const description = describeTarget(target);
    logger.debug({ server, target: description }, 'connecting to MCP server');
    try {
      const connection = await McpConnection.open(server, target, {
        logger,
        redactor,
        maxOutputBytes: this.#maxOutputBytes,
        onClose: (closed) => {
          const entry = this.#entries.get(server);
          if (entry?.connection === closed) this.#forget(server, entry);
        },
      });
      const ms = Math.round(performance.now() - started);
      logger.info({ server, target: description, pid: connection.pid, ms }, 'MCP server connected');
      return connection;
    } catch (error) {
      logger.error({ server, target: description, err: error }, 'MCP server connection failed');
      throw error;
    }
  }

  #forget(server: string, entry: PoolEntry): void {
    if (this.#entries.get(server) === entry) this.#entries.delete(server);
  }
}
