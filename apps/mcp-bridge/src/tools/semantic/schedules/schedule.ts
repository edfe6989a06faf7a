/** What the schedule tools share: the REST paths, the shape an agent sees, and the mapping to it. */
import * as z from 'zod/v4';
import { WORKFLOWS, id } from '../../shared.ts';

/** `/api/v1/workflows/{workflowId}/schedules[/{scheduleId}[suffix]]`. */
export const schedulePath = (workflowId: string, scheduleId?: string, suffix = '') =>
  `${WORKFLOWS}/${workflowId}/schedules${scheduleId === undefined ? '' : `/${scheduleId}${suffix}`}`;

/** The arguments that address one schedule. */
export const ScheduleRef = { workflowId: id('Workflow id'), scheduleId: id('Schedule id (from list_schedules or create_schedule)') };

/** A schedule as the API answers it (the fields the tools use). */
export interface RestSchedule {
  id: string;
  workflowId: string;
  name: string;
  cron: string | null;
  intervalSeconds: number | null;
  offsetSeconds: number;
  timezone: string;
  overlapPolicy: string;
  catchupWindowSeconds: number;
  paused: boolean;
  note: string | null;
  remainingRuns: number | null;
  nextRunTimes: string[];
  recentRuns: Array<{ scheduledAt: string; status: string; runId?: string; startedAt?: string; reason?: string }>;
}

export const ScheduleSchema = z.object({
  scheduleId: z.string(),
  workflowId: z.string(),
  name: z.string(),
  cron: z.string().nullable(),
  intervalSeconds: z.number().int().nullable(),
  timezone: z.string(),
  overlapPolicy: z.string(),
  paused: z.boolean(),
  note: z.string().nullable(),
  remainingRuns: z.number().int().nullable().describe('Ticks left; null: unlimited'),
  nextRunTimes: z.array(z.string()).describe('The next 5 ticks (ISO 8601, UTC)'),
  recentRuns: z
    .array(z.object({ scheduledAt: z.string(), status: z.string(), runId: z.string().optional(), reason: z.string().optional() }))
    .describe('The last outcomes, oldest first: a run started, or `skipped` with the reason'),
});
export type ScheduleSummary = z.infer<typeof ScheduleSchema>;

/** The agent's view of a REST schedule. */
export function toScheduleSummary(schedule: RestSchedule): ScheduleSummary {
  return {
    scheduleId: schedule.id,
    workflowId: schedule.workflowId,
    name: schedule.name,
    cron: schedule.cron,
    intervalSeconds: schedule.intervalSeconds,
    timezone: schedule.timezone,
    overlapPolicy: schedule.overlapPolicy,
    paused: schedule.paused,
    note: schedule.note,
    remainingRuns: schedule.remainingRuns,
    nextRunTimes: schedule.nextRunTimes,
    recentRuns: schedule.recentRuns.map(({ scheduledAt, status, runId, reason }) => ({
      scheduledAt,
      status,
      ...(runId === undefined ? {} : { runId }),
      ...(reason === undefined ? {} : { reason }),
    })),
  };
}

/** The optional note of pause and resume. */
export const NoteArg = z.string().max(1_000).optional().describe('Why (at most 1,000 characters); replaces the earlier note');
