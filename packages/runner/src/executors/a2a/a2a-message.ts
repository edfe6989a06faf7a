/**
 * What the `a2a` executor sends to an agent and reads from its answers (see `a2a.ts` for the
 * contract): the message of one attempt (parts, metadata, stable message id), task states and
 * which of them settle an attempt, the task as stream events and polls describe it, the output
 * snapshot of a completed task or reply, parts as plain JSON, and the catalogue's view of an
 * agent card. Plain data in, plain data out: nothing here reaches the network.
 */
import { createHash } from 'node:crypto';
import { Role, TaskState, type AgentCard, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { ExecutorCall, ExecutorDetails } from '../types.ts';

/** Message metadata keys (see the module comment of `a2a.ts`, "Message"). */
export const METADATA_KEYS = {
  runId: 'io.switchyard/run-id',
  nodeId: 'io.switchyard/node-id',
  iterationPath: 'io.switchyard/iteration-path',
  attempt: 'io.switchyard/attempt',
} as const;

/** One part of an answer as plain JSON (see the module comment of `a2a.ts`, "Output snapshot"). */
export type PartJson =
  | { kind: 'text'; text: string }
  | { kind: 'data'; data: unknown }
  | { kind: 'file'; uri?: string; bytes?: string; mediaType?: string; name?: string };

/** The output snapshot of a completed call (see the module comment of `a2a.ts`, "Output snapshot"). */
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

/** What the SDK's `sendMessageStream` takes. */
export type MessageRequest = Parameters<Client['sendMessageStream']>[0];

/** The request of one attempt (see the module comment of `a2a.ts`, "Message"). */
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
export function outputOf(task: Task | undefined, message: Message | undefined, agent: { name: string; url: string }): A2aOutput {
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
export function textOf(parts: readonly Part[]): string {
  return parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join(' ').trim();
}

/** The catalogue's view of `card` (defensive: a card is whatever the agent served). */
export function summaryOf(card: AgentCard, url: string): AgentSummary {
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

export function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}
