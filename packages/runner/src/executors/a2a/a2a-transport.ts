/**
 * How the `a2a` executor reaches an agent (see `a2a.ts` for the contract): the agent card's URL and
 * its per-executor cache, the headers of every request, the SDK's `fetch` on the registry's undici
 * Agent, the SDK's card resolver and client factory, and the classification of what went wrong on
 * the way (JSON-RPC errors, retryable HTTP statuses, connection errors) together with how messages
 * name the agent without its credentials or query.
 */
import type { AgentCard } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { isJsonRpcError, type JsonRpcA2AError } from '@a2a-js/sdk/errors';
import { downstreamAuthorization } from '../../downstream-token.ts';
import { abortable, formatSeconds } from '../shared/abort.ts';
import { agentCardFetch } from '../shared/answer-limit.ts';
import { errorMessage } from '../shared/error-message.ts';
import { bodyExcerpt } from '../shared/body-excerpt.ts';
import { lowerCaseKeys } from '../shared/headers.ts';
import { traceHeaders } from '../shared/trace-headers.ts';
import { SharedAgent, USER_AGENT } from '../shared/http-agent.ts';
import { TargetRefusedError, isRedirect, redirectRefusal, targetRefusalOf, type TargetPolicy } from '../shared/target-policy.ts';
import { ExecutorError } from '../types.ts';

/** Longest wait for an agent card (connect included), milliseconds. */
export const CARD_TIMEOUT_MS = 10_000;

/** Where the card lies below the agent's base URL. */
const CARD_PATH = '/.well-known/agent-card.json';

/** `A2A agent <origin><path>`: how messages name the agent at `url` (never its credentials or query). */
export function agentSubject(url: URL): string {
  return `A2A agent ${baseUrlOf(url)}`;
}

/** The card's URL for the agent at `url`: `<url>/.well-known/agent-card.json`, the query kept. */
export function cardUrlOf(url: URL): URL {
  const card = new URL(url.href);
  card.pathname = `${url.pathname.replace(/\/+$/, '')}${CARD_PATH}`;
  card.hash = '';
  return card;
}

/** The agent's card, fetched once and kept until {@link AgentCardCache.forget} (see the module comment of `a2a.ts`, "Discovery"). */
export class AgentCardCache {
  readonly #cardUrl: URL;
  readonly #subject: string;
  readonly #agent: SharedAgent;
  readonly #policy: TargetPolicy | undefined;
  #card: Promise<AgentCard> | undefined;

  /** `policy`: the entry's target rules, applied to the card fetch (see {@link agentFetch}). */
  constructor(url: URL, agent: SharedAgent, policy?: TargetPolicy) {
    this.#cardUrl = cardUrlOf(url);
    this.#subject = agentSubject(url);
    this.#agent = agent;
    this.#policy = policy;
  }

  /**
   * The card. The first caller's `headers` fetch it (within {@link CARD_TIMEOUT_MS}); callers at the
   * same time wait for the same fetch, each until its own `signal` aborts (then rejects with
   * `abortedError(signal)`; the fetch goes on for the others). A failed fetch is not kept.
   * @throws ExecutorError `<subject>: cannot fetch its agent card: <reason>`: retryable, except when
   * the target policy refused the request (a redirect, a non-public address; see `target-policy.ts`).
   */
  get(headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<AgentCard> {
    if (this.#card === undefined) {
      const card = this.#fetch(headers);
      this.#card = card;
      card.catch(() => {
        if (this.#card === card) this.#card = undefined;
      });
    }
    return abortable(this.#card, signal);
  }

  /** Drops the cached card: the next call fetches it again. */
  forget(): void {
    this.#card = undefined;
  }

  async #fetch(headers: Readonly<Record<string, string>>): Promise<AgentCard> {
    const observed: Observed = { status: undefined };
    const timeout = AbortSignal.timeout(CARD_TIMEOUT_MS);
    const resolver = cardResolver(agentCardFetch(agentFetch(this.#agent, headers, observed, timeout, this.#policy)));
    try {
      return await resolver.resolve(this.#cardUrl.href, '');
    } catch (error) {
      if (error instanceof ExecutorError) throw error;
      const refusal = targetRefusalOf(error);
      if (refusal !== undefined) throw new ExecutorError(`${this.#subject}: cannot fetch its agent card: ${refusal.message}`, { retryable: false });
      const reason = timeout.aborted ? `no answer within ${formatSeconds(CARD_TIMEOUT_MS)} s` : cardProblem(error, observed);
      throw new ExecutorError(`${this.#subject}: cannot fetch its agent card: ${reason}`, { retryable: true, cause: error });
    }
  }
}

/** The headers of every request for `entry` (see the module comment of `a2a.ts`, "Headers"), lower-case names. */
export function requestHeaders(entry: { headers: Readonly<Record<string, string>> }, downstreamToken: string | undefined): Record<string, string> {
  return { 'user-agent': USER_AGENT, ...lowerCaseKeys(entry.headers), ...downstreamAuthorization(downstreamToken, entry.headers) };
}

/** What a fetch wrapper saw of its latest request: the HTTP status of the answer (undefined before one came) and the origin it was sent to. */
export interface Observed {
  status: number | undefined;
  origin?: string;
}

/**
 * A `fetch` for the SDK: undici's, on `agent`'s Agent (no timers of its own), with `headers` added
 * to each request (the SDK's own headers win), the answer's status and origin noted on `observed`,
 * and `signal` applied to requests the SDK sends without one. Redirects are never followed: a 3xx
 * answer rejects with a {@link TargetRefusedError}. With a `policy` (see `target-policy.ts`), each
 * request must pass {@link TargetPolicy.checkUrl} first (else it rejects with a
 * TargetRefusedError, nothing sent), and `headers` (the entry's, the downstream token) go only to
 * the entry's own origin; the agent's Agent should connect through `policy.lookup`.
 */
export function agentFetch(agent: SharedAgent, headers: Readonly<Record<string, string>>, observed: Observed, signal?: AbortSignal, policy?: TargetPolicy): typeof fetch {
  return async (input, init) => {
    observed.status = undefined;
    const target = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    observed.origin = target.origin;
    policy?.checkUrl(target);
    // The entry's headers and the downstream token are for the agent the entry names: another
    // origin (one of its allowedOrigins) does not get them.
    const merged: Record<string, string> = policy === undefined || policy.isEntryOrigin(target) ? { ...headers } : {};
    // The active attempt's W3C trace context (nothing when tracing is off); the SDK's own headers still win.
    Object.assign(merged, traceHeaders());
    new Headers(init?.headers).forEach((value, name) => (merged[name] = value));
    const dispatcher = await agent.get();
    const { fetch: undiciFetch } = await import('undici');
    // The global fetch's init and undici's differ only in their type declarations.
    const request = { ...init, headers: merged, signal: init?.signal ?? signal, dispatcher, redirect: 'manual' } as unknown as Parameters<typeof undiciFetch>[1];
    const response = await undiciFetch(target, request);
    observed.status = response.status;
    if (isRedirect(response.status)) {
      await response.body?.cancel().catch(() => undefined);
      throw new TargetRefusedError(redirectRefusal(response.status));
    }
    return response as unknown as Response;
  };
}

/** The SDK's card resolver on `fetchImpl` (v0.3 cards understood). */
function cardResolver(fetchImpl: typeof fetch): DefaultAgentCardResolver {
  return new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } });
}

/** The SDK's client factory: JSON-RPC and HTTP+JSON on `fetchImpl`, v0.3 agents through the compat layer. */
export function clientFactory(fetchImpl: typeof fetch): ClientFactory {
  const legacyCompat = { enabled: true };
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
    cardResolver: cardResolver(fetchImpl),
  });
}

/**
 * The JSON-RPC error object the agent answered with (`error`, or the cause of the SDK's stream
 * error), when it has a numeric code; undefined for anything else (e.g. `{ "error": "..." }` bodies
 * of a proxy).
 */
export function jsonRpcErrorOf(error: unknown): JsonRpcA2AError | undefined {
  for (const candidate of [error, (error as { cause?: unknown } | null)?.cause]) {
    if (isJsonRpcError(candidate) && typeof candidate.envelopeCode === 'number') return candidate;
  }
  return undefined;
}

/** Statuses another attempt may get past: 408, 429 and 5xx. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** System (`ECONNREFUSED`, `ENOTFOUND`, ...) and undici (`UND_ERR_SOCKET`, ...) error codes. */
const CONNECTION_CODE = /^(?:E[A-Z]+|UND_ERR_[A-Z_]+)$/;

/** The connection error code of `error` or one of its first causes (fetch wraps them: `TypeError: fetch failed`). */
function connectionCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 3 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODE.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A failure to reach the agent or to read its answer to the end (refused, reset, DNS, TLS, a cut stream). */
export function isConnectionError(error: unknown): boolean {
  return connectionCode(error) !== undefined || (error instanceof TypeError && (error.message === 'fetch failed' || error.message === 'terminated'));
}

/** A connection error for a message: `<code>: <the cause's text>`. */
export function connectionProblem(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause ?? error;
  const text = errorMessage(cause);
  const code = connectionCode(error);
  return code !== undefined && !text.includes(code) ? `${code}: ${text}` : text;
}

/** Why a card fetch failed, for a message: the connection error, else the HTTP status, else the SDK's message (never the card's URL). */
function cardProblem(error: unknown, observed: Observed): string {
  if (isConnectionError(error)) return connectionProblem(error);
  if (observed.status !== undefined && (observed.status < 200 || observed.status > 299)) return `HTTP ${observed.status}`;
  return bodyExcerpt(errorMessage(error));
}

/** `<origin><path>` of `url`: no credentials, query or fragment. */
export function baseUrlOf(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
