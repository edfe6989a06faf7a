/**
 * Schemas of the event inbox (issue #21 item 2, docs/guide/event-triggers.md): `POST /api/v1/events`
 * and `GET /api/v1/events`.
 */
import Type, { type Static } from 'typebox';
import { CLOSED, JsonObject, PageQuery, Pagination, Timestamp, nullable, objectIdString } from './common.ts';
import { EventName } from './workflow.ts';

/** Longest client event `id`, characters. */
export const MAX_EVENT_ID_LENGTH = 255;

/** Body of POST /events. */
export const EventPostBody = Type.Object(
  {
    name: EventName,
    data: Type.Optional({ ...JsonObject, description: "The event's payload (any JSON object; default {}): `event.data` in trigger expressions, and the run input when a trigger has no inputCel" }),
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_EVENT_ID_LENGTH,
        pattern: '^[\\x20-\\x7e]+$',
        description: `The sender's id of the event (1-${MAX_EVENT_ID_LENGTH} printable ASCII characters): a repeat within 24 h gets the first answer and starts nothing`,
      }),
    ),
  },
  { ...CLOSED, title: 'EventPostBody' },
);
export type EventPostBody = Static<typeof EventPostBody>;

/** 202 answer of POST /events. */
export const EventPostResponse = Type.Object(
  {
    eventId: Type.String({ description: 'The stored event (24-hex id); the same for a repeated `id`' }),
    runIds: Type.Array(Type.String(), { description: 'The runs the event started (triggerSource `event`), in workflow id order; [] when none matched' }),
  },
  { title: 'EventPostResponse' },
);
export type EventPostResponse = Static<typeof EventPostResponse>;

/** One run an event started. */
export const EventRunView = Type.Object({ workflowId: Type.String(), runId: Type.String() });

/** Why an event started no run of a workflow. */
export const EventProblemView = Type.Object({
  workflowId: Type.String(),
  trigger: nullable(Type.Integer({ description: 'Index of the trigger in the workflow’s `triggers`' })),
  error: Type.String({ description: 'e.g. a failing filterCel, an inputCel that is no map, an input that does not match the inputSchema, the fan-out limit' }),
});

/** An event as listed. */
export const EventView = Type.Object(
  {
    eventId: Type.String(),
    id: nullable(Type.String({ description: "The sender's id, when given" })),
    name: Type.String(),
    data: nullable({ ...JsonObject, description: 'The payload; null when left out of a list for its size (see dataBytes; GET /events/{event_id} has it)' }),
    dataBytes: Type.Integer({ description: 'Size of data as JSON, bytes' }),
    receivedAt: Timestamp,
    state: Type.Union([Type.Literal('starting'), Type.Literal('done')], { description: '`starting` while its runs are being started' }),
    runs: Type.Array(EventRunView, { description: 'The runs it started (only of workflows the caller may view)' }),
    problems: Type.Array(EventProblemView, { description: 'Triggers that matched the name but started no run, and why (only of workflows the caller may view)' }),
  },
  { title: 'EventView' },
);
export type EventView = Static<typeof EventView>;

/** Query of GET /events. */
export const EventListQuery = Type.Object({
  name: Type.Optional(EventName),
  ...PageQuery.properties,
});
export type EventListQuery = Static<typeof EventListQuery>;

export const EventListResponse = Type.Object({ events: Type.Array(EventView), pagination: Pagination }, { title: 'EventListResponse' });
export type EventListResponse = Static<typeof EventListResponse>;

/** Path of GET /events/{event_id}. */
export const EventIdParams = Type.Object({ event_id: objectIdString('Event id') });
