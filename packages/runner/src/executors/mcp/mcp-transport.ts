/**
 * Builds the SDK client transport for one configured MCP server: a spawned child process over
 * stdio, or Streamable HTTP. A child's stderr goes to the logger (debug), never to our stdout, and
 * its last lines are kept for error messages; both with the server's secrets redacted. Over HTTP,
 * every request carries the downstream token of the call that sends it (`callScope`) as
 * `Authorization: Bearer`, unless the server's configured headers set `Authorization`, and each POST
 * the calling attempt's W3C `traceparent` when tracing is on (`trace-headers.ts`).
 */
import path from 'node:path';
import type { Readable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { callScope, downstreamAuthorization } from '../../downstream-token.ts';
import { answerReadLimit, answerScope, boundedFetch } from '../shared/answer-limit.ts';
import type { ExecutorLogger } from '../shared/logger.ts';
import type { Redactor } from '../shared/redact.ts';
import { traceHeaders } from '../shared/trace-headers.ts';
import type { McpServerTarget } from './mcp-servers.ts';

/**
 * How many times an MCP result may carry its output (see `answerReadLimit`): a tool with
 * structured content also returns it as JSON text in a content block (the MCP specification
 * recommends it; the filesystem server does), so its answer is about twice the output.
 */
export const MCP_ANSWER_COPIES = 2;

/** A transport to one server (not started: `Client.connect` starts it) plus its process details. */
export interface ServerTransport {
  readonly transport: Transport;
  /** Pid of the spawned server once started (stdio); null for HTTP or when not running. */
  pid(): number | null;
  /** The server's last stderr lines (redacted) joined with newlines (stdio), `''` if none. */
  stderrTail(): string;
}

/** How many stderr lines, of at most how many characters, are kept for error messages. */
const TAIL_LINES = 20;
const MAX_LINE_CHARS = 500;
/** Output without a newline is emitted as a line once it grows past this many characters. */
const MAX_PENDING_CHARS = 64 * 1024;

/**
 * Describes a target for logs and errors: `stdio: <command name>` (e.g. `stdio: npx`, the base name
 * of the command's path; never its arguments or environment) or `http: <origin><path>` (no user
 * name, password, query or fragment). Secrets substituted into these parts are left to the caller's
 * {@link Redactor}.
 */
export function describeTarget(target: McpServerTarget): string {
  if (target.transport === 'http') return `http: ${target.url.origin}${target.url.pathname}`;
  return `stdio: ${path.basename(target.command)}`;
}

/**
 * Creates (does not start) the transport for server `server`. Each stderr line is redacted with
 * `redactor` as it arrives, before it is logged, kept or cut to length (a cut could split a secret).
 * Answers are bounded by `answerReadLimit(maxOutputBytes, MCP_ANSWER_COPIES)` (`answer-limit.ts`): over HTTP each
 * response (each event of an event-stream) through a counted body that reports to the guard of the
 * call that sent the request (`answerScope`); over stdio through the SDK's read buffer, whose
 * overflow the connection handles (`McpConnection.oversized`).
 */
export function createServerTransport(server: string, target: McpServerTarget, logger: ExecutorLogger, redactor: Redactor, maxOutputBytes: number): ServerTransport {
  if (target.transport === 'http') {
    // The connection is shared by every call; each request carries the token of the call that sends it.
    const fetchWithToken = (url: string | URL, init?: RequestInit): Promise<Response> => {
      // Never on GET: the SDK opens its long-lived event stream (and reconnects it) from within the
      // first connect, whose scope would otherwise lend one call's token to the connection for good.
      const post = (init?.method ?? 'GET').toUpperCase() !== 'GET';
      const token = post ? callScope.getStore() : undefined;
      // The calling attempt's W3C trace context (tracing.ts), likewise per request and never on GET.
      const extra = { ...(post ? traceHeaders() : {}), ...downstreamAuthorization(token, target.headers) };
      if (Object.keys(extra).length === 0) return fetch(url, init);
      const headers = new Headers(init?.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      return fetch(url, { ...init, headers });
    };
    const bounded = boundedFetch(fetchWithToken, { maxOutputBytes, copies: MCP_ANSWER_COPIES, what: `MCP server "${server}" answer`, guard: () => answerScope.getStore() });
    const transport = new StreamableHTTPClientTransport(target.url, { requestInit: { headers: target.headers }, fetch: bounded });
    return { transport, pid: () => null, stderrTail: () => '' };
  }
  const transport = new StdioClientTransport({
    command: target.command,
    args: target.args,
    env: target.env,
    cwd: target.cwd,
    stderr: 'pipe',
    // One message may not pass the read limit (the SDK's default is 10 MiB).
    maxBufferSize: answerReadLimit(maxOutputBytes, MCP_ANSWER_COPIES),
  });
  const tail: string[] = [];
  // With stderr 'pipe' the SDK hands out the stream before start, so no early output is lost.
  forEachLine(transport.stderr as Readable, (raw) => {
    const line = redactor.text(raw);
    tail.push(line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}...` : line);
    if (tail.length > TAIL_LINES) tail.shift();
    logger.debug({ server, pid: transport.pid, line }, 'MCP server stderr');
  });
  return { transport, pid: () => transport.pid, stderrTail: () => tail.join('\n') };
}

/** Calls `onLine` for every non-empty line of `stream` (UTF-8), the last one even without a newline. */
function forEachLine(stream: Readable, onLine: (line: string) => void): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (partial + chunk).split(/\r?\n/);
    partial = lines.pop() ?? '';
    if (partial.length > MAX_PENDING_CHARS) {
      lines.push(partial);
      partial = '';
    }
    for (const line of lines) if (line.trim() !== '') onLine(line);
  });
  stream.on('end', () => {
    if (partial.trim() !== '') onLine(partial);
  });
}
