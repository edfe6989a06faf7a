/**
 * Executor kind `http`: calls a webhook with undici.
 *
 * - Registry entry: `{ "kind": "http", "url", "method"? (POST, PUT, PATCH or DELETE; default
 *   POST), "headers"?, "timeoutSeconds"?, "tokenAudience"?, "tokenScopes"? }` (the last two bind
 *   the downstream token, see `token-binding.ts`). `url` and header values expand `${env:NAME}` / `${VAR}`; header values,
 *   substituted values and URL credentials and query values are secrets (see `redact.ts`).
 * - Request: the step's evaluated `config` as the JSON body (`content-type: application/json`),
 *   plus the entry's headers (which may override `accept` and `content-type`), plus the call's
 *   downstream token as `Authorization: Bearer` unless the entry sets `Authorization` itself, plus
 *   the attempt's W3C `traceparent`/`tracestate` when tracing is on (`trace-headers.ts`).
 * - Output snapshot: a JSON response's value (`application/json` or `*+json`), else `{ status,
 *   contentType, text, truncated }` with at most {@link MAX_TEXT_BYTES} of the body as UTF-8 text.
 * - Answer size: a JSON body is read with a byte counter and reading stops once it passed
 *   `answerReadLimit(maxOutputBytes)` (`answer-limit.ts`: `SWITCHYARD_MAX_OUTPUT_BYTES` plus a
 *   quarter, at least 64 KiB); the response is destroyed (its socket closed) and the attempt fails
 *   unparsed with `webhook answer exceeds SWITCHYARD_MAX_OUTPUT_BYTES (<max> bytes): read stopped
 *   at <n> bytes` (not retryable).
 * - Failures (all ExecutorError, message `HTTP <METHOD> <origin><path> ...`, never the query):
 *   - a 3xx: redirects are never followed (`target-policy.ts`): `answered HTTP <status>, a
 *     redirect; ...`, `details: { status }`, no body quoted; not retryable;
 *   - a status outside 2xx: `answered <status>: <body excerpt>`, `details: { status, body }`;
 *     retryable for 408, 429 and 5xx, not for any other status. On
 *     429 and 503 a `Retry-After` (seconds or an HTTP date; at most a day) becomes `retryAfterMs`;
 *   - connection errors (refused, reset, DNS): retryable;
 *   - the call's signal: `cancelled` (not retryable) or `timed out after N s` (retryable); the
 *     request is aborted either way;
 *   - a 2xx JSON response that does not parse, or is over the read limit (above): not retryable.
 * - Time limit: only the call's signal (the step runner's per-call limit); the agent's own header
 *   and body timers are off, so a step may wait as long as its limit says.
 * - One undici Agent per registry (keep-alive connections shared by every `http` executor), loaded
 *   and created on the first call, destroyed when the registry closes.
 */
import type { Dispatcher } from 'undici';
import Type, { type Static } from 'typebox';
import { downstreamAuthorization } from '../../downstream-token.ts';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../../output-limit.ts';
import { abortable, abortedError } from '../shared/abort.ts';
import { AnswerTooLargeError, answerReadLimit, readBounded } from '../shared/answer-limit.ts';
import { errorMessage } from '../shared/error-message.ts';
import { HeadersSchema, defineKind, entrySchema, urlSchema } from '../kind.ts';
import { bodyExcerpt } from '../shared/body-excerpt.ts';
import { resolveEndpoint, type ResolvedEndpoint } from '../shared/endpoint.ts';
import { lowerCaseKeys } from '../shared/headers.ts';
import { SharedAgent, USER_AGENT } from '../shared/http-agent.ts';
import type { ExecutorLogger } from '../shared/logger.ts';
import { Redactor, redactedInvoke, redactingLogger } from '../shared/redact.ts';
import { isRedirect, redirectRefusal } from '../shared/target-policy.ts';
import { TokenFields, tokenBinding, type TokenBinding } from '../shared/token-binding.ts';
import { traceHeaders } from '../shared/trace-headers.ts';
import { ExecutorError } from '../types.ts';
import type { Executor, ExecutorCall } from '../types.ts';

/** Methods an `http` entry may use: each sends the step's `config` as its JSON body. */
export const HTTP_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Most bytes of a non-JSON response body kept as `text` (64 KiB); the rest is not read. */
export const MAX_TEXT_BYTES = 64 * 1024;

/** Most bytes of a failed response's body read for its excerpt. */
const EXCERPT_BYTES = 4 * 1024;

/** Longest `Retry-After` honoured (a day; longer ones are cut to this). */
const MAX_RETRY_AFTER_MS = 86_400_000;

/** Registry entry `{ "kind": "http", "url", "method"?, "headers"?, "timeoutSeconds"?, "tokenAudience"?, "tokenScopes"? }`. */
export const HttpEntry = entrySchema('http', {
  url: urlSchema('The webhook, http: or https:; ${VAR} expansion; credentials and query values are secrets'),
  method: Type.Optional(Type.Enum([...HTTP_METHODS], { description: 'Default POST; the body is always the step config as JSON' })),
  headers: Type.Optional(HeadersSchema),
  ...TokenFields,
});

/** Executor kind `http`: one entry of the registry's `executors`. */
export type HttpExecutorConfig = Static<typeof HttpEntry>;

/** What an `http` entry resolves to (plus `kind` and `timeoutMs`). */
export interface ResolvedHttpEntry extends ResolvedEndpoint {
  method: (typeof HTTP_METHODS)[number];
  /** What its downstream tokens are bound to (`token-binding.ts`); default: `aud` the URL's origin, no scopes. */
  token?: TokenBinding;
}

/**
 * What the catalogue shows of an `http` entry: the method and the URL's origin only (its path and
 * query may carry tokens), with the entry's secrets redacted even from that (a host from a `${VAR}`).
 */
export function describeHttpEntry(entry: ResolvedHttpEntry): { description: string; available: true; method: string; origin: string } {
  const redactor = new Redactor(entry.secrets);
  const origin = redactor.text(entry.url.origin);
  return {
    description: entry.description ?? `Webhook: HTTP ${entry.method} to ${origin}`,
    available: true,
    method: entry.method,
    origin,
  };
}

/** The `http` kind (see `kind.ts`): one undici Agent per registry. */
export const httpKind = defineKind({
  kind: 'http',
  schema: HttpEntry,
  // A webhook is no A2A agent: an a2aPool may not list it (definition checks answer 400 at save).
  a2aPool: false,
  resolve: (entry, scope): ResolvedHttpEntry | undefined => {
    const endpoint = resolveEndpoint(entry, scope);
    return endpoint === undefined ? undefined : { ...endpoint, method: entry.method ?? 'POST', token: tokenBinding(entry, endpoint.url.origin) };
  },
  open: ({ logger, maxOutputBytes, connectionsPerOrigin }) => {
    const agent = new SharedAgent({ connections: connectionsPerOrigin });
    return {
      create: (key, entry) => createHttpExecutor(key, entry, agent, logger, maxOutputBytes),
      describe: async (_key, entry) => describeHttpEntry(entry),
      close: () => agent.close(),
    };
  },
});

/**
 * Creates the `http` executor `key` (see the module comment); nothing connects until invoked.
 * `maxOutputBytes`: the output limit, bytes, whose read limit bounds a JSON answer.
 */
export function createHttpExecutor(
  key: string,
  entry: ResolvedHttpEntry & { timeoutMs: number },
  agent: SharedAgent,
  registryLogger: ExecutorLogger,
  maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES,
): Executor {
  const { url, method } = entry;
  const subject = `HTTP ${method} ${url.origin}${url.pathname}`;
  const redactor = new Redactor(entry.secrets);
  const logger = redactingLogger(registryLogger, redactor);
  const details = { method, url: `${url.origin}${url.pathname}` };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/*;q=0.9, */*;q=0.8', 'user-agent': USER_AGENT, ...lowerCaseKeys(entry.headers) };

  async function attempt(call: ExecutorCall): Promise<unknown> {
    const dispatcher = await abortable(agent.get(), call.signal);
    logger.debug({ executor: key, method, url: details.url, ...call.context, attempt: call.attempt }, 'calling webhook');
    let response: Dispatcher.ResponseData;
    try {
      response = await dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers: { ...headers, ...traceHeaders(), ...downstreamAuthorization(call.downstreamToken, headers) },
        body: JSON.stringify(call.arguments),
        signal: call.signal,
      });
    } catch (error) {
      throw failure(error, call);
    }
    try {
      return await answer(response);
    } catch (error) {
      response.body.destroy();
      throw failure(error, call);
    }
  }

  /** The output of a response, or the ExecutorError it stands for. */
  async function answer(response: Dispatcher.ResponseData): Promise<unknown> {
    const status = response.statusCode;
    const contentType = headerValue(response.headers['content-type']);
    if (isRedirect(status)) {
      // Its body is not quoted: discarded unread (up to undici's dump limit, then the connection closes).
      await response.body.dump().catch(() => undefined);
      throw new ExecutorError(`${subject} ${redirectRefusal(status)}`, { retryable: false, details: { ...details, status } });
    }
    if (status < 200 || status > 299) {
      const { text } = await readText(response.body, EXCERPT_BYTES);
      const excerpt = bodyExcerpt(text);
      const retryable = status === 408 || status === 429 || status >= 500;
      const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(headerValue(response.headers['retry-after'])) : undefined;
      throw new ExecutorError(`${subject} answered ${status}${excerpt === '' ? '' : `: ${excerpt}`}`, {
        retryable,
        details: { ...details, status, body: excerpt },
        retryAfterMs,
      });
    }
    if (contentType !== null && isJson(contentType)) {
      const read = await readBounded(response.body, answerReadLimit(maxOutputBytes));
      // Nothing of an answer over the limit is decoded or parsed.
      if (!read.complete) throw new AnswerTooLargeError('webhook answer', maxOutputBytes, read.bytesRead, { ...details, status });
      const text = new TextDecoder().decode(read.bytes);
      if (text.trim() !== '') {
        try {
          return JSON.parse(text) as unknown;
        } catch (error) {
          throw new ExecutorError(`${subject} answered ${status} with invalid JSON (${errorMessage(error)}): ${bodyExcerpt(text)}`, {
            retryable: false,
            details: { ...details, status, body: bodyExcerpt(text) },
          });
        }
      }
    }
    const { text, complete } = await readText(response.body, MAX_TEXT_BYTES);
    return { status, contentType, text, truncated: !complete };
  }

  /** Anything thrown while calling, as an ExecutorError. */
  function failure(error: unknown, call: ExecutorCall): ExecutorError {
    if (call.signal.aborted) return abortedError(call.signal, subject);
    if (error instanceof ExecutorError) return error;
    // Connection refused or reset, DNS, TLS, a broken body: another attempt may get through.
    const code = (error as { code?: unknown }).code;
    const text = typeof code === 'string' && !errorMessage(error).includes(code) ? `${code}: ${errorMessage(error)}` : errorMessage(error);
    return new ExecutorError(`${subject} failed: ${text}`, { retryable: true, cause: error, details });
  }

  return {
    kind: 'http',
    key,
    target: url.origin,
    timeoutMs: entry.timeoutMs,
    token: entry.token ?? tokenBinding({}, url.origin),
    invoke: redactedInvoke(redactor, logger, 'webhook call failed', { executor: key, method, url: details.url }, attempt),
  };
}

/**
 * Reads at most `limit` bytes of `body` as UTF-8 text; `complete` is false when there was more
 * (the rest is not read; the body is destroyed).
 */
async function readText(body: Dispatcher.ResponseData['body'], limit: number): Promise<{ text: string; complete: boolean }> {
  const { bytes, complete } = await readBounded(body as AsyncIterable<Buffer>, limit);
  return { text: new TextDecoder().decode(bytes), complete };
}

/** `Retry-After` (delay seconds or an HTTP date) in milliseconds from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** `application/json`, `application/problem+json`, ... (parameters such as `charset` ignored). */
function isJson(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}
