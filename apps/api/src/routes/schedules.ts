/**
 * Schedule routes (issue #21 item 1; docs/guide/schedules.md), registered under /api/v1:
 * CRUD under `/workflows/{workflow_id}/schedules[/{schedule_id}]`, `/trigger`, `/pause`,
 * `/resume`, `/backfill`, and `GET /schedules` across the workflows the caller may see. Roles:
 * viewer reads, editor creates, changes and deletes, operator triggers, pauses, resumes and
 * backfills. The use cases live in services/schedule-service.ts.
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AllSchedulesQuery,
  ErrorBody,
  ScheduleBackfillBody,
  ScheduleBackfillResponse,
  ScheduleCreateBody,
  ScheduleListQuery,
  ScheduleListResponse,
  ScheduleNoteBody,
  ScheduleTickOutcome,
  ScheduleUpdateBody,
  ScheduleView,
  objectIdString as id,
} from '@switchyard/domain';
import type { AppServices } from '../services/index.ts';
import {
  backfillSchedule,
  createSchedule,
  deleteSchedule,
  listAllSchedules,
  listSchedules,
  requireSchedule,
  scheduleView,
  setSchedulePaused,
  triggerSchedule,
  updateSchedule,
} from '../services/schedule-service.ts';
import { callerActor, triggeringIdentity } from '../auth/identity.ts';
import { visibleWorkflowIds } from '../access/visibility.ts';
import { WorkflowParams } from './params.ts';

const tags = ['schedules'];

const ScheduleParams = Type.Object({ workflow_id: id('Workflow definition id'), schedule_id: id('Schedule id') });

const SCHEDULE_PATH = '/workflows/:workflow_id/schedules/:schedule_id';

const scheduleRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  /** The user id a change is recorded under (the caller's stable id). */

  app.get(
    '/schedules',
    {
      schema: {
        tags,
        operationId: 'listAllSchedules', summary: 'List schedules across workflows',
        description: 'Newest first. Only schedules of workflows the caller may view are listed (and counted in `pagination`).',
        querystring: AllSchedulesQuery,
        response: { 200: ScheduleListResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { workflowId, page = 1, perPage = 20 } = request.query;
      return listAllSchedules(services, await visibleWorkflowIds(services.repos, request.identity), workflowId, page, perPage);
    },
  );

  app.get(
    '/workflows/:workflow_id/schedules',
    {
      schema: {
        tags,
        operationId: 'listSchedules', summary: 'List the schedules of a workflow',
        description: 'Newest first, each with its next 5 run times and last 10 outcomes.',
        params: WorkflowParams,
        querystring: ScheduleListQuery,
        response: { 200: ScheduleListResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => {
      const { page = 1, perPage = 20 } = request.query;
      return listSchedules(services, request.params.workflow_id, page, perPage);
    },
  );

  app.post(
    '/workflows/:workflow_id/schedules',
    {
      schema: {
        tags,
        operationId: 'createSchedule', summary: 'Create a schedule',
        description:
          'Exactly one of `cron` (5 or 6 fields, read in `timezone`, default UTC) and `intervalSeconds` (ticks at multiples of it since the Unix ' +
          'epoch, plus `offsetSeconds`). Each tick starts a run of the workflow (`triggerSource: "schedule"`, `scheduleId`, `scheduledAt`) with ' +
          '`input`, which must match the workflow\'s declared inputs. A schedule starts runs, so creating or changing one needs the ' +
          '`workflows-control` scope (as a trigger does) and the editor role; its period must be at least `SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS` ' +
          '(default 10 s). 400 names every problem by path; 409 on a taken name or beyond 100 schedules per workflow.',
        params: WorkflowParams,
        body: ScheduleCreateBody,
        response: { 201: ScheduleView, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      config: { rateLimitGroup: 'definitions', scope: 'workflows-control', workflowRole: 'editor' },
    },
    async (request, reply) => {
      const created = await createSchedule(services, request.params.workflow_id, request.body, callerActor(request.identity));
      return reply.status(201).send(scheduleView(created));
    },
  );

  app.get(
    SCHEDULE_PATH,
    {
      schema: {
        tags,
        operationId: 'getSchedule', summary: 'Get a schedule',
        description: 'Its settings, `nextRunTimes` (the next 5 ticks), `recentRuns` (the last 10 outcomes) and buffered ticks.',
        params: ScheduleParams,
        response: { 200: ScheduleView, 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'viewer' },
    },
    async (request) => scheduleView(await requireSchedule(services, request.params.workflow_id, request.params.schedule_id)),
  );

  app.put(
    SCHEDULE_PATH,
    {
      schema: {
        tags,
        operationId: 'updateSchedule', summary: 'Update a schedule',
        description: 'The fields given change; giving `cron` or `intervalSeconds` replaces the kind of spec. A changed spec or a resume computes the next tick from now.',
        params: ScheduleParams,
        body: ScheduleUpdateBody,
        response: { 200: ScheduleView, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      config: { rateLimitGroup: 'definitions', scope: 'workflows-control', workflowRole: 'editor' },
    },
    async (request) => scheduleView(await updateSchedule(services, request.params.workflow_id, request.params.schedule_id, request.body, callerActor(request.identity))),
  );

  app.delete(
    SCHEDULE_PATH,
    {
      schema: {
        tags,
        operationId: 'deleteSchedule', summary: 'Delete a schedule',
        description: 'No more ticks; its buffered ticks are dropped. Runs it started stay.',
        params: ScheduleParams,
        response: { 204: Type.Null(), 400: ErrorBody, 404: ErrorBody },
      },
      config: { workflowRole: 'editor' },
    },
    async (request, reply) => {
      await deleteSchedule(services, request.params.workflow_id, request.params.schedule_id, callerActor(request.identity));
      return reply.status(204).send(null);
    },
  );

  app.post(
    `${SCHEDULE_PATH}/trigger`,
    {
      schema: {
        tags,
        operationId: 'triggerSchedule', summary: 'Run a schedule now',
        description:
          'A tick with `scheduledAt` = now, the overlap policy applied (so it may be skipped or buffered), triggered by the caller; ' +
          '`remainingRuns` is not consumed; works while paused. The outcome is also recorded in `recentRuns`.',
        params: ScheduleParams,
        response: { 200: ScheduleTickOutcome, 400: ErrorBody, 404: ErrorBody },
      },
      config: { rateLimitGroup: 'triggers', scope: 'workflows-control', workflowRole: 'operator' },
    },
    async (request) => triggerSchedule(services, request.params.workflow_id, request.params.schedule_id, triggeringIdentity(request.identity)),
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `${SCHEDULE_PATH}/${action}`,
      {
        schema: {
          tags,
          operationId: `${action}Schedule`,
          summary: action === 'pause' ? 'Pause a schedule' : 'Resume a schedule',
          description:
            (action === 'pause'
              ? 'No tick fires while paused (trigger and backfill still work). '
              : 'Ticks fire again from the next one after now; the ticks of the pause are not fired. ') +
            'A `note` replaces the earlier one.',
          params: ScheduleParams,
          body: ScheduleNoteBody,
          response: { 200: ScheduleView, 400: ErrorBody, 404: ErrorBody },
        },
        config: { scope: 'workflows-control', workflowRole: 'operator' },
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) =>
        scheduleView(await setSchedulePaused(services, request.params.workflow_id, request.params.schedule_id, action === 'pause', request.body.note, callerActor(request.identity))),
    );
  }

  app.post(
    `${SCHEDULE_PATH}/backfill`,
    {
      schema: {
        tags,
        operationId: 'backfillSchedule', summary: 'Backfill a range of ticks',
        description:
          'Fires every tick of the schedule in [startAt, endAt), in order, with `overlapPolicy` (default the schedule\'s), triggered by the ' +
          'caller; `remainingRuns` is not consumed. At most 1,000 ticks per request: a larger range is a 400 and fires nothing.',
        params: ScheduleParams,
        body: ScheduleBackfillBody,
        response: { 200: ScheduleBackfillResponse, 400: ErrorBody, 404: ErrorBody },
      },
      config: { rateLimitGroup: 'triggers', scope: 'workflows-control', workflowRole: 'operator' },
    },
    async (request) => backfillSchedule(services, request.params.workflow_id, request.params.schedule_id, request.body, triggeringIdentity(request.identity)),
  );
};

export default scheduleRoutes;
