/**
 * The event inbox (issue #21 item 2, docs/guide/event-triggers.md), under /api/v1 (`routes/events.ts` is
 * the run events of a run, a different thing):
 * - `POST /events` (scope `events-write`, body ≤ 256 KiB): stores an event and starts the runs of
 *   the workflows whose triggers match (services/event-service.ts); 202 `{ eventId, runIds }`.
 * - `GET /events` (scope `workflows-read`): received events, newest first, by name; a caller who
 *   is not an admin sees the events that concern a workflow it may view, with those runs only.
 * - `GET /events/{event_id}`: one event with its full payload, under the same visibility.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ErrorBody,
  EventIdParams,
  MAX_USER_JSON_DEPTH,
  EventListQuery,
  EventListResponse,
  EventPostBody,
  EventPostResponse,
  EventView,
  NotFoundError,
  SnapshotBudget,
  pagination,
} from '@switchyard/domain';
import type { AppServices } from '../services/index.ts';
import { MAX_EVENT_BODY_BYTES, MAX_EVENT_CANDIDATES, MAX_EVENT_RUNS, eventView, receiveEvent } from '../services/event-service.ts';
import { creatorPrincipal, triggeringIdentity } from '../auth/identity.ts';
import { visibleWorkflowIds } from '../access/visibility.ts';

const tags = ['events'];

const inboundEventRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  const { repos } = services;

  app.post(
    '/events',
    {
      schema: {
        tags,
        operationId: 'postEvent',
        summary: 'Post an event',
        description:
          'Stores the event and starts one run (triggerSource `event`, with `eventId`) of every enabled workflow that has a trigger on its `name` ' +
          "whose `filterCel` holds; the run input is the trigger's `inputCel` map, else `data`, checked against the workflow's inputSchema. " +
          'A failing filter or input, or an input that does not match, is recorded on the event (GET /events), not an error. At most ' +
          `${MAX_EVENT_RUNS} runs per event (further matches are recorded) among the first ${MAX_EVENT_CANDIDATES} workflows with a trigger on the name. ` +
          'Events are a system-wide inbox: the `events-write` scope is needed, not a role on each workflow; runs record the caller as their trigger. ' +
          'With an `id`, a repeat by the same caller within 24 h with the same name and data gets the first answer and starts nothing ' +
          '(also when sent concurrently); with another name or data it is a 409 `conflict`; ids are per caller (another caller\'s same `id` is its own event). ' +
          `Body at most ${MAX_EVENT_BODY_BYTES / 1024} KiB (413 beyond); \`data\` nests at most ${MAX_USER_JSON_DEPTH} levels (400 beyond). ` +
          'Every event is kept SWITCHYARD_EVENT_RETENTION_DAYS, also when it started nothing; posts count against the `triggers` rate limit.',
        body: EventPostBody,
        response: { 202: EventPostResponse, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody },
      },
      bodyLimit: MAX_EVENT_BODY_BYTES,
      config: { rateLimitGroup: 'triggers', scope: 'events-write' },
    },
    async (request, reply) => {
      const { name, data, id } = request.body;
      const post = { name, data: data as Record<string, unknown> | undefined, id };
      const answer = await receiveEvent(services, post, triggeringIdentity(request.identity), creatorPrincipal(request.identity));
      return reply.status(202).send(answer);
    },
  );

  app.get(
    '/events',
    {
      schema: {
        tags,
        operationId: 'listEvents',
        summary: 'List received events',
        description:
          'Newest first, optionally of one `name`, each with the runs it started and the problems its triggers met. Events are kept ' +
          'SWITCHYARD_EVENT_RETENTION_DAYS (default 7). A caller without `workflows-admin` sees only events that started a run of (or ' +
          'recorded a problem for) a workflow it may view, and only those runs and problems. Large payloads are left out (data null, ' +
          'dataBytes given): GET /events/{event_id} has them.',
        querystring: EventListQuery,
        response: { 200: EventListResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { name, page = 1, perPage = 20 } = request.query;
      const workflowIds = await visibleWorkflowIds(repos, request.identity);
      const { items, total } = await repos.inboundEvents.list({ name, workflowIds }, page, perPage);
      const visible = workflowIds === undefined ? undefined : new Set(workflowIds);
      const budget = new SnapshotBudget();
      return { events: items.map((event) => eventView(event, visible, budget)), pagination: pagination(total, page, perPage) };
    },
  );

  app.get(
    '/events/:event_id',
    {
      schema: {
        tags,
        operationId: 'getEvent',
        summary: 'Get an event',
        description: 'One event with its whole payload, the runs it started and its problems; 404 when it does not exist or concerns no workflow the caller may view.',
        params: EventIdParams,
        response: { 200: EventView, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) => {
      const event = await repos.inboundEvents.get(request.params.event_id);
      if (!event) throw new NotFoundError('event');
      const workflowIds = await visibleWorkflowIds(repos, request.identity);
      const visible = workflowIds === undefined ? undefined : new Set(workflowIds);
      const view = eventView(event, visible);
      if (visible !== undefined && view.runs.length === 0 && view.problems.length === 0) throw new NotFoundError('event');
      return view;
    },
  );
};

export default inboundEventRoutes;
