/**
 * Run events (issue "Run control" item 6): `GET .../runs/{run_id}/events` pages through a run's
 * event log by `seq`, and `GET .../runs/{run_id}/events/stream` follows it live as Server-Sent
 * Events (`id:` = seq; `Last-Event-ID` or `?afterSeq=` resumes; keep-alive comments; the stream
 * ends after the run's final event). Events this process writes are pushed at once through the
 * store's writer listener; events of other instances are found by polling every second. Open
 * streams are closed when the app closes (clients resume with `Last-Event-ID`).
 *
 * Streams are bounded (issue #16 item 9): one caller (its user, else its address) holds at most
 * `maxPerCaller` at once (one more is a 429 `rate_limited`), and the service ends a stream after
 * `maxLifetimeMs` or when the caller's credential expires (a JWT's `exp`), whichever comes first;
 * a client resumes with `Last-Event-ID` (and a fresh token).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import {
  ErrorBody,
  FINAL_RUN_EVENT_TYPES,
  InvalidRequestError,
  MAX_EVENTS_PER_PAGE,
  RunEventListQuery,
  RunEventListResponse,
  SwitchyardError,
  isTerminalRunStatus,
  parseEventTypes,
  toRunEventView,
  type RunEventType,
} from '@switchyard/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { KeyedCounts } from '../keyed-counts.ts';
import type { AppServices } from '../services/index.ts';
import { requireRun } from '../services/workflow-service.ts';
import { RunParams } from './params.ts';

const tags = ['runs'];

/** How often a stream looks for events written by other instances, milliseconds. */
const POLL_MS = 1_000;

/**
 * How long a stream keeps looking for the final event of a run whose status already ended, ms:
 * the owner sets the status first and appends the event just after (on another instance, the
 * next poll finds it).
 */
const FINAL_EVENT_GRACE_MS = 5_000;

/** The `types` filter, or a 400 naming the unknown types. */
function eventTypes(types: string | undefined): RunEventType[] | undefined {
  const parsed = parseEventTypes(types);
  if (!parsed.ok) throw new InvalidRequestError(parsed.message);
  return parsed.types;
}

/** True when the client asked for Server-Sent Events. */
function acceptsEventStream(accept: string | undefined): boolean {
  return accept?.includes('text/event-stream') ?? false;
}

/** Bounds of event streams (config.ts `EdgeConfig`). */
export interface StreamLimits {
  /** Streams one caller may hold open at once. */
  maxPerCaller: number;
  /** Longest life of one stream, ms. */
  maxLifetimeMs: number;
  /** Who a stream counts for (the app's caller key: user id, else client address). */
  keyOf: (request: FastifyRequest) => string;
}

const eventRoutes: FastifyPluginAsyncTypebox<{ services: AppServices; streams: StreamLimits }> = async (app, { services, streams }) => {
  const { repos } = services;
  /** Open streams per caller key. */
  const streamsOf = new KeyedCounts();
  /** Counts a stream for `request`'s caller until its response closes; throws 429 when the caller holds the most already. */
  const holdStream = (request: FastifyRequest, reply: FastifyReply): void => {
    const key = streams.keyOf(request);
    if (!streamsOf.tryTake(key, streams.maxPerCaller)) {
      throw new SwitchyardError(
        'rate_limited',
        429,
        `Too many open event streams: at most ${streams.maxPerCaller} per caller (SWITCHYARD_SSE_MAX_STREAMS_PER_CALLER); close one first`,
      );
    }
    // The response's end, not the socket's: a keep-alive connection outlives the stream.
    reply.raw.once('close', () => streamsOf.release(key));
  };
  /** Closers of the streams open now (app shutdown ends them). */
  const openStreams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const close of [...openStreams]) close();
  });

  app.get(
    '/:workflow_id/runs/:run_id/events',
    {
      schema: {
        tags,
        operationId: 'listRunEvents', summary: "List a run's events",
        description: `In seq order (1, 2, 3, ... without gaps), after \`afterSeq\`, at most \`limit\` (≤ ${MAX_EVENTS_PER_PAGE}); \`types\` (comma-separated) and \`nodeId\` filter.`,
        params: RunParams,
        querystring: RunEventListQuery,
        response: { 200: RunEventListResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const run = await requireRun(services, request.params.workflow_id, request.params.run_id);
      const { afterSeq = 0, limit = 100, nodeId } = request.query;
      const events = await repos.events.list(run.id, { afterSeq, limit, types: eventTypes(request.query.types), nodeId });
      return { runId: run.id, events: events.map(toRunEventView) };
    },
  );

  app.get(
    '/:workflow_id/runs/:run_id/events/stream',
    {
      sse: true,
      config: { workflowRole: 'viewer' },
      schema: {
        tags,
        operationId: 'streamRunEvents', summary: "Follow a run's events live (Server-Sent Events)",
        description:
          'Send `Accept: text/event-stream` (else 406). One `event: <type>` message per run event with `id: <seq>` and the event ' +
          "(as in the list) as JSON data. Resumes after `Last-Event-ID` or `?afterSeq=`; sends keep-alive comments; ends after the run's final event.",
        params: RunParams,
        querystring: Type.Object({ afterSeq: Type.Optional(Type.Integer({ minimum: 0 })) }),
        response: {
          200: {
            description: 'The event stream',
            content: { 'text/event-stream': { schema: Type.String({ description: 'id: <seq>\nevent: <type>\ndata: <RunEventView as JSON>\n\n, repeated' }) } },
          },
          400: ErrorBody,
          404: ErrorBody,
          406: ErrorBody,
        },
      },
      // Answered before the stream starts, so that errors keep their status and body.
      preHandler: async (request, reply) => {
        if (!acceptsEventStream(request.headers.accept)) {
          throw new SwitchyardError('invalid_request', 406, 'This endpoint streams Server-Sent Events: send the header Accept: text/event-stream');
        }
        await requireRun(services, request.params.workflow_id, request.params.run_id);
        holdStream(request, reply);
      },
    },
    async (request, reply) => {
      const runId = request.params.run_id;
      const resumeFrom = Number.parseInt(reply.sse.lastEventId ?? '', 10);
      let afterSeq = Number.isSafeInteger(resumeFrom) && resumeFrom >= 0 ? resumeFrom : (request.query.afterSeq ?? 0);
      let open = true;
      let dirty = false; // an event was appended since the last read
      let wake: (() => void) | undefined;
      const nudge = () => {
        dirty = true;
        wake?.();
      };
      const stopListening = repos.events.onAppend((event) => {
        if (event.runId === runId) nudge();
      });
      const close = () => {
        open = false;
        nudge();
      };
      openStreams.add(close);
      // The stream ends with its lifetime or its credential, whichever is first.
      const expiresAt = request.identity.expiresAt;
      const lifetimeMs = Math.min(streams.maxLifetimeMs, expiresAt === undefined ? Infinity : expiresAt - services.clock.now().getTime());
      const cancelExpiry = services.clock.after(Math.max(0, lifetimeMs), close);
      reply.sse.keepAlive();
      reply.sse.onClose(close);
      let endedSince: number | undefined; // when the run was first seen ended without its final event
      try {
        for (let finished = false; open && !finished; ) {
          dirty = false;
          const events = await repos.events.list(runId, { afterSeq, limit: MAX_EVENTS_PER_PAGE });
          for (const event of events) {
            if (!open) break;
            await reply.sse.send({ id: String(event.seq), event: event.type, data: toRunEventView(event) });
            afterSeq = event.seq;
            if (FINAL_RUN_EVENT_TYPES.includes(event.type as RunEventType)) finished = true;
          }
          if (finished || events.length === MAX_EVENTS_PER_PAGE || dirty) continue;
          const status = await repos.runs.statusOf(runId);
          if (status === null) break; // deleted meanwhile
          if (isTerminalRunStatus(status)) {
            endedSince ??= Date.now();
            if (Date.now() - endedSince > FINAL_EVENT_GRACE_MS) break; // older data without a final event
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, POLL_MS);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
            if (dirty || !open) wake();
          });
          wake = undefined;
        }
      } finally {
        cancelExpiry();
        openStreams.delete(close);
        stopListening();
        reply.sse.close();
      }
    },
  );
};

export default eventRoutes;
