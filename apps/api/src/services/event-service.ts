/**
 * Event-triggered workflows (issue #21 item 2, docs/guide/event-triggers.md): `POST /api/v1/events` stores
 * an event and starts one run of every enabled workflow with a matching trigger.
 *
 * - Matching: the enabled workflows with a trigger on the event's name (`listTriggeredBy`, an
 *   index read, at most {@link MAX_EVENT_CANDIDATES} in id order); per workflow the first trigger
 *   on that name whose `filterCel` (CEL over `event`, on the engine's evaluation budget) is true.
 *   A filter that fails to evaluate is recorded as a problem of that trigger, and the next one is
 *   tried. Between workflows the event loop gets a turn once the process's time slice is used up
 *   (runner `sharedSlice`), so many costly filters do not stall other requests. Events are a system-wide inbox: the `events-write` scope is the guard, not the
 *   caller's role on each workflow; the runs record the caller as their trigger.
 * - Input: `inputCel`'s map, else the event's `data`; then the workflow's declared inputs
 *   (`checkedRunInput`). A non-map, a failing expression or a mismatch is a problem, not a run.
 * - Fan-out: one event starts at most {@link MAX_EVENT_RUNS} runs; further matches are problems.
 * - Exactly once: each run starts through `startLiveRunOnce` (`onceForKey`) with key `event:<eventId>:<trigger index>`,
 *   so an event whose starting is retried (its starter died) never starts a run twice. A sender's
 *   repeated `id` within 24 h with the same name and data gets the stored answer
 *   (`InboundEvents.receive`, a unique key per sender and id); with other name or data it is a
 *   409. Another sender's same `id` is its own event. Concurrent posts of one `id` by one sender:
 *   one stores the event and starts the runs, the others wait for its answer and take over if it
 *   stalled (services/claim-wait.ts); only the event's sender takes it over.
 */
import {
  ConflictError,
  InvalidRequestError,
  MAX_USER_JSON_DEPTH,
  SwitchyardError,
  boundedText,
  isPlainObject,
  jsonByteLength,
  jsonDepth,
  type EventView,
  type SnapshotBudget,
  type WorkflowRecord,
} from '@switchyard/domain';
import { CelEngine, CelEvaluationError, sharedSlice } from '@switchyard/runner';
import type { EventProblem, EventRun, InboundEventRecord } from '@switchyard/store';
import type { AppServices } from './app-services.ts';
import { MAX_WAITERS_PER_CLAIM, awaitClaim } from './claim-wait.ts';
import { hashBody } from './idempotency.ts';
import { startLiveRunOnce, type TriggeringIdentity } from './run-service.ts';
import { checkedRunInput } from './workflow-service.ts';

/** Largest `POST /api/v1/events` body, bytes (256 KiB; 413 beyond). */
export const MAX_EVENT_BODY_BYTES = 256 * 1024;

/** How long a client's event `id` is answered from its first event, ms (24 h). */
export const EVENT_DEDUPE_MS = 24 * 3_600_000;

/** How long events are kept unless configured (`SWITCHYARD_EVENT_RETENTION_DAYS`), ms: 7 days. */
export const DEFAULT_EVENT_RETENTION_MS = 7 * 86_400_000;

/** Most runs one event starts; further matching workflows are recorded as problems. */
export const MAX_EVENT_RUNS = 100;

/** Most workflows with a trigger on the event's name that one event looks at (in id order). */
export const MAX_EVENT_CANDIDATES = 1_000;

/** Longest problem text kept on an event, characters. */
const MAX_PROBLEM_CHARS = 1_000;

/** The engine used when the services bring none (apps built on partial services). */
let defaultCel: CelEngine | undefined;

/** What a client posts. */
export interface EventPost {
  name: string;
  data?: Record<string, unknown>;
  /** The client's id of the event: a repeat within 24 h is answered from the first. */
  id?: string;
}

/** The answer to a post: the event and the runs it started (the first answer again for a repeated `id`). */
export interface EventAnswer {
  eventId: string;
  runIds: string[];
}

/**
 * Stores `post` and starts the runs it triggers, as `identity`, for the caller `sender` (its
 * principal, `creatorPrincipal`: an `id` is deduplicated among one sender's events); see the
 * module comment. Throws InvalidRequestError (400) for `data` nesting deeper than
 * MAX_USER_JSON_DEPTH (nothing stored); ConflictError (409) when the sender's `id` was used with
 * another name or data, or when {@link MAX_WAITERS_PER_CLAIM} requests already wait on the same
 * `id`; and store errors (503); never for a trigger's problems, which are recorded on the event.
 */
export async function receiveEvent(services: AppServices, post: EventPost, identity: TriggeringIdentity, sender: string): Promise<EventAnswer> {
  const data = post.data ?? {};
  if (jsonDepth(data) > MAX_USER_JSON_DEPTH) throw new InvalidRequestError(`data nests deeper than ${MAX_USER_JSON_DEPTH} levels`, [`/data: nests deeper than ${MAX_USER_JSON_DEPTH} levels`]);
  const events = services.repos.inboundEvents;
  const bodyHash = hashBody({ name: post.name, data });
  let event: InboundEventRecord | undefined;
  const outcome = await awaitClaim<EventAnswer>(services.clock, {
    key: `event ${JSON.stringify([sender, post.id ?? null])}`,
    look: async () => {
      if (event === undefined) {
        const receipt = await events.receive({
          name: post.name,
          data,
          sourceId: post.id ?? null,
          senderId: sender,
          bodyHash,
          now: services.clock.now(),
          retentionMs: services.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS,
          dedupeMs: EVENT_DEDUPE_MS,
        });
        if (receipt.won) {
          event = receipt.event;
          return { mine: true };
        }
        event = receipt.existing;
        if (event.bodyHash !== bodyHash) throw new ConflictError(`Event id '${post.id}' was already used with a different name or data`);
      } else {
        const current = await events.get(event.id);
        if (current === null) throw new ConflictError(`Event '${post.id}' was removed while it was starting its runs; send it again`);
        event = current;
      }
      return event.state === 'done' ? { result: answerOf(event) } : { claimedAt: event.claimedAt };
    },
    takeOver: (claimedAt, now) => events.takeOver(event!.id, sender, claimedAt, now),
    busy: (waiting) => new ConflictError(`Event '${post.id}' is still starting its runs and ${waiting} more requests wait for it; retry in a moment`),
  });
  return 'result' in outcome ? outcome.result : startEventRuns(services, event!, identity);
}

function answerOf(event: Pick<InboundEventRecord, 'id' | 'runs'>): EventAnswer {
  return { eventId: event.id, runIds: event.runs.map((run) => run.runId) };
}

/**
 * Starts the runs `event` triggers and records them with the problems met on the event (`done`).
 * A failure that is no problem of a trigger (the store) leaves the event `starting` for a repeat
 * to take over at once, and is thrown.
 */
async function startEventRuns(services: AppServices, event: InboundEventRecord, identity: TriggeringIdentity): Promise<EventAnswer> {
  const runs: EventRun[] = [];
  const problems: EventProblem[] = [];
  try {
    const candidates = await services.repos.definitions.listTriggeredBy(event.name, MAX_EVENT_CANDIDATES);
    const variables = { event: { id: event.id, name: event.name, data: event.data, receivedAt: event.receivedAt.toISOString() } };
    for (const workflow of candidates) {
      // Filters evaluate synchronously (each on the CEL budget): between workflows the event loop gets its turn.
      await sharedSlice.yield();
      const problem = (trigger: number | null, error: string) => problems.push({ workflowId: workflow.id, trigger, error: boundedText(error, MAX_PROBLEM_CHARS) });
      const trigger = matchingTrigger(services, workflow, event.name, variables, problem);
      if (trigger === null) continue;
      if (runs.length >= MAX_EVENT_RUNS) {
        problem(trigger, `not started: one event starts at most ${MAX_EVENT_RUNS} runs`);
        continue;
      }
      try {
        const initialInput = checkedRunInput(workflow, runInput(services, workflow, trigger, variables, event.data));
        const run = await startLiveRunOnce(services, workflow, `event:${event.id}:${trigger}`, { eventId: event.id, trigger }, {
          triggerSource: 'event',
          initialInput,
          identity,
          origin: { eventId: event.id },
        });
        runs.push({ workflowId: workflow.id, runId: run.id });
      } catch (error) {
        const text = problemText(error);
        if (text === null) throw error;
        problem(trigger, text);
      }
    }
    await services.repos.inboundEvents.complete(event.id, runs, problems);
  } catch (error) {
    await services.repos.inboundEvents.abandon(event.id).catch(() => undefined);
    throw error;
  }
  return answerOf({ id: event.id, runs });
}

/**
 * The index of the first trigger of `workflow` on `eventName` whose filter holds (no filter: it
 * holds), or null. A filter that fails (or is no bool) is reported through `problem` and counts
 * as not holding.
 */
function matchingTrigger(
  services: AppServices,
  workflow: WorkflowRecord,
  eventName: string,
  variables: Record<string, unknown>,
  problem: (trigger: number, error: string) => void,
): number | null {
  const triggers = workflow.triggers ?? [];
  for (let index = 0; index < triggers.length; index += 1) {
    const trigger = triggers[index]!;
    if (trigger.event !== eventName) continue;
    if (trigger.filterCel === null) return index;
    try {
      if (celOf(services).evaluateBool(trigger.filterCel, variables)) return index;
    } catch (error) {
      if (!(error instanceof CelEvaluationError)) throw error;
      problem(index, `filterCel: ${error.message}`);
    }
  }
  return null;
}

/** The run input of trigger `index` of `workflow`: `inputCel`'s map, else `data`. Throws CelEvaluationError or a {@link TriggerProblem}. */
function runInput(services: AppServices, workflow: WorkflowRecord, index: number, variables: Record<string, unknown>, data: Record<string, unknown>): Record<string, unknown> {
  const inputCel = workflow.triggers?.[index]?.inputCel ?? null;
  if (inputCel === null) return data;
  const value = celOf(services).evaluate(inputCel, variables);
  if (!isPlainObject(value)) throw new TriggerProblem(`inputCel: must give a map, got ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}`);
  return value;
}

/** A trigger's problem found here (not by CEL or the checks a run start makes). */
class TriggerProblem extends Error {}

/** The text recorded for `error` when it is a problem of the trigger (CEL, input, a refused run start: 4xx); null otherwise (e.g. the store: thrown on). */
function problemText(error: unknown): string | null {
  if (error instanceof TriggerProblem) return error.message;
  if (error instanceof CelEvaluationError) return `inputCel: ${error.message}`;
  if (error instanceof SwitchyardError && error.status < 500) {
    return error.problems && error.problems.length > 0 ? `${error.message}: ${error.problems.join('; ')}` : error.message;
  }
  return null;
}

function celOf(services: AppServices): Pick<CelEngine, 'evaluate' | 'evaluateBool'> {
  return services.cel ?? (defaultCel ??= new CelEngine());
}

/**
 * `event` as the API shows it. `visible`: the workflows the caller may view (undefined: every
 * one); runs and problems of others are left out. `budget`: the list's byte budget for `data`
 * (a payload it cannot take is null, its size in `dataBytes`); absent, `data` is always given.
 */
export function eventView(event: InboundEventRecord, visible: ReadonlySet<string> | undefined, budget?: SnapshotBudget): EventView {
  const dataBytes = jsonByteLength(event.data);
  const shown = (workflowId: string) => visible === undefined || visible.has(workflowId);
  return {
    eventId: event.id,
    id: event.sourceId,
    name: event.name,
    data: budget === undefined || budget.take(dataBytes) ? event.data : null,
    dataBytes,
    receivedAt: event.receivedAt.toISOString(),
    state: event.state,
    runs: event.runs.filter((run) => shown(run.workflowId)),
    problems: event.problems.filter((problem) => shown(problem.workflowId)),
  };
}
