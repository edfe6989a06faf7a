/**
 * Executor kind `a2a`: an Agent2Agent agent as a step executor, spoken to with `@a2a-js/sdk`
 * (A2A v1.0; agents still on v0.3 through the SDK's compatibility layer).
 *
 * - Registry entry: `{ "kind": "a2a", "url", "headers"?, "description"?, "timeoutSeconds"? }`.
 *   `url` is the agent's base URL; `url` and header values expand `${VAR}` like `http` entries, and
 *   header values, substituted values and URL credentials and query values are secrets (see
 *   `redact.ts`).
 * - Discovery: the agent card is read from `<url>/.well-known/agent-card.json` (the URL's path
 *   kept, a trailing `/` dropped, its query kept) through the SDK's card resolver, within
 *   {@link CARD_TIMEOUT_MS}. The card is cached per executor and fetched again after a call fails to
 *   reach the agent (connection refused or reset, HTTP 5xx) or the fetch itself failed. The card
 *   picks the transport: its JSON-RPC or HTTP+JSON interface (gRPC is not supported). The card's
 *   interface URLs are trusted: they receive the headers below.
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
 * - Failures (all ExecutorError; messages name the agent as `A2A agent <origin><path>`, never the
 *   query or credentials; the agent's status message text is quoted):
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
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Type from 'typebox';
import { Role, TaskState, type AgentCard, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { A2A_ERROR_CODE, isJsonRpcError, isRestError, type JsonRpcA2AError } from '@a2a-js/sdk/errors';
import { downstreamAuthorization } from '../downstream-token.ts';
import { abortable, abortedError, formatSeconds } from './abort.ts';
import { errorMessage } from './error-message.ts';
import { SharedAgent, USER_AGENT, bodyExcerpt, checkHeaderNames, lowerCaseKeys } from './http.ts';
import { HeadersSchema, defineKind, entrySchema, urlSchema } from './kind.ts';
import type { ExecutorLogger } from './logger.ts';
import { redactingLogger } from './logger.ts';
import { DESCRIBE_TIMEOUT_MS } from './mcp.ts';
import { Redactor, redactedInvoke } from './redact.ts';
import { ExecutorError } from './types.ts';
import type { Executor, ExecutorCall, ExecutorDetails } from './types.ts';

/** Longest wait for an agent card (connect included), milliseconds. */
export const CARD_TIMEOUT_MS = 10_000;

/** Longest wait for the best-effort `CancelTask` after a call's signal aborted, milliseconds. */
export const CANCEL_TIMEOUT_MS = 2_000;

/** First wait before polling a task that has not settled, milliseconds; doubles each time. */
export const POLL_FIRST_MS = 100;

/** Longest wait between two polls of a task, milliseconds. */
export const POLL_MAX_MS = 2_000;

/** Where the card lies below the agent's base URL. */
const CARD_PATH = '/.well-known/agent-card.json';

/** Message metadata keys (see the module comment). */
export const METADATA_KEYS = {
  runId: 'io.switchyard/run-id',
  nodeId: 'io.switchyard/node-id',
  iterationPath: 'io.switchyard/iteration-path',
  attempt: 'io.switchyard/attempt',
} as const;

/** Registry entry `{ "kind": "a2a", "url", "headers"?, "description"?, "timeoutSeconds"? }`. */
export const A2aEntry = entrySchema('a2a', {
  url: urlSchema("The agent's base URL, http: or https:; its card is <url>/.well-known/agent-card.json; ${VAR} expansion; credentials and query values are secrets"),
  headers: Type.Optional(HeadersSchema),
});

/** What an `a2a` entry resolves to (plus `kind` and `timeoutMs`). */
export interface ResolvedA2aEntry {
  /** The agent's base URL. */
  url: URL;
  headers: Record<string, string>;
  /** Values never to report (see `redact.ts`): header values, substituted values, URL credentials and query values. */
  secrets: string[];
  /** The entry's `description`. */
  description?: string;
}

/** One part of an answer as plain JSON (see the module comment). */
export type PartJson =
  | { kind: 'text'; text: string }
  | { kind: 'data'; data: unknown }
  | { kind: 'file'; uri?: string; bytes?: string; mediaType?: string; name?: string };

/** The output snapshot of a completed call (see the module comment). */
export interface A2aOutput {
  taskId: string | null;
  contextId: string | null;
  state: 'completed';
  artifacts: Array<{ name?: string; parts: PartJson[] }>;
  message: { parts: PartJson[] } | null;
  text: string;
  data: unknown;
  agent: { name: string; url: string };
}

/** What the catalogue shows of an agent (`ExecutorDescription.agent`). */
export type AgentSummary = NonNullable<ExecutorDetails['agent']>;

/** The `a2a` kind (see `kind.ts`): one undici Agent and one card cache per key, per registry. */
export const a2aKind = defineKind({
  kind: 'a2a',
  schema: A2aEntry,
  a2aPool: true,
  resolve: (entry, scope): ResolvedA2aEntry | undefined => {
    const secrets = new Set<string>();
    const url = scope.url(entry.url, 'url', secrets);
    const headers = scope.headers(entry.headers, 'headers', secrets);
    const namesOk = checkHeaderNames(entry.headers, scope);
    if (!namesOk || url === undefined || headers === undefined) return undefined;
    const resolved: ResolvedA2aEntry = { url, headers, secrets: [...secrets] };
    if (entry.description !== undefined) resolved.description = entry.description;
    return resolved;
  },
  open: ({ logger }) => {
    const agent = new SharedAgent();
    const caches = new Map<string, AgentCardCache>();
    const cardsOf = (key: string, entry: ResolvedA2aEntry): AgentCardCache => {
      let cache = caches.get(key);
      if (cache === undefined) caches.set(key, (cache = new AgentCardCache(entry.url, agent)));
      return cache;
    };
    return {
      create: (key, entry) => createA2aExecutor(key, entry, cardsOf(key, entry), agent, logger),
      describe: (key, entry) => describeA2aEntry(entry, cardsOf(key, entry)),
      close: () => agent.close(),
    };
  },
});

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

/** The agent's card, fetched once and kept until {@link AgentCardCache.forget} (see the module comment). */
export class AgentCardCache {
  readonly #cardUrl: URL;
  readonly #subject: string;
  readonly #agent: SharedAgent;
  #card: Promise<AgentCard> | undefined;

  constructor(url: URL, agent: SharedAgent) {
    this.#cardUrl = cardUrlOf(url);
    this.#subject = agentSubject(url);
    this.#agent = agent;
  }

  /**
   * The card. The first caller's `headers` fetch it (within {@link CARD_TIMEOUT_MS}); callers at the
   * same time wait for the same fetch, each until its own `signal` aborts (then rejects with
   * `abortedError(signal)`; the fetch goes on for the others). A failed fetch is not kept.
   * @throws ExecutorError (retryable) `<subject>: cannot fetch its agent card: <reason>`.
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
    const resolver = cardResolver(agentFetch(this.#agent, headers, observed, timeout));
    try {
      return await resolver.resolve(this.#cardUrl.href, '');
    } catch (error) {
      if (error instanceof ExecutorError) throw error;
      const reason = timeout.aborted ? `no answer within ${formatSeconds(CARD_TIMEOUT_MS)} s` : cardProblem(error, observed);
      throw new ExecutorError(`${this.#subject}: cannot fetch its agent card: ${reason}`, { retryable: true, cause: error });
    }
  }
}

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

/** Creates the `a2a` executor `key` (see the module comment); nothing connects until invoked. */
export function createA2aExecutor(key: string, entry: ResolvedA2aEntry & { timeoutMs: number }, cards: AgentCardCache, agent: SharedAgent, registryLogger: ExecutorLogger): Executor {
  const subject = agentSubject(entry.url);
  const url = baseUrlOf(entry.url);
  const redactor = new Redactor(entry.secrets);
  const logger = redactingLogger(registryLogger, redactor);

  async function attempt(call: ExecutorCall): Promise<A2aOutput> {
    const headers = requestHeaders(entry, call.downstreamToken);
    const card = await cardFor(headers, call.signal);
    const observed: Observed = { status: undefined };
    const client = await clientFor(card, agentFetch(agent, headers, observed));
    const progress = new TaskProgress();
    // Aborted once the answer is in, so that a stream left unread is closed.
    const finished = new AbortController();
    logger.debug({ executor: key, url, ...call.context, attempt: call.attempt }, 'calling A2A agent');
    try {
      await exchange(client, messageRequest(key, call), AbortSignal.any([call.signal, finished.signal]), progress);
    } catch (error) {
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
    for await (const event of client.sendMessageStream(request, { signal })) {
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
    const rpc = jsonRpcErrorOf(error);
    if (rpc !== undefined) {
      const retryable = rpc.envelopeCode === A2A_ERROR_CODE.INTERNAL_ERROR;
      return new ExecutorError(`${subject} answered JSON-RPC error ${rpc.envelopeCode}: ${bodyExcerpt(rpc.message)}`, { retryable, cause: error, details: { agent: url, code: rpc.envelopeCode } });
    }
    if (isConnectionError(error)) {
      cards.forget();
      return new ExecutorError(`${subject} cannot be reached: ${connectionProblem(error)}`, { retryable: true, cause: error, details: { agent: url } });
    }
    const status = isRestError(error) ? error.statusCode : observed.status;
    if (status !== undefined && (status < 200 || status > 299)) {
      const retryable = retryableStatus(status);
      if (retryable) cards.forget();
      return new ExecutorError(`${subject} answered HTTP ${status}: ${bodyExcerpt(errorMessage(error))}`, { retryable, cause: error, details: { agent: url, status } });
    }
    return new ExecutorError(`${subject} sent an answer this client cannot use: ${bodyExcerpt(errorMessage(error))}`, { retryable: false, cause: error, details: { agent: url } });
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
    timeoutMs: entry.timeoutMs,
    invoke: redactedInvoke(redactor, logger, 'A2A call failed', { executor: key, url }, attempt),
  };
}

/** What the SDK's `sendMessageStream` takes. */
type MessageRequest = Parameters<Client['sendMessageStream']>[0];

/** The request of one attempt (see the module comment, "Message"). */
export function messageRequest(key: string, call: ExecutorCall): MessageRequest {
  const { runId, nodeId, iterationPath = '' } = call.context;
  const message: Message = {
    messageId: messageIdOf(key, call),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: messageParts(call.arguments),
    metadata: { [METADATA_KEYS.runId]: runId, [METADATA_KEYS.nodeId]: nodeId, [METADATA_KEYS.iterationPath]: iterationPath, [METADATA_KEYS.attempt]: call.attempt },
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: '', message, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: 0, returnImmediately: false }, metadata: undefined };
}

/** The parts of a step's `config`: a text part for a string `text`, the rest (or all of it) as one data part. */
export function messageParts(config: Readonly<Record<string, unknown>>): Part[] {
  const { text, ...rest } = config;
  if (typeof text !== 'string') return [dataPart(config)];
  return Object.keys(rest).length === 0 ? [textPart(text)] : [textPart(text), dataPart(rest)];
}

/** A UUID-shaped id from (run, node, iteration path, attempt, key): the same for the same attempt of the same pool member. */
function messageIdOf(key: string, call: ExecutorCall): string {
  const { runId, nodeId, iterationPath = '' } = call.context;
  const hex = createHash('sha256').update(JSON.stringify([runId, nodeId, iterationPath, call.attempt, key])).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

function dataPart(data: unknown): Part {
  return { content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: undefined };
}

/** Task states after which an attempt waits no longer (terminal, and the interrupted ones). */
const SETTLED_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

/** Names of task states in messages and outputs, as A2A v0.3 spelled them on the wire. */
const STATE_NAMES: ReadonlyMap<TaskState, string> = new Map([
  [TaskState.TASK_STATE_SUBMITTED, 'submitted'],
  [TaskState.TASK_STATE_WORKING, 'working'],
  [TaskState.TASK_STATE_COMPLETED, 'completed'],
  [TaskState.TASK_STATE_FAILED, 'failed'],
  [TaskState.TASK_STATE_CANCELED, 'canceled'],
  [TaskState.TASK_STATE_INPUT_REQUIRED, 'input-required'],
  [TaskState.TASK_STATE_REJECTED, 'rejected'],
  [TaskState.TASK_STATE_AUTH_REQUIRED, 'auth-required'],
]);

/** `input-required`, `completed`, ...; `unknown` for anything else. */
export function stateName(state: TaskState | undefined): string {
  return (state === undefined ? undefined : STATE_NAMES.get(state)) ?? 'unknown';
}

/**
 * What the agent said so far about one message: its direct reply, or the task as the stream
 * events (or a polled `GetTask`) describe it, artifact chunks put together.
 */
export class TaskProgress {
  task: Task | undefined;
  reply: Message | undefined;

  /** The task's id once the agent named it. */
  get taskId(): string | undefined {
    return this.task?.id || undefined;
  }

  /** True once there is a reply or the task reached a state the attempt stops at. */
  get settled(): boolean {
    const state = this.task?.status?.state;
    return this.reply !== undefined || (state !== undefined && SETTLED_STATES.has(state));
  }

  /** Takes one stream event into account. */
  apply(event: StreamResponse): void {
    const payload = event.payload;
    switch (payload?.$case) {
      case 'message':
        this.reply = payload.value;
        break;
      case 'task':
        this.task = payload.value;
        break;
      case 'statusUpdate':
        this.#current(payload.value).status = payload.value.status;
        break;
      case 'artifactUpdate':
        if (payload.value.artifact !== undefined) mergeArtifact(this.#current(payload.value), payload.value.artifact, payload.value.append);
        break;
      default:
        break;
    }
  }

  /** Replaces what is known with a task as `GetTask` answered it. */
  replace(task: Task): void {
    this.task = task;
  }

  #current(event: { taskId: string; contextId: string }): Task {
    return (this.task ??= { id: event.taskId, contextId: event.contextId, status: undefined, artifacts: [], history: [], metadata: undefined });
  }
}

/** Adds `artifact` to `task`: appended to the parts of the one with its id when `append`, else replacing it (or added). */
function mergeArtifact(task: Task, artifact: Artifact, append: boolean): void {
  const artifacts = (task.artifacts ??= []);
  const index = artifacts.findIndex((known) => known.artifactId === artifact.artifactId);
  if (index < 0) artifacts.push(artifact);
  else if (append) artifacts[index] = { ...artifacts[index]!, parts: [...artifacts[index]!.parts, ...artifact.parts] };
  else artifacts[index] = artifact;
}

/** The output snapshot of a completed `task` (or of a direct `reply` when `task` is undefined). */
function outputOf(task: Task | undefined, message: Message | undefined, agent: { name: string; url: string }): A2aOutput {
  const artifacts = (task?.artifacts ?? []).map((artifact) => ({ ...(artifact.name ? { name: artifact.name } : {}), parts: partsJson(artifact.parts) }));
  const messageParts = message === undefined ? null : partsJson(message.parts);
  const allParts = [...artifacts.flatMap((artifact) => artifact.parts), ...(messageParts ?? [])];
  const firstData = allParts.find((part) => part.kind === 'data');
  return {
    taskId: task?.id || null,
    contextId: (task?.contextId ?? message?.contextId) || null,
    state: 'completed',
    artifacts,
    message: messageParts === null ? null : { parts: messageParts },
    text: allParts.flatMap((part) => (part.kind === 'text' ? [part.text] : [])).join('\n'),
    data: firstData === undefined ? null : firstData.data,
    agent,
  };
}

/** Parts as plain JSON (see {@link partJson}); parts without content are left out. */
function partsJson(parts: readonly Part[] | undefined): PartJson[] {
  return (parts ?? []).flatMap((part) => partJson(part) ?? []);
}

/** One part as plain JSON (see {@link PartJson}); undefined for a part without content. */
export function partJson(part: Part): PartJson | undefined {
  const content = part.content;
  const file = { ...(part.mediaType ? { mediaType: part.mediaType } : {}), ...(part.filename ? { name: part.filename } : {}) };
  switch (content?.$case) {
    case 'text':
      return { kind: 'text', text: content.value };
    case 'data':
      return { kind: 'data', data: content.value ?? null };
    case 'url':
      return { kind: 'file', uri: content.value, ...file };
    case 'raw':
      return { kind: 'file', bytes: Buffer.from(content.value).toString('base64'), ...file };
    default:
      return undefined;
  }
}

/** The text parts of `parts`, joined with a space. */
function textOf(parts: readonly Part[]): string {
  return parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join(' ').trim();
}

/** The catalogue's view of `card` (defensive: a card is whatever the agent served). */
function summaryOf(card: AgentCard, url: string): AgentSummary {
  const skills = Array.isArray(card.skills) ? card.skills : [];
  return {
    name: stringOf(card.name),
    description: stringOf(card.description),
    ...(card.version ? { version: stringOf(card.version) } : {}),
    skills: skills.map((skill) => ({
      id: stringOf(skill?.id),
      name: stringOf(skill?.name),
      description: stringOf(skill?.description),
      ...(Array.isArray(skill?.tags) && skill.tags.length > 0 ? { tags: skill.tags.map(stringOf) } : {}),
    })),
    url,
  };
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** The headers of every request for `entry` (see the module comment, "Headers"), lower-case names. */
function requestHeaders(entry: ResolvedA2aEntry, downstreamToken: string | undefined): Record<string, string> {
  return { 'user-agent': USER_AGENT, ...lowerCaseKeys(entry.headers), ...downstreamAuthorization(downstreamToken, entry.headers) };
}

/** What a fetch wrapper saw of its latest request: the HTTP status of the answer, undefined before one came. */
interface Observed {
  status: number | undefined;
}

/**
 * A `fetch` for the SDK: undici's, on `agent`'s Agent (no timers of its own), with `headers` added
 * to each request (the SDK's own headers win), the answer's status noted on `observed`, and
 * `signal` applied to requests the SDK sends without one.
 */
function agentFetch(agent: SharedAgent, headers: Readonly<Record<string, string>>, observed: Observed, signal?: AbortSignal): typeof fetch {
  return async (input, init) => {
    observed.status = undefined;
    const merged: Record<string, string> = { ...headers };
    new Headers(init?.headers).forEach((value, name) => (merged[name] = value));
    const dispatcher = await agent.get();
    const { fetch: undiciFetch } = await import('undici');
    const target = typeof input === 'string' || input instanceof URL ? input : input.url;
    // The global fetch's init and undici's differ only in their type declarations.
    const request = { ...init, headers: merged, signal: init?.signal ?? signal, dispatcher } as unknown as Parameters<typeof undiciFetch>[1];
    const response = await undiciFetch(target, request);
    observed.status = response.status;
    return response as unknown as Response;
  };
}

/** The SDK's card resolver on `fetchImpl` (v0.3 cards understood). */
function cardResolver(fetchImpl: typeof fetch): DefaultAgentCardResolver {
  return new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } });
}

/** The SDK's client factory: JSON-RPC and HTTP+JSON on `fetchImpl`, v0.3 agents through the compat layer. */
function clientFactory(fetchImpl: typeof fetch): ClientFactory {
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
function jsonRpcErrorOf(error: unknown): JsonRpcA2AError | undefined {
  for (const candidate of [error, (error as { cause?: unknown } | null)?.cause]) {
    if (isJsonRpcError(candidate) && typeof candidate.envelopeCode === 'number') return candidate;
  }
  return undefined;
}

/** Statuses another attempt may get past: 408, 429 and 5xx. */
function retryableStatus(status: number): boolean {
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
function isConnectionError(error: unknown): boolean {
  return connectionCode(error) !== undefined || (error instanceof TypeError && (error.message === 'fetch failed' || error.message === 'terminated'));
}

/** A connection error for a message: `<code>: <the cause's text>`. */
function connectionProblem(error: unknown): string {
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
function baseUrlOf(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
