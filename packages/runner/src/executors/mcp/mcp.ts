/**
 * Executor kind `mcp`: calls one tool of one MCP server through the registry's connection pool.
 *
 * - Registry entry: `{ "kind": "mcp", "server": "<a key of mcpServers>", "tool": "<tool name>",
 *   "timeoutSeconds"?, "tokenAudience"?, "tokenScopes"? }` (or the older `"timeoutMs"`; not both);
 *   the token fields bind the downstream token (`token-binding.ts`; default `aud`: the server URL's
 *   origin over Streamable HTTP).
 * - Arguments are the step's evaluated `config`, checked against the tool's `inputSchema` first.
 * - Output snapshot: the result's `structuredContent` when present, else `{ content: [...blocks] }`.
 * - Answer size: bounded while read by `answerReadLimit(maxOutputBytes, 2)` (`answer-limit.ts`:
 *   a result may carry its structured content twice; see `mcp-transport.ts`): over HTTP a larger response (or event) is cut off and this call fails with
 *   `MCP server "<server>" answer exceeds SWITCHYARD_MAX_OUTPUT_BYTES (<max> bytes): read stopped
 *   at <n> bytes` (not retryable); over stdio a larger message closes the connection and every
 *   call in flight on it fails with that error (the byte count is then the read limit).
 * - Failures (all ExecutorError):
 *   - not retryable: unknown tool, arguments invalid for the schema, a request the server rejects
 *     as malformed (JSON-RPC invalid params / request, method not found), cancellation via
 *     `call.signal` (message `cancelled`);
 *   - retryable: the tool's own error result (`isError`; message = its text), timeouts (`... timed
 *     out after N s`), connect and transport failures (the broken connection is dropped and the
 *     next call reconnects).
 * - Time limit: the step runner bounds every call through `call.signal` (`call.timeoutMs`); the
 *   SDK's own request timer is then set out of the way. Called directly without `call.timeoutMs`,
 *   the SDK timer applies the entry's limit, with the same message.
 * - Secrets: what leaves {@link Executor.invoke} — the output, and the rejection's message, details
 *   and cause chain — and what it logs have the server's secrets replaced by `[REDACTED]` (see
 *   `redact.ts`); connect errors name the server and its command name, never its arguments.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Type, { type Static } from 'typebox';
import { callScope } from '../../downstream-token.ts';
import { abortable, abortedError, formatSeconds, linkedAbortController } from '../shared/abort.ts';
import { AnswerWatch, answerScope } from '../shared/answer-limit.ts';
import { errorMessage } from '../shared/error-message.ts';
import { DEFAULT_TIMEOUT_SECONDS, DESCRIBE_TIMEOUT_MS, defineKind, entrySchema } from '../kind.ts';
import type { McpConnection } from './mcp-connection.ts';
import { McpConnectionPool } from './mcp-pool.ts';
import { mcpServers } from './mcp-servers.ts';
import { formatArgumentProblems } from './tool-arguments.ts';
import { TokenFields, tokenBinding } from '../shared/token-binding.ts';
import { ExecutorError } from '../types.ts';
import type { Executor, ExecutorCall, ExecutorDetails } from '../types.ts';

/** Largest `timeoutMs` accepted (Node's timer limit, about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Registry entry `{ "kind": "mcp", "server", "tool", "timeoutSeconds"? | "timeoutMs"? }`. */
export const McpEntry = entrySchema('mcp', {
  server: Type.String({ minLength: 1, description: 'A key of mcpServers' }),
  tool: Type.String({ minLength: 1, description: 'The tool name, as the server lists it' }),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS, unit: 'milliseconds', description: 'Older spelling of timeoutSeconds, in milliseconds' })),
  ...TokenFields,
});

/** Executor kind `mcp`: one entry of the registry's `executors`. */
export type McpExecutorConfig = Static<typeof McpEntry>;

/** Default per-call limit of `mcp` executors, in milliseconds (60 s): {@link DEFAULT_TIMEOUT_SECONDS}, as for every kind. */
export const DEFAULT_MCP_TIMEOUT_MS = DEFAULT_TIMEOUT_SECONDS * 1000;

/** What an `mcp` entry resolves to (plus `kind` and `timeoutMs`). */
export interface ResolvedMcpEntry {
  server: string;
  tool: string;
  /** The entry's `tokenAudience` and `tokenScopes` (see `token-binding.ts`; the default `aud` is the server URL's origin, over HTTP). */
  tokenAudience?: string;
  tokenScopes?: string[];
  /** The entry's `description`. */
  description?: string;
}

/** The `mcp` kind (see `kind.ts`): owns the `mcpServers` section; one connection pool per registry, connected on first use. */
export const mcpKind = defineKind({
  kind: 'mcp',
  schema: McpEntry,
  // An MCP tool is no A2A agent: an a2aPool may not list it (definition checks answer 400 at save).
  a2aPool: false,
  connections: mcpServers,
  resolve: (entry, scope): ResolvedMcpEntry | undefined => {
    let ok = true;
    if (!scope.connectionNames.includes(entry.server)) {
      const known = scope.connectionNames.length > 0 ? `configured: ${scope.connectionNames.join(', ')}` : 'no mcpServers are configured';
      scope.problem('server', `unknown MCP server "${entry.server}" (${known})`);
      ok = false;
    }
    if (entry.timeoutMs !== undefined && entry.timeoutSeconds !== undefined) {
      scope.problem('timeoutMs', 'set either timeoutSeconds or timeoutMs (milliseconds, the older spelling), not both');
      ok = false;
    }
    if (!ok) return undefined;
    const resolved: ResolvedMcpEntry = { server: entry.server, tool: entry.tool };
    if (entry.description !== undefined) resolved.description = entry.description;
    if (entry.tokenAudience !== undefined) resolved.tokenAudience = entry.tokenAudience;
    if (entry.tokenScopes !== undefined) resolved.tokenScopes = entry.tokenScopes;
    return resolved;
  },
  timeoutMs: (entry) => entry.timeoutMs,
  open: ({ connections: servers, logger, maxOutputBytes }) => {
    const pool = new McpConnectionPool(servers, logger, { maxOutputBytes });
    let closing: Promise<void> | undefined;
    return {
      create: (key, entry) => {
        const target = servers.get(entry.server);
        const executor = createMcpExecutor(key, entry, pool);
        // Bound to the server's origin over HTTP; a stdio server is sent no token (the minter's audience then).
        return { ...executor, token: tokenBinding(entry, target?.transport === 'http' ? target.url.origin : undefined) };
      },
      describe: (_key, entry) => describeMcpEntry(entry, pool),
      close: () => (closing ??= pool.close()),
    };
  },
});

/**
 * `_meta` keys of every MCP tool call an executor makes: the run, node and iteration path it is
 * made for (MCP reserves `_meta` for such data; keys are prefixed with our domain).
 */
export const RUN_META_KEYS = { runId: 'io.switchyard/run-id', nodeId: 'io.switchyard/node-id', iterationPath: 'io.switchyard/iteration-path' } as const;

/** JSON-RPC errors meaning the request itself is wrong: sending it again cannot succeed. */
const NON_RETRYABLE_CODES: ReadonlySet<number> = new Set([
  ErrorCode.InvalidParams,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
]);

/**
 * Creates the executor `key` calling `config.tool` on `config.server`, with a default call limit
 * of `config.timeoutMs` milliseconds. Connections come from `pool`; nothing connects until invoked.
 * Redacts and logs with the pool's redactor and logger for `config.server`.
 */
export function createMcpExecutor(
  key: string,
  config: ResolvedMcpEntry & { timeoutMs: number },
  pool: McpConnectionPool,
): Executor {
  const { server, tool, timeoutMs } = config;
  const subject = `MCP tool "${tool}" of server "${server}"`;
  const redactor = pool.redactor(server);
  const logger = pool.logger(server);

  async function call(connection: McpConnection, request: ExecutorCall): Promise<unknown> {
    const prepared = await abortable(connection.prepare(tool), request.signal);
    if (prepared === undefined) {
      const available = [...(await connection.tools()).keys()].sort().join(', ');
      throw new ExecutorError(`MCP server "${server}" has no tool "${tool}" (available: ${available || 'none'})`, {
        retryable: false,
        details: { server, tool },
      });
    }
    const problems = prepared.validate?.(request.arguments) ?? [];
    if (problems.length > 0) {
      throw new ExecutorError(`invalid arguments for ${subject}: ${formatArgumentProblems(problems)}`, {
        retryable: false,
        details: { server, tool, problems },
      });
    }
    logger.debug({ executor: key, server, tool, ...request.context, attempt: request.attempt }, 'calling MCP tool');
    // The default result schema (CallToolResultSchema) guarantees the current result shape.
    // The run context travels in `_meta`: a tool that acts for the run (e.g. the bridge's ask_human) knows where it is called from.
    const _meta = { [RUN_META_KEYS.runId]: request.context.runId, [RUN_META_KEYS.nodeId]: request.context.nodeId, [RUN_META_KEYS.iterationPath]: request.context.iterationPath ?? '' };
    // Over HTTP the request carries this call's downstream token (`attempt` runs in its scope).
    // An answer over the read limit (over HTTP) trips `watch`, which also ends the request.
    const watch = new AnswerWatch();
    const { controller, unlink } = linkedAbortController([request.signal, watch.signal]);
    let result: CallToolResult;
    try {
      result = (await answerScope.run(watch, () =>
        connection.client.callTool({ name: tool, arguments: request.arguments, _meta }, undefined, {
          signal: controller.signal,
          // One limit per call: the caller's (through the signal) when it sets one, else the entry's.
          timeout: request.timeoutMs === undefined ? timeoutMs : MAX_TIMEOUT_MS,
        }),
      )) as CallToolResult;
    } catch (error) {
      throw watch.error ?? error;
    } finally {
      unlink();
    }
    if (result.isError === true) {
      throw new ExecutorError(errorText(result) || `${subject} reported an error without text`, {
        retryable: true,
        details: { server, tool, content: result.content },
      });
    }
    return result.structuredContent ?? { content: result.content };
  }

  /** Maps anything thrown by a call to an ExecutorError; drops the connection on transport failures. */
  function failure(error: unknown, connection: McpConnection, request: ExecutorCall): ExecutorError {
    if (error instanceof ExecutorError) return error;
    // A stdio message over the read limit closed the connection under the call.
    if (connection.oversized !== undefined) return connection.oversized;
    // The SDK rejects aborted requests with an McpError; report them as cancellations (or timeouts).
    if (request.signal.aborted) return abortedError(request.signal, subject);
    const details = { server, tool };
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) {
        const data: unknown = error.data;
        const after = isRecord(data) && typeof data['timeout'] === 'number' ? ` after ${formatSeconds(data['timeout'])} s` : '';
        return new ExecutorError(`${subject} timed out${after}`, { retryable: true, cause: error, details });
      }
      if (error.code === ErrorCode.ConnectionClosed) pool.discard(connection);
      const retryable = !NON_RETRYABLE_CODES.has(error.code);
      return new ExecutorError(`${subject} failed: ${error.message}`, { retryable, cause: error, details });
    }
    // Not a protocol answer: the transport broke (process gone, network, HTTP status). Reconnect next time.
    pool.discard(connection);
    return new ExecutorError(`${subject} failed: ${errorMessage(error)}`, { retryable: true, cause: error, details });
  }

  /**
   * One call on the pooled connection, unredacted. Connecting, listing the tools and the call all
   * run in the call's token scope: a server that requires the bearer gets it on `initialize` too
   * (the transport never sends a call's token on its long-lived GET stream, see mcp-transport.ts).
   */
  function attempt(request: ExecutorCall): Promise<unknown> {
    return callScope.run(request.downstreamToken, async () => {
      const connection = await abortable(pool.acquire(server), request.signal);
      try {
        return await call(connection, request);
      } catch (error) {
        throw failure(error, connection, request);
      }
    });
  }

  return {
    kind: 'mcp',
    key,
    target: `mcp:${server}`,
    timeoutMs,
    // The one place results and errors leave for the run's records: redact both here.
    async invoke(request: ExecutorCall): Promise<unknown> {
      let output: unknown;
      try {
        output = await attempt(request);
      } catch (error) {
        throw redactor.executorError(error);
      }
      return redactor.value(output);
    },
  };
}

/**
 * What the catalogue shows of an `mcp` entry: the server, and the tool's description and
 * `inputSchema` from the server's `tools/list` (through the pool: connects when needed; the list is
 * cached per connection and re-listed after `notifications/tools/list_changed`). A server that
 * cannot be reached within `timeoutMs`, or lacks the tool, gives `available: false` and an `error`
 * with the server's secrets redacted; never rejects.
 */
export async function describeMcpEntry(entry: ResolvedMcpEntry, pool: McpConnectionPool, timeoutMs = DESCRIBE_TIMEOUT_MS): Promise<ExecutorDetails> {
  const { server, tool } = entry;
  const base = { description: entry.description ?? `MCP tool ${tool} of server ${server}`, server };
  const redactor = pool.redactor(server);
  let timer: NodeJS.Timeout | undefined;
  try {
    const listing = pool.acquire(server).then((connection) => connection.tools());
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`MCP server "${server}" did not list its tools within ${formatSeconds(timeoutMs)} s`)), timeoutMs);
    });
    const tools = await Promise.race([listing, timeout]);
    const found = tools.get(tool);
    if (found === undefined) {
      const available = [...tools.keys()].sort().join(', ');
      return { ...base, available: false, error: redactor.text(`MCP server "${server}" has no tool "${tool}" (available: ${available || 'none'})`), tool: { name: tool } };
    }
    const listed: NonNullable<ExecutorDetails['tool']> = { name: tool, inputSchema: redactor.value(found.inputSchema) as Record<string, unknown> };
    if (found.description !== undefined) listed.description = redactor.text(found.description);
    return { ...base, description: entry.description ?? listed.description ?? base.description, available: true, tool: listed };
  } catch (error) {
    return { ...base, available: false, error: redactor.text(errorMessage(error)), tool: { name: tool } };
  } finally {
    clearTimeout(timer);
  }
}

/** The text blocks of a tool result, joined with newlines. */
function errorText(result: CallToolResult): string {
  return result.content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n')
    .trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
