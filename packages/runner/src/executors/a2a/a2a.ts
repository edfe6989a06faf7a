/**
 * Executor kind `a2a`: an Agent2Agent agent as a step executor, spoken to with `@a2a-js/sdk`
 * (A2A v1.0; agents still on v0.3 through the SDK's compatibility layer).
 *
 * - Registry entry: `{ "kind": "a2a", "url", "headers"?, "allowedOrigins"?, "description"?,
 *   "timeoutSeconds"?, "tokenAudience"?, "tokenScopes"? }`. `url` is the agent's base URL; `url`
 *   and header values expand `${VAR}` like `http` entries, and header values, substituted values
 *   and URL credentials and query values are secrets (see `redact.ts`). `allowedOrigins`: exact
 *   origins besides the URL's own that the card's interface URLs may name. `tokenAudience` /
 *   `tokenScopes`: see `token-binding.ts`.
 * - Targets (`target-policy.ts`), for every request (card, message, stream, polls, cancel):
 *   redirects are never followed (a 3xx fails the attempt, not retryable); a request goes only to
 *   the URL's origin or one of `allowedOrigins`; connections go only to public addresses, unless
 *   the entry's URL (or one of `allowedOrigins`) literally names a non-public one (an IP literal,
 *   `localhost`): then that range is allowed too. Hostnames are checked on every address they
 *   resolve to, at connect time. A refusal fails the attempt, not retryable, before anything is
 *   sent.
 * - Discovery: the agent card is read from `<url>/.well-known/agent-card.json` (the URL's path
 *   kept, a trailing `/` dropped, its query kept) through the SDK's card resolver, within
 *   `CARD_TIMEOUT_MS` (`a2a-transport.ts`). The card is cached per executor and fetched again after a call fails to
 *   reach the agent (connection refused or reset, HTTP 5xx) or the fetch itself failed. The card
 *   picks the transport: its JSON-RPC or HTTP+JSON interface (gRPC is not supported). Its
 *   interface URL must pass the target rules above; when it has another origin (one of
 *   `allowedOrigins`), it does not receive the headers below.
 * - Headers, on every request to the agent (the card fetch included): the entry's `headers`, plus
 *   the call's downstream token as `Authorization: Bearer` unless the entry sets `Authorization`
 *   itself (`downstreamAuthorization`), plus `user-agent: switchyard/<version>`. The SDK's own
 *   protocol headers (`content-type`, `accept`, `A2A-Version`) cannot be overridden. Requests go
 *   through undici's fetch on one Agent per registry without timers of its own: only the call's
 *   signal bounds a call (the card fetch has its own limit).
 * - Message (one per attempt, role user), from the step's evaluated `config` (`call.arguments`):
 *   when `config.text` is a string it becomes a text part, and the other properties, if any, one
 *   data part (`{ ...config }` without `text`); otherwise the whole `config` is one data part. The
 *   step `input` is not sent: a step that wants it references it in its config through CEL (e.g.
 *   `{ "text": { "$cel": "input.summary" } }`). `messageId` is derived from (run id, node id,
 *   iteration path, attempt, executor key), so it is the same when the same attempt is sent again;
 *   no `contextId` is sent (every attempt starts a new conversation). Message metadata:
 *   `{ "io.switchyard/run-id", "io.switchyard/node-id", "io.switchyard/iteration-path",
 *   "io.switchyard/attempt" }`. `historyLength: 0`: the agent need not echo the history back.
 * - Waiting: through the SDK's streaming call when the card advertises streaming, else its blocking
 *   `SendMessage`. A task is followed until it settles: `completed`, `failed`, `rejected`,
 *   `canceled`, or the interrupted states `input-required` and `auth-required`. When the answer
 *   ends with the task still `submitted` or `working` (a non-streaming agent answering at once, or a
 *   stream that broke off), the task is polled with `GetTask`, every {@link POLL_FIRST_MS} ms at
 *   first, doubling up to every {@link POLL_MAX_MS} ms, until it settles.
 * - Output snapshot (completed task, or a direct message reply, which counts as completed):
 *   `{ taskId, contextId, state: "completed", artifacts: [{ name?, parts }], message: { parts } |
 *   null, text, data, agent: { name, url } }`: `taskId`/`contextId` null for a direct reply;
 *   `message` the task's final status message or the reply; each part as plain JSON
 *   (`{ kind: "text", text }`, `{ kind: "data", data }`, `{ kind: "file", uri | bytes (base64),
 *   mediaType?, name? }`); `text` every text part of the artifacts, then of `message`, joined with
 *   `\n`; `data` the first data part's value (artifacts first) or null; `agent.url` the entry's
 *   URL without credentials or query.
 * - Answer size: every answer is read through a counted body (`boundedFetch`, `answer-limit.ts`):
 *   a JSON answer, or one event of a streamed (SSE) answer, over `answerReadLimit(maxOutputBytes)`
 *   (`SWITCHYARD_MAX_OUTPUT_BYTES` plus a quarter, at least 64 KiB) stops the reading (the
 *   connection is closed) and fails the attempt, not retryable: `A2A agent answer exceeds
 *   SWITCHYARD_MAX_OUTPUT_BYTES (<max> bytes): read stopped at <n> bytes`. The artifact chunks of
 *   a stream, which add up, are bounded the same way in total (measured on the parsed parts).
 * - Failures (all ExecutorError; messages name the agent as `A2A agent <origin><path>`, never the
 *   query or credentials; the agent's status message text is quoted; HTTP error bodies and
 *   JSON-RPC error messages are quoted only when they came from the URL's own origin, else only
 *   the status or code is named):
 *   - a redirect, a refused origin or address (see "Targets"): not retryable;
 *   - task `failed`: retryable; `rejected`, `canceled` (by the agent): not retryable;
 *   - `input-required` / `auth-required`: not retryable, message naming the state and the agent's
 *     question. The task is left open at the agent: answering an agent (a HITL requirement for
 *     these states) is future work;
 *   - connection refused or reset, HTTP 408, 429 and 5xx, a JSON-RPC internal error (-32603), and any
 *     failure to fetch the card: retryable; other JSON-RPC errors (invalid params, unsupported
 *     operation, ...) and other HTTP statuses: not retryable; a card without a usable interface:
 *     not retryable;
 *   - the call's signal (run cancel, run or step timeout, shutdown): the request is aborted and,
 *     when a task id is known and the task has not settled, `CancelTask` is sent best-effort
 *     (waited for at most {@link CANCEL_TIMEOUT_MS} ms, failures only logged); then `cancelled`
 *     (not retryable) or `<subject> timed out after N s` (retryable), as `abort.ts` says.
 *   Everything leaving `invoke` (output, errors) and every log record is redacted with the entry's
 *   secrets.
 * - Catalogue: `describe` fetches (or reuses) the card within {@link DESCRIBE_TIMEOUT_MS}: `agent:
 *   { name, description, version?, skills: [{ id, name, description, tags? }], url }`; an
 *   unreachable card gives `available: false` and the redacted reason.
 *
 * Modules: this one holds the entry, the kind, the executor (attempt, polling, failures,
 * cancellation) and the catalogue; `a2a-message.ts` what is sent to and read from an agent
 * (message, task states, output snapshot, card summary); `a2a-transport.ts` how the agent is
 * reached (card URL and cache, headers, fetch, SDK client, error classification).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import Type, { type Static } from 'typebox';
import { TaskState, type AgentCard, type Part } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2A_ERROR_CODE, isRestError } from '@a2a-js/sdk/errors';
import { jsonByteLength } from '@switchyard/domain';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../../output-limit.ts';
import { abortedError, formatSeconds } from '../shared/abort.ts';
import { AnswerTooLargeError, AnswerWatch, answerReadLimit, boundedFetch } from '../shared/answer-limit.ts';
import { TaskProgress, messageRequest, outputOf, stateName, stringOf, summaryOf, textOf, type A2aOutput, type AgentSummary, type MessageRequest } from './a2a-message.ts';
import {
  AgentCardCache,
  agentFetch,
  agentSubject,
  baseUrlOf,
  clientFactory,
  connectionProblem,
  isConnectionError,
  jsonRpcErrorOf,
  requestHeaders,
  retryableStatus,
  type Observed,
} from './a2a-transport.ts';
import { errorMessage } from '../shared/error-message.ts';
import { bodyExcerpt } from '../shared/body-excerpt.ts';
import { resolveEndpoint, type ResolvedEndpoint } from '../shared/endpoint.ts';
import { SharedAgent } from '../shared/http-agent.ts';
import { DESCRIBE_TIMEOUT_MS, HeadersSchema, defineKind, entrySchema, urlSchema, type EntryScope } from '../kind.ts';
import type { ExecutorLogger } from '../shared/logger.ts';
import { Redactor, redactedInvoke, redactingLogger } from '../shared/redact.ts';
import { TargetPolicy, targetRefusalOf } from '../shared/target-policy.ts';
import { TokenFields, tokenBinding, type TokenBinding } from '../shared/token-binding.ts';
import { ExecutorError } from '../types.ts';
import type { Executor, ExecutorCall, ExecutorDetails } from '../types.ts';

/** Longest wait for the best-effort `CancelTask` after a call's signal aborted, milliseconds. */
export const CANCEL_TIMEOUT_MS = 2_000;

/** First wait before polling a task that has not settled, milliseconds; doubles each time. */
export const POLL_FIRST_MS = 100;

/** Longest wait between two polls of a task, milliseconds. */
export const POLL_MAX_MS = 2_000;

/** Most origins an `a2a` entry's `allowedOrigins` may list. */
export const MAX_ALLOWED_ORIGINS = 20;

/**
 * Registry entry `{ "kind": "a2a", "url", "headers"?, "allowedOrigins"?, "description"?,
 * "timeoutSeconds"?, "tokenAudience"?, "tokenScopes"? }`.
 */
export const A2aEntry = entrySchema('a2a', {
  url: urlSchema("The agent's base URL, http: or https:; its card is <url>/.well-known/agent-card.json; ${VAR} expansion; credentials and query values are secrets"),
  headers: Type.Optional(HeadersSchema),
  allowedOrigins: Type.Optional(
    Type.Array(Type.String({ maxLength: 2000 }), {
      maxItems: MAX_ALLOWED_ORIGINS,
      description: "Exact origins (scheme://host[:port]) besides the url's own that the agent card's interface URLs may name; default none",
    }),
  ),
  ...TokenFields,
});

/** Executor kind `a2a`: one entry of the registry's `executors`. */
export type A2aExecutorConfig = Static<typeof A2aEntry>;

/** What an `a2a` entry resolves to (plus `kind` and `timeoutMs`): its endpoint, `url` being the agent's base URL. */
export interface ResolvedA2aEntry extends ResolvedEndpoint {
  /** Origins besides `url`'s that requests may go to (see `target-policy.ts`); default none. */
  allowedOrigins?: string[];
  /** What its downstream tokens are bound to (`token-binding.ts`); default: `aud` the URL's origin, no scopes. */
  token?: TokenBinding;
}

/**
 * Checks an entry's `allowedOrigins`: each must be an `http:`/`https:` origin written exactly as
 * its URL's origin serializes (lower-case, no path, no trailing `/`, no default port). Reports each
 * bad one on `scope` at `["allowedOrigins", i]`; the list when all are fine, else undefined.
 */
export function checkAllowedOrigins(origins: readonly string[] | undefined, scope: EntryScope): string[] | undefined {
  let ok = true;
  origins?.forEach((origin, i) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      scope.problem(['allowedOrigins', i], 'must be an http: or https: origin, e.g. https://rpc.example.org');
      ok = false;
    } else if (parsed.origin !== origin) {
      scope.problem(['allowedOrigins', i], `must be an exact origin: write ${parsed.origin}`);
      ok = false;
    }
  });
  return ok ? [...(origins ?? [])] : undefined;
}

/** The `a2a` kind (see `kind.ts`): one undici Agent and one card cache per key, per registry. */
export const a2aKind = defineKind({
  kind: 'a2a',
  schema: A2aEntry,
  a2aPool: true,
  resolve: (entry, scope): ResolvedA2aEntry | undefined => {
    const endpoint = resolveEndpoint(entry, scope);
    const allowedOrigins = checkAllowedOrigins(entry.allowedOrigins, scope);
    if (endpoint === undefined || allowedOrigins === undefined) return undefined;
    return { ...endpoint, allowedOrigins, token: tokenBinding(entry, endpoint.url.origin) };
  },
  open: ({ logger, resolver, maxOutputBytes, connectionsPerOrigin }) => {
    // Per key: its target rules, an Agent whose connections resolve through them, and its card cache.
    const transports = new Map<string, A2aTransport>();
    const transportOf = (key: string, entry: ResolvedA2aEntry): A2aTransport => {
      let transport = transports.get(key);
      if (transport === undefined) {
        const policy = new TargetPolicy({ entryUrl: entry.url, allowedOrigins: entry.allowedOrigins ?? [], ...(resolver === undefined ? {} : { resolver }) });
        const agent = new SharedAgent({ lookup: policy.lookup, connections: connectionsPerOrigin });
        transports.set(key, (transport = { policy, agent, cards: new AgentCardCache(entry.url, agent, policy) }));
      }
      return transport;
    };
    return {
      create: (key, entry) => createA2aExecutor(key, entry, transportOf(key, entry), logger, maxOutputBytes),
      describe: (key, entry) => describeA2aEntry(entry, transportOf(key, entry).cards),
      close: async () => {
        await Promise.all([...transports.values()].map((transport) => transport.agent.close()));
      },
    };
  },
});

/**
 * What the catalogue shows of an `a2a` entry: the card's name, description, version and skills
 * (fetched or cached, within `timeoutMs`), with the entry's secrets redacted; `available: false`
 * and the redacted reason when the card cannot be had. Never rejects.
 */
export async function describeA2aEntry(entry: ResolvedA2aEntry, cards: AgentCardCache, timeoutMs = DESCRIBE_TIMEOUT_MS): Promise<ExecutorDetails> {
  const redactor = new Redactor(entry.secrets);
  const url = redactor.text(baseUrlOf(entry.url));
  const fallback = entry.description ?? `A2A agent at ${url}`;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const card = await cards.get(requestHeaders(entry, undefined), signal);
    const agent = redactor.value(summaryOf(card, url)) as AgentSummary;
    return { description: entry.description ?? (agent.description || agent.name || fallback), available: true, agent };
  } catch (error) {
    const reason = signal.aborted ? `${agentSubject(entry.url)}: no agent card within ${formatSeconds(timeoutMs)} s` : errorMessage(error);
    return { description: fallback, available: false, error: redactor.text(reason) };
  }
}

/** How one `a2a` executor reaches its agent: its target rules, its undici Agent (connecting through `policy.lookup`) and its card cache. */
export interface A2aTransport {
  policy: TargetPolicy;
  agent: SharedAgent;
  cards: AgentCardCache;
}

/**
 * Creates the `a2a` executor `key` (see the module comment); nothing connects until invoked.
 * `maxOutputBytes`: the output limit, bytes, whose read limit bounds every answer (see "Answer size").
 */
export function createA2aExecutor(
  key: string,
  entry: ResolvedA2aEntry & { timeoutMs: number },
  transport: A2aTransport,
  registryLogger: ExecutorLogger,
  maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES,
): Executor {
  const { policy, agent, cards } = transport;
  const subject = agentSubject(entry.url);
  const url = baseUrlOf(entry.url);
  const redactor = new Redactor(entry.secrets);
  const logger = redactingLogger(registryLogger, redactor);

  async function attempt(call: ExecutorCall): Promise<A2aOutput> {
    const headers = requestHeaders(entry, call.downstreamToken);
    const card = await cardFor(headers, call.signal);
    const observed: Observed = { status: undefined };
    const oversized = new AnswerWatch();
    const fetchImpl = boundedFetch(agentFetch(agent, headers, observed, undefined, policy), { maxOutputBytes, what: 'A2A agent answer', guard: () => oversized });
    const client = await clientFor(card, fetchImpl);
    const progress = new TaskProgress();
    // Aborted once the answer is in, so that a stream left unread is closed.
    const finished = new AbortController();
    logger.debug({ executor: key, url, ...call.context, attempt: call.attempt }, 'calling A2A agent');
    try {
      await exchange(client, messageRequest(key, call), AbortSignal.any([call.signal, finished.signal]), progress);
    } catch (error) {
      // Whatever the SDK made of the body that errored: the answer was too large.
      if (oversized.error !== undefined) throw oversized.error;
      if (!call.signal.aborted) throw failure(error, observed);
      if (progress.taskId !== undefined && !progress.settled) await cancelQuietly(client, progress.taskId, call);
      throw abortedError(call.signal, subject);
    } finally {
      finished.abort();
    }
    return settle(progress, card);
  }

  /** The card, or why not (an abort of the call as `abortedError`). */
  async function cardFor(headers: Record<string, string>, signal: AbortSignal): Promise<AgentCard> {
    try {
      return await cards.get(headers, signal);
    } catch (error) {
      throw signal.aborted ? abortedError(signal, subject) : error;
    }
  }

  /** A client on the card's preferred interface this SDK speaks; not retryable when there is none. */
  async function clientFor(card: AgentCard, fetchImpl: typeof fetch): Promise<Client> {
    try {
      return await clientFactory(fetchImpl).createFromAgentCard(card);
    } catch (error) {
      throw new ExecutorError(`${subject}: its agent card offers no interface this client speaks (JSON-RPC or HTTP+JSON): ${errorMessage(error)}`, { retryable: false, cause: error });
    }
  }

  /** Sends the message and follows the answer until the task settles (polling when the answer ends before). */
  async function exchange(client: Client, request: MessageRequest, signal: AbortSignal, progress: TaskProgress): Promise<void> {
    // Artifact chunks add up: their total is bounded as one answer is (each event is by the fetch).
    let artifactBytes = 0;
    for await (const event of client.sendMessageStream(request, { signal })) {
      if (event.payload?.$case === 'artifactUpdate') {
        artifactBytes += partsBytes(event.payload.value.artifact?.parts ?? []);
        if (artifactBytes > answerReadLimit(maxOutputBytes)) throw new AnswerTooLargeError('A2A agent answer (artifacts of its stream)', maxOutputBytes, artifactBytes, { agent: url });
      }
      progress.apply(event);
      if (progress.settled) return;
    }
    const taskId = progress.taskId;
    if (taskId === undefined) throw new ExecutorError(`${subject} ended its answer without a task or a message`, { retryable: true });
    for (let delayMs = POLL_FIRST_MS; !progress.settled; delayMs = Math.min(delayMs * 2, POLL_MAX_MS)) {
      await sleep(delayMs, undefined, { signal });
      progress.replace(await client.getTask({ tenant: '', id: taskId, historyLength: 0 }, { signal }));
    }
  }

  /** The output of a settled task or a reply, or the ExecutorError its state stands for. */
  function settle(progress: TaskProgress, card: AgentCard): A2aOutput {
    const agentInfo = { name: stringOf(card.name), url };
    if (progress.reply !== undefined) return outputOf(undefined, progress.reply, agentInfo);
    const task = progress.task!;
    const state = task.status?.state;
    if (state === TaskState.TASK_STATE_COMPLETED) return outputOf(task, task.status?.message, agentInfo);
    const said = textOf(task.status?.message?.parts ?? []);
    const details = { taskId: task.id, state: stateName(state), agent: url };
    const quoted = said === '' ? '' : `: ${said}`;
    switch (state) {
      case TaskState.TASK_STATE_FAILED:
        throw new ExecutorError(`${subject} failed the task${quoted}`, { retryable: true, details });
      case TaskState.TASK_STATE_REJECTED:
        throw new ExecutorError(`${subject} rejected the task${quoted}`, { retryable: false, details });
      case TaskState.TASK_STATE_CANCELED:
        throw new ExecutorError(`${subject} canceled the task${quoted}`, { retryable: false, details });
      default: {
        // input-required / auth-required: a step cannot answer an agent yet (HITL for these is future work).
        const question = said === '' ? 'without saying what' : `asking: ${said}`;
        throw new ExecutorError(`${subject} stopped in task state ${stateName(state)}, ${question}; a step cannot answer an agent, so the attempt fails`, { retryable: false, details });
      }
    }
  }

  /**
   * Anything thrown while talking to the agent (not an abort of the call), as an ExecutorError (see
   * the module comment, "Failures"). A failure to reach the agent drops its cached card: it may have
   * moved, or restarted with another.
   */
  function failure(error: unknown, observed: Observed): ExecutorError {
    if (error instanceof ExecutorError) return error;
    const refusal = targetRefusalOf(error);
    if (refusal !== undefined) {
      // The card may have changed by the next attempt: fetch it again then.
      cards.forget();
      return new ExecutorError(`${subject}: ${refusal.message}`, { retryable: false, details: { agent: url } });
    }
    // What another origin (one of allowedOrigins) answered is not quoted, and not kept as the cause.
    const quotable = observed.origin === undefined || policy.isEntryOrigin(observed.origin);
    const quote = (text: string): string => (quotable ? `: ${bodyExcerpt(text)}` : ' (the answer of another origin is not quoted)');
    const cause = quotable ? error : undefined;
    const rpc = jsonRpcErrorOf(error);
    if (rpc !== undefined) {
      const retryable = rpc.envelopeCode === A2A_ERROR_CODE.INTERNAL_ERROR;
      return new ExecutorError(`${subject} answered JSON-RPC error ${rpc.envelopeCode}${quote(rpc.message)}`, { retryable, cause, details: { agent: url, code: rpc.envelopeCode } });
    }
    if (isConnectionError(error)) {
      cards.forget();
      return new ExecutorError(`${subject} cannot be reached: ${connectionProblem(error)}`, { retryable: true, cause: error, details: { agent: url } });
    }
    const status = isRestError(error) ? error.statusCode : observed.status;
    if (status !== undefined && (status < 200 || status > 299)) {
      const retryable = retryableStatus(status);
      if (retryable) cards.forget();
      return new ExecutorError(`${subject} answered HTTP ${status}${quote(errorMessage(error))}`, { retryable, cause, details: { agent: url, status } });
    }
    return new ExecutorError(`${subject} sent an answer this client cannot use${quote(errorMessage(error))}`, { retryable: false, cause, details: { agent: url } });
  }

  /** Asks the agent to cancel `taskId`, waiting at most {@link CANCEL_TIMEOUT_MS}; failures are logged only. */
  async function cancelQuietly(client: Client, taskId: string, call: ExecutorCall): Promise<void> {
    const log = { executor: key, url, ...call.context, attempt: call.attempt, taskId };
    try {
      await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }, { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) });
      logger.debug(log, 'A2A task cancelled');
    } catch (error) {
      logger.warn({ ...log, err: error }, 'cancelling the A2A task failed');
    }
  }

  return {
    kind: 'a2a',
    key,
    target: entry.url.origin,
    timeoutMs: entry.timeoutMs,
    token: entry.token ?? tokenBinding({}, entry.url.origin),
    invoke: redactedInvoke(redactor, logger, 'A2A call failed', { executor: key, url }, attempt),
  };
}

/**
 * About the bytes `parts` add to an output, measured on parts already parsed (so in time linear in
 * what was read): text length, a data part's JSON size, raw bytes as base64, a URL's length.
 */
function partsBytes(parts: readonly Part[]): number {
  let bytes = 0;
  for (const part of parts) {
    const content = part.content;
    switch (content?.$case) {
      case 'text':
      case 'url':
        bytes += content.value.length;
        break;
      case 'data':
        bytes += jsonByteLength(content.value ?? null);
        break;
      case 'raw':
        bytes += Math.ceil(content.value.byteLength / 3) * 4;
        break;
      default:
        break;
    }
  }
  return bytes;
}
