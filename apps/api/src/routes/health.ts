/**
 * Probes (issue #20 item 1), public (outside `/api/`: no credential, no scope, no rate limit):
 *
 * - `GET /livez`: the process answers; nothing else is touched (the event loop alone).
 * - `GET /healthz`: the same, kept for existing probes.
 * - `GET /readyz`: may this instance take traffic? 200 `{ status: 'ready', checks }` when the store
 *   accepts a write and every background loop turned within twice its interval, else 503
 *   `{ status: 'unavailable', checks }` with the failing check's `ok: false` and `error`
 *   (services/readiness.ts: bounded by a 2 s timeout, cached for 1 s).
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppServices } from '../services/index.ts';
import type { ReadinessReport } from '../services/readiness.ts';

const tags = ['health'];

const Liveness = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false, description: 'The process answers' });

const checkFields = {
  ok: Type.Boolean({ description: 'Did this check pass?' }),
  error: Type.Optional(Type.String({ description: 'Why it failed (absent when ok)' })),
};

const StoreCheck = Type.Object(
  { ...checkFields, latencyMs: Type.Optional(Type.Integer({ minimum: 0, description: 'How long the write took, ms' })) },
  { additionalProperties: false, description: 'The store answered and accepted a write (an upsert into the `health` collection) within 2 s' },
);

const LoopCheck = (what: string) =>
  Type.Object(
    {
      ...checkFields,
      running: Type.Boolean({ description: 'Is this loop running in this instance? A loop not running passes' }),
      intervalMs: Type.Integer({ minimum: 0, description: 'Its period, ms' }),
      lastRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When its last pass finished without an error (null before the first)' }),
    },
    { additionalProperties: false, description: `${what}: finished a pass within twice its interval` },
  );

/** The readiness report (services/readiness.ts `ReadinessReport`), described as the answer of one status. */
const readinessReport = (description: string) =>
  Type.Object(
    {
      status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
      checkedAt: Type.String({ format: 'date-time', description: 'When the checks were made (a result is reused for 1 s)' }),
      checks: Type.Object(
        {
          store: StoreCheck,
          recovery: Type.Optional(LoopCheck('The recovery scan of runs without a live owner (SWITCHYARD_RECOVERY_INTERVAL_MS)')),
          timeoutSweeper: Type.Optional(LoopCheck('The HITL and run timeout sweeper (SWITCHYARD_SWEEP_INTERVAL_MS)')),
          retention: Type.Optional(LoopCheck('The retention sweeper (SWITCHYARD_RETENTION_INTERVAL_MS)')),
          schedules: Type.Optional(LoopCheck('The schedule loop (SWITCHYARD_SCHEDULE_INTERVAL_MS)')),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, description },
  );

/** Without a readiness check (an app built on partial services, e.g. for the OpenAPI document): ready, store unchecked. */
const UNCHECKED = async (): Promise<ReadinessReport> => ({ status: 'ready', checkedAt: new Date().toISOString(), checks: { store: { ok: true } } });

const healthRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  const liveness = async () => ({ status: 'ok' as const });
  app.get(
    '/livez',
    {
      schema: {
        tags,
        operationId: 'getLiveness',
        summary: 'Liveness probe',
        description: 'Answers 200 while the process answers requests; touches nothing else (no store, no engine). Public: no credential needed.',
        response: { 200: Liveness },
      },
    },
    liveness,
  );
  app.get(
    '/healthz',
    {
      schema: {
        tags,
        operationId: 'getHealth',
        summary: 'Liveness probe (alias of /livez)',
        description: 'The same as `GET /livez`, kept for existing probes. Public.',
        response: { 200: Liveness },
      },
    },
    liveness,
  );
  const readiness = services.readiness ? () => services.readiness!.check() : UNCHECKED;
  app.get(
    '/readyz',
    {
      schema: {
        tags,
        operationId: 'getReadiness',
        summary: 'Readiness probe',
        description:
          'Answers 200 `ready` when this instance can take traffic: the store accepted a write within 2 s and the recovery scan, the timeout ' +
          'sweeper and the retention sweeper each finished a pass within twice their interval. Otherwise 503 `unavailable`, with `ok: false` ' +
          'and an `error` on each failing check. A result is reused for 1 s, so any number of probes costs at most one store write a second. Public.',
        response: {
          200: readinessReport('Ready: every check passed'),
          503: readinessReport('Not ready: at least one check failed (`ok: false`, with `error`)'),
        },
      },
    },
    async (_request, reply) => {
      const report = await readiness();
      return reply.code(report.status === 'ready' ? 200 : 503).send(report);
    },
  );
};

export default healthRoutes;
