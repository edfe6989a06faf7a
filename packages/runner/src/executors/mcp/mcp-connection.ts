/**
 * One live connection to one MCP server: the SDK `Client`, its transport, and the server's tool
 * list with compiled argument validators, cached for the life of the connection.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import runnerPackage from '../../../package.json' with { type: 'json' };
import { AnswerTooLargeError, AnswerWatch, answerReadLimit, answerScope } from '../shared/answer-limit.ts';
import { errorMessage } from '../shared/error-message.ts';
import type { ExecutorLogger } from '../shared/logger.ts';
import { MCP_ANSWER_COPIES, createServerTransport, describeTarget } from './mcp-transport.ts';
import type { ServerTransport } from './mcp-transport.ts';
import type { Redactor } from '../shared/redact.ts';
import type { McpServerTarget } from './mcp-servers.ts';
import { ArgumentValidatorCompiler } from './tool-arguments.ts';
import type { ArgumentValidator } from './tool-arguments.ts';
import { ExecutorError } from '../types.ts';

/** A tool of the connected server, with its argument validator (undefined: schema not compilable). */
export interface PreparedTool {
  tool: Tool;
  validate: ArgumentValidator | undefined;
}

/** Options of {@link McpConnection.open}. */
export interface McpConnectionOptions {
  /** Receives the connection's events; should redact the server's secrets (see `redactingLogger`). */
  logger: ExecutorLogger;
  /** The server's secrets, redacted from its stderr as it is read. */
  redactor: Redactor;
  /** Called once when the connection ends, whether closed by us or lost (process exit, error). */
  onClose: (connection: McpConnection) => void;
  /**
   * The output limit, bytes: what the transport reads of one answer is bounded by
   * `answerReadLimit(maxOutputBytes, MCP_ANSWER_COPIES)` (see `mcp-transport.ts`). Over stdio, a message over it
   * closes the connection and every call in flight on it fails with {@link McpConnection.oversized}.
   */
  maxOutputBytes: number;
}

const CLIENT_INFO = { name: 'switchyard', version: runnerPackage.version };

/** A connected MCP client for one server. Create with {@link McpConnection.open}. */
export class McpConnection {
  readonly server: string;
  readonly client: Client;
  readonly #transport: ServerTransport;
  readonly #logger: ExecutorLogger;
  #tools: Promise<ReadonlyMap<string, Tool>> | undefined;
  #compiler = new ArgumentValidatorCompiler();
  readonly #validators = new WeakMap<Tool, ArgumentValidator | null>();
  #connected = false;
  #closing = false;
  #closed = false;
  #oversized: AnswerTooLargeError | undefined;

  private constructor(server: string, target: McpServerTarget, options: McpConnectionOptions) {
    this.server = server;
    this.#logger = options.logger;
    this.#transport = createServerTransport(server, target, options.logger, options.redactor, options.maxOutputBytes);
    this.client = new Client(CLIENT_INFO, {
      // Tool lists are cached; a server that announces a change gets re-listed on the next call.
      listChanged: { tools: { autoRefresh: false, onChanged: () => this.#forgetTools() } },
    });
    this.client.onerror = (error) => {
      this.#logger.warn({ server, err: error }, 'MCP transport error');
      // The SDK's stdio read buffer overflowed: one message over the read limit. The buffer was
      // dropped mid-message, so the stream cannot be trusted any more: close it, failing what waits.
      if (this.#oversized === undefined && /ReadBuffer exceeded maximum size/.test(errorMessage(error))) {
        const limit = answerReadLimit(options.maxOutputBytes, MCP_ANSWER_COPIES);
        this.#oversized = new AnswerTooLargeError(`MCP server "${server}" answer`, options.maxOutputBytes, limit, { server }, MCP_ANSWER_COPIES);
        void this.close();
      }
    };
    this.client.onclose = () => {
      this.#closed = true;
      if (this.#connected && !this.#closing) {
        this.#logger.warn({ server, pid: this.pid, stderr: this.#transport.stderrTail() }, 'MCP server connection lost');
      }
      options.onClose(this);
    };
  }

  /**
   * Starts the server (stdio) or opens the session (HTTP) and completes the MCP handshake.
   * @throws ExecutorError (retryable) naming the server and its command name or URL (see
   * `describeTarget`; never the arguments or environment), with the server's last stderr lines
   * (redacted) when it wrote any; the transport is closed (a spawned process killed) first. The
   * message may still quote the underlying error's text: callers reporting it redact it.
   */
  static async open(server: string, target: McpServerTarget, options: McpConnectionOptions): Promise<McpConnection> {
    const connection = new McpConnection(server, target, options);
    try {
      await connection.client.connect(connection.#transport.transport);
    } catch (error) {
      await connection.close();
      const stderr = connection.#transport.stderrTail();
      const message = `cannot connect to MCP server "${server}" (${describeTarget(target)}): ${errorMessage(error)}`;
      throw new ExecutorError(stderr === '' ? message : `${message}\nserver stderr:\n${stderr}`, {
        retryable: true,
        cause: error,
        details: { server },
      });
    }
    connection.#connected = true;
    return connection;
  }

  /**
   * Set when the server sent a stdio message over the read limit (the connection was closed then):
   * the error every call that was in flight on it fails with.
   */
  get oversized(): AnswerTooLargeError | undefined {
    return this.#oversized;
  }

  /** True once the connection has ended; a closed connection is never reused. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Pid of the spawned server process (stdio), null for HTTP or once closed. */
  get pid(): number | null {
    return this.#transport.pid();
  }

  /**
   * The tool `name` and its argument validator, or undefined when the server has no such tool.
   * The first call lists the server's tools; later calls reuse the list until the server announces
   * a change. Rejects with the SDK's error when listing fails (the next call lists again).
   */
  async prepare(name: string): Promise<PreparedTool | undefined> {
    const tool = (await this.tools()).get(name);
    return tool === undefined ? undefined : { tool, validate: this.#validator(tool) };
  }

  /** All tools of the server by name (cached, see {@link prepare}). */
  tools(): Promise<ReadonlyMap<string, Tool>> {
    if (this.#tools === undefined) {
      const listing = this.#listTools();
      this.#tools = listing;
      listing.catch(() => {
        if (this.#tools === listing) this.#tools = undefined;
      });
    }
    return this.#tools;
  }

  /** Closes the client and its transport (a spawned server gets stdin closed, then signals). Never throws. */
  async close(): Promise<void> {
    this.#closing = true;
    try {
      await this.client.close();
    } catch (error) {
      this.#logger.warn({ server: this.server, err: error }, 'error closing MCP connection');
    }
  }

  /**
   * Lists every page of tools. A page over the read limit (over HTTP) trips this listing's own
   * watch, which ends its request: the listing rejects with the AnswerTooLargeError instead of
   * waiting forever for an answer that was cut off (shared by every call waiting for the list).
   */
  async #listTools(): Promise<ReadonlyMap<string, Tool>> {
    const watch = new AnswerWatch();
    try {
      return await answerScope.run(watch, async () => {
        const tools = new Map<string, Tool>();
        let cursor: string | undefined;
        do {
          const page = await this.client.listTools(cursor === undefined ? undefined : { cursor }, { signal: watch.signal });
          for (const tool of page.tools) tools.set(tool.name, tool);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return tools;
      });
    } catch (error) {
      throw watch.error ?? error;
    }
  }

  #validator(tool: Tool): ArgumentValidator | undefined {
    let validator = this.#validators.get(tool);
    if (validator === undefined) {
      try {
        validator = this.#compiler.compile(tool.inputSchema);
      } catch (error) {
        // The server still validates its own input; we only lose the early, non-retryable rejection.
        this.#logger.warn({ server: this.server, tool: tool.name, err: error }, 'cannot compile tool inputSchema; arguments are not checked before calls');
        validator = null;
      }
      this.#validators.set(tool, validator);
    }
    return validator ?? undefined;
  }

  #forgetTools(): void {
    this.#tools = undefined;
    this.#compiler = new ArgumentValidatorCompiler();
  }
}
