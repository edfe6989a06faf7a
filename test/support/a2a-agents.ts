/**
 * A2A agents for tests of the `a2a` executor kind: real agents built with the SDK's server side
 * (`DefaultRequestHandler`, `InMemoryTaskStore`, the Express adapters of
 * `@a2a-js/sdk/server/express`) on an Express 5 app listening on 127.0.0.1 and a free port.
 *
 * Each agent lives under the path `/agent`: its base URL is `http://127.0.0.1:<port>/agent`, its
 * card `<base>/.well-known/agent-card.json`, its JSON-RPC endpoint `<base>/jsonrpc`. What the agent
 * does with a message is a {@link Behaviour}; {@link behaviours} holds the ones the tests need
 * (answer, fail, reject, hang until cancelled, ask for input, reply with a bare message, finish
 * after the call returned). Every HTTP request is recorded (method, path, headers), also the card
 * fetches, and so is every message executed and every task the agent was asked to cancel.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { Role, TaskState, type AgentCard, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

/** Path under which every test agent is mounted: its base URL ends with it. */
export const AGENT_PATH = '/agent';

/** One HTTP request an agent received. */
export interface AgentRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One skill of the agent's card. */
export interface SkillSpec {
  id: string;
  name: string;
  description: string;
  tags?: string[];
}

/** What one execution of the agent may do: publish events for the task of `request`. */
export interface AgentTurn {
  readonly request: RequestContext;
  readonly bus: ExecutionEventBus;
  /** Resolves when the agent is asked to cancel this turn's task (its `cancelTask`). */
  readonly cancelled: Promise<void>;
  /** Publishes the task (first event of every task-based turn) in `state` (default working). */
  start(state?: TaskState): void;
  /** Publishes a status update to `state`, with an agent message of `text` when given. */
  status(state: TaskState, text?: string): void;
  /** Publishes an artifact of `parts`. */
  artifact(parts: Part[], name?: string): void;
  /** Publishes a bare agent message (no task). */
  reply(parts: Part[]): void;
  /** Saves the task in `state` with `artifacts` straight into the task store (the bus is gone by then): for agents that finish after answering. */
  saveLater(delayMs: number, state: TaskState, artifacts: Artifact[]): void;
}

/** What the agent does with one message. */
export type Behaviour = (turn: AgentTurn) => Promise<void>;

/** Answers a JSON-RPC request itself, instead of the SDK's handler (canned errors, broken answers). */
export type JsonRpcResponder = (request: Request, response: Response) => void;

/** A running test agent. */
export interface TestAgent {
  /** Base URL, e.g. `http://127.0.0.1:41234/agent` (the registry entry's `url`). */
  readonly url: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Every HTTP request received, card fetches included, in order. */
  readonly requests: AgentRequest[];
  /** Every user message executed, in order. */
  readonly messages: Message[];
  /** The task ids the agent's executor was asked to cancel, in order. */
  readonly cancelledTasks: string[];
  /**
   * How many stream events (SSE `data:` lines) the agent has written so far; with `runId`, only on
   * streams of messages whose metadata names that run (`io.switchyard/run-id`).
   */
  eventsWritten(runId?: string): number;
  /** Resolves with the task id of the next (or an earlier, not yet awaited) cancel request. */
  nextCancel(): Promise<string>;
  /** Changes what the agent does with the next messages. */
  setBehaviour(behaviour: Behaviour): void;
  /** Answers the next JSON-RPC requests with `responder` (undefined: the SDK's handler again). */
  setJsonRpcResponder(responder: JsonRpcResponder | undefined): void;
  close(): Promise<void>;
}

/** Options of {@link startAgent}. */
export interface AgentOptions {
  name: string;
  description?: string;
  version?: string;
  skills?: SkillSpec[];
  /** Whether the card advertises streaming (default true). */
  streaming?: boolean;
  /** Port to listen on (default: a free one). */
  port?: number;
  /** Base URL the card tells clients to send messages to (default: this agent's own). */
  interfaceUrl?: string;
  behaviour: Behaviour;
}

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

/** A data part holding `data` (any JSON value). */
export function dataPart(data: unknown): Part {
  return { content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: undefined };
}

/** A file part by URL. */
export function urlPart(url: string, mediaType: string, filename = ''): Part {
  return { content: { $case: 'url', value: url }, mediaType, filename, metadata: undefined };
}

/** The text of every text part of `message`, joined with a space. */
export function messageText(message: Message): string {
  return message.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join(' ');
}

/** The behaviours the tests use. */
export const behaviours = {
  /** Completes with one artifact `result` of a text and a data part. */
  answer: (text: string, data: unknown): Behaviour => async (turn) => {
    turn.start();
    turn.artifact([textPart(text), dataPart(data)], 'result');
    turn.status(TaskState.TASK_STATE_COMPLETED);
  },
  /** Completes with a text artifact echoing the message's parts as JSON. */
  echo: (): Behaviour => async (turn) => {
    turn.start();
    turn.artifact([textPart(JSON.stringify(turn.request.userMessage.parts.map((part) => part.content)))], 'echo');
    turn.status(TaskState.TASK_STATE_COMPLETED);
  },
  /** Ends the task failed with `text` as the status message. */
  fail: (text: string): Behaviour => async (turn) => {
    turn.start();
    turn.status(TaskState.TASK_STATE_FAILED, text);
  },
  /** Ends the task rejected with `text` as the status message. */
  reject: (text: string): Behaviour => async (turn) => {
    turn.start();
    turn.status(TaskState.TASK_STATE_REJECTED, text);
  },
  /** Works until asked to cancel, then ends the task canceled. */
  hang: (): Behaviour => async (turn) => {
    turn.start();
    await turn.cancelled;
    turn.status(TaskState.TASK_STATE_CANCELED, 'cancelled by the client');
  },
  /** Asks for more input: the task stops in input-required with `question`. */
  askForInput: (question: string): Behaviour => async (turn) => {
    turn.start();
    turn.status(TaskState.TASK_STATE_INPUT_REQUIRED, question);
  },
  /** Answers with a bare message (no task). */
  reply: (text: string): Behaviour => async (turn) => {
    turn.reply([textPart(text)]);
  },
  /**
   * Answers at once with the task still working, and completes it `delayMs` later with one text
   * artifact (a non-streaming agent whose client must poll `GetTask`).
   */
  finishLater: (delayMs: number, text: string): Behaviour => async (turn) => {
    turn.start();
    turn.saveLater(delayMs, TaskState.TASK_STATE_COMPLETED, [{ artifactId: 'late', name: 'late', description: '', parts: [textPart(text)], metadata: undefined, extensions: [] }]);
  },
};

/** Starts an agent (see the module comment). Close it in afterAll / finally. */
export async function startAgent(options: AgentOptions): Promise<TestAgent> {
  const app = express();
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${origin}${AGENT_PATH}`;

  const requests: AgentRequest[] = [];
  const messages: Message[] = [];
  const cancelledTasks: string[] = [];
  const cancelWaiters: Array<(taskId: string) => void> = [];
  let claimedCancels = 0;
  const cancelSignals = new Map<string, () => void>();
  let behaviour = options.behaviour;
  let responder: JsonRpcResponder | undefined;
  /** The run id (message metadata) of each stream event written, '' when none. */
  const streamed: string[] = [];
  const store = new InMemoryTaskStore();

  const executor: AgentExecutor = {
    async execute(request, bus) {
      messages.push(request.userMessage);
      const cancelled = new Promise<void>((resolve) => cancelSignals.set(request.taskId, resolve));
      await behaviour(turnOf(request, bus, cancelled, store));
    },
    async cancelTask(taskId) {
      cancelledTasks.push(taskId);
      const waiter = cancelWaiters.shift();
      if (waiter) {
        claimedCancels++;
        waiter(taskId);
      }
      cancelSignals.get(taskId)?.();
    },
  };
  const handler = new DefaultRequestHandler(agentCard(options, url), store, executor);

  app.use((request, _response, next) => {
    requests.push({ method: request.method, path: request.originalUrl, headers: { ...request.headers } });
    next();
  });
  app.use(`${AGENT_PATH}/.well-known/agent-card.json`, agentCardHandler({ agentCardProvider: handler }));
  app.use(`${AGENT_PATH}/jsonrpc`, (request, response, next) => {
    const write = response.write.bind(response) as (chunk: unknown, ...rest: unknown[]) => boolean;
    response.write = ((chunk: unknown, ...rest: unknown[]) => {
      // The SDK's router has parsed the body by the time it writes.
      if (String(chunk).startsWith('data:')) streamed.push(String(request.body?.params?.message?.metadata?.['io.switchyard/run-id'] ?? ''));
      return write(chunk, ...rest);
    }) as typeof response.write;
    next();
  });
  app.post(`${AGENT_PATH}/jsonrpc`, (request, response, next) => (responder === undefined ? next() : responder(request, response)));
  app.use(`${AGENT_PATH}/jsonrpc`, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

  return {
    url,
    origin,
    requests,
    messages,
    cancelledTasks,
    eventsWritten: (runId) => (runId === undefined ? streamed.length : streamed.filter((id) => id === runId).length),
    nextCancel() {
      if (claimedCancels < cancelledTasks.length) return Promise.resolve(cancelledTasks[claimedCancels++]!);
      return new Promise((resolve) => cancelWaiters.push(resolve));
    },
    setBehaviour(next) {
      behaviour = next;
    },
    setJsonRpcResponder(next) {
      responder = next;
    },
    close: () => closeServer(server),
  };
}

/** A port nothing listens on (one that was free a moment ago): connections to it are refused. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await closeServer(server);
  return port;
}

/** The base URL an agent started with `port` has (see {@link startAgent}). */
export function agentUrl(port: number): string {
  return `http://127.0.0.1:${port}${AGENT_PATH}`;
}

/** A base URL where no agent listens: connections are refused. */
export async function downAgentUrl(): Promise<string> {
  return agentUrl(await freePort());
}

/** The card of an agent at `url` (JSON-RPC only). */
function agentCard(options: AgentOptions, url: string): AgentCard {
  return {
    name: options.name,
    description: options.description ?? `Test agent ${options.name}`,
    version: options.version ?? '1.0.0',
    supportedInterfaces: [{ url: `${options.interfaceUrl ?? url}/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    capabilities: { streaming: options.streaming ?? true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: (options.skills ?? []).map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: skill.tags ?? [],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

/** The helpers one execution publishes with. */
function turnOf(request: RequestContext, bus: ExecutionEventBus, cancelled: Promise<void>, store: InMemoryTaskStore): AgentTurn {
  const { taskId, contextId } = request;
  const agentMessage = (parts: Part[], withTask: boolean): Message => ({
    messageId: randomUUID(),
    contextId,
    taskId: withTask ? taskId : '',
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  });
  const statusOf = (state: TaskState, text?: string) => ({
    state,
    message: text === undefined ? undefined : agentMessage([textPart(text)], true),
    timestamp: new Date().toISOString(),
  });
  return {
    request,
    bus,
    cancelled,
    start(state = TaskState.TASK_STATE_WORKING) {
      const task: Task = { id: taskId, contextId, status: statusOf(state), artifacts: [], history: [request.userMessage], metadata: undefined };
      bus.publish(AgentEvent.task(task));
    },
    status(state, text) {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: statusOf(state, text), metadata: undefined }));
    },
    artifact(parts, name = '') {
      const artifact: Artifact = { artifactId: randomUUID(), name, description: '', parts, metadata: undefined, extensions: [] };
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }));
    },
    reply(parts) {
      bus.publish(AgentEvent.message(agentMessage(parts, false)));
    },
    saveLater(delayMs, state, artifacts) {
      setTimeout(() => {
        void (async () => {
          const task = await store.load(taskId, request.context);
          if (task) await store.save({ ...task, status: statusOf(state), artifacts }, request.context);
        })();
      }, delayMs);
    },
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Streams of hanging tasks would keep close() waiting.
    server.closeAllConnections();
  });
}
