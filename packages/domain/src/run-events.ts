/**
 * The run-event catalogue (DESIGN.md "Run control, events, lineage"): every type a run's event
 * log may hold, and how events are shown by the API. One writer (`RunEvents.append` in the
 * store) stores them with `seq` 1, 2, 3, ... per run, without gaps.
 *
 * | type | when | payload |
 * | --- | --- | --- |
 * | `run.started` | an instance starts executing a new run | `owner`, `takenOverFrom` (only after a lease takeover) |
 * | `run.resumed` | an instance continues a run (after a restart, a decision, a lost owner) | `owner`, `takenOverFrom` (the owner whose expired lease was taken over, only then) |
 * | `run.awaiting_approval` | the run parks at its HITL gates | — |
 * | `directive.received` | a pause, resume or cancel was accepted for the run | `directive`, `requestedBy` (an Actor: `{ userId, username, via }`), `reason` (cancel) |
 * | `run.paused` | the run became `paused` (no node executes any more) | — |
 * | `run.timed_out` | the run's `timeoutSeconds` passed; it is being stopped (then `run.failed`) | `timeoutSeconds`, `deadlineAt` |
 * | `run.completed` / `run.failed` / `run.cancelled` | the run ended (its last event) | `errorSummary` (not on completed) |
 * | `node.started` | an attempt of a node starts | `nodeId`, `nodeName`, `iterationPath`, `attempt`, `nodeRunId` |
 * | `node.completed` / `node.failed` / `node.skipped` / `node.cancelled` / `node.awaiting_approval` | an attempt or node ended, or awaits review | same, plus `error`, and `executorKey` when an executor served the attempt (steps) |
 * | `node.retrying` | a failed attempt will be retried | same, plus `delayMs`, `error` |
 * | `requirement.raised` | a HITL gate was raised | `stepId`, `nodeId`, `phase`, `round` |
 * | `requirement.decided` | a gate was decided (a person, a timeout) | `stepId`, `nodeId`, `resolution`, `decidedBy` |
 */
import Type, { type Static } from 'typebox';
import type { Actor } from './access.ts';
import type { Decision } from './hitl.ts';
import type { RequirementRecord, RunEventRecord } from './records.ts';
import type { DirectiveKind } from './run-control.ts';
import { JsonObject, Timestamp } from './schemas/common.ts';

/** Every run event type (see the module comment). */
export const RUN_EVENT_TYPES = [
  'run.started',
  'run.resumed',
  'run.awaiting_approval',
  'directive.received',
  'run.paused',
  'run.timed_out',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'node.started',
  'node.completed',
  'node.failed',
  'node.skipped',
  'node.cancelled',
  'node.awaiting_approval',
  'node.retrying',
  'requirement.raised',
  'requirement.decided',
] as const;

/** A run event type. */
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** What every `node.*` event says of its node run (see the module comment). */
export type NodeEventPayload = {
  nodeId: string;
  nodeName: string;
  iterationPath: string;
  attempt: number;
  nodeRunId: string;
  /** Why the attempt failed (failed, retrying, cancelled). */
  error?: string;
  /** Steps: the executor that served the attempt (for a pool that failed, the last member tried). */
  executorKey?: string;
};

/** The payload of an execution's first event: who executes the run, and whose expired lease it took over (only then). */
export type ExecutionEventPayload = { owner: string; takenOverFrom?: string };

/**
 * The payload of every run event type: the one catalogue (see the module comment) that writers
 * (`RunEvents.append`, the runner's ledger, recorded-events.ts) are typed by. Stored as given
 * (user-visible JSON); readers of events stored by older versions must not rely on more than this.
 */
export interface RunEventPayloads {
  'run.started': ExecutionEventPayload;
  'run.resumed': ExecutionEventPayload;
  'run.awaiting_approval': Record<string, never>;
  'directive.received': { directive: Exclude<DirectiveKind, 'timeout'>; requestedBy: Actor; reason?: string };
  'run.paused': Record<string, never>;
  'run.timed_out': { timeoutSeconds: number | null; deadlineAt: string | null };
  'run.completed': Record<string, never>;
  'run.failed': { errorSummary: string | null };
  'run.cancelled': { errorSummary: string | null };
  'node.started': NodeEventPayload;
  'node.completed': NodeEventPayload;
  'node.failed': NodeEventPayload;
  'node.skipped': NodeEventPayload;
  'node.cancelled': NodeEventPayload;
  'node.awaiting_approval': NodeEventPayload;
  'node.retrying': NodeEventPayload & { delayMs: number; error: string };
  'requirement.raised': Pick<RequirementRecord, 'stepId' | 'nodeId' | 'phase' | 'round'>;
  'requirement.decided': { stepId: string; nodeId: string; resolution: Decision['resolution']; decidedBy: Decision['decidedBy'] };
}

/** An event of type `T` with its payload, as a writer hands it over. */
export type RunEventOf<T extends RunEventType> = { type: T; payload: RunEventPayloads[T] };

/** Any run event with its payload (a union discriminated on `type`). */
export type TypedRunEvent = { [T in RunEventType]: RunEventOf<T> }[RunEventType];

/** The types of a run's last event. */
export const FINAL_RUN_EVENT_TYPES: readonly RunEventType[] = ['run.completed', 'run.failed', 'run.cancelled'];

/** Most events one `GET .../events` answers with. */
export const MAX_EVENTS_PER_PAGE = 1000;

/** One run event as the API shows it. */
export const RunEventView = Type.Object({
  seq: Type.Integer({ minimum: 1, description: '1, 2, 3, ... per run, without gaps' }),
  type: Type.Enum([...RUN_EVENT_TYPES]),
  timestamp: Timestamp,
  nodeId: Type.Optional(Type.String({ description: 'The node the event is about (node.* and requirement.* events)' })),
  payload: JsonObject,
});
export type RunEventView = Static<typeof RunEventView>;

/** Query of GET .../runs/{run_id}/events. */
export const RunEventListQuery = Type.Object({
  afterSeq: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Only events after this seq' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EVENTS_PER_PAGE, default: 100 })),
  types: Type.Optional(Type.String({ description: 'Comma-separated event types, e.g. node.failed,run.failed' })),
  nodeId: Type.Optional(Type.String({ minLength: 1 })),
});
export type RunEventListQuery = Static<typeof RunEventListQuery>;

/** Response of GET .../runs/{run_id}/events. */
export const RunEventListResponse = Type.Object({
  runId: Type.String(),
  events: Type.Array(RunEventView),
});
export type RunEventListResponse = Static<typeof RunEventListResponse>;

/** RunEventRecord -> RunEventView. */
export function toRunEventView(event: RunEventRecord): RunEventView {
  const nodeId = event.payload['nodeId'];
  return {
    seq: event.seq,
    type: event.type as RunEventType,
    timestamp: event.createdAt.toISOString(),
    ...(typeof nodeId === 'string' ? { nodeId } : {}),
    payload: event.payload as RunEventView['payload'],
  };
}

/**
 * Parses the `types` filter: the listed types, or undefined for all.
 * @returns an error message naming the unknown types, or the types.
 */
export function parseEventTypes(types: string | undefined): { ok: true; types: RunEventType[] | undefined } | { ok: false; message: string } {
  if (types === undefined || types.trim() === '') return { ok: true, types: undefined };
  const listed = types.split(',').map((type) => type.trim()).filter(Boolean);
  const unknown = listed.filter((type) => !(RUN_EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) return { ok: false, message: `unknown event types: ${unknown.join(', ')} (known: ${RUN_EVENT_TYPES.join(', ')})` };
  return { ok: true, types: listed as RunEventType[] };
}

/** The payload of `requirement.raised` for `requirement` (a gate, or a human request: phase `ask`). */
export function requirementRaisedPayload(requirement: Pick<RequirementRecord, 'stepId' | 'nodeId' | 'phase' | 'round'>): RunEventPayloads['requirement.raised'] {
  return { stepId: requirement.stepId, nodeId: requirement.nodeId, phase: requirement.phase, round: requirement.round };
}
