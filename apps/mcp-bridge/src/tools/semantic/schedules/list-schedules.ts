import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { resolveWorkflowId } from '../../shared.ts';
import { ScheduleSchema, schedulePath, toScheduleSummary, type RestSchedule } from './schedule.ts';

export const listSchedules = defineTool({
  name: 'list_schedules',
  title: 'List schedules',
  description:
    'Lists schedules (runs started by cron or interval ticks), newest first: of one workflow (`workflowId` or `workflowName`) or of ' +
    'every workflow you may see. Each has its cron or interval, time zone, overlap policy, paused state and note, remaining runs, its ' +
    'next 5 run times and its recent outcomes (runs started, ticks skipped and why).',
  kind: 'read',
  input: z.object({
    workflowId: z.string().regex(/^[0-9a-f]{24}$/i, 'Workflow id must be a 24-character hex id').optional().describe('Only this workflow\'s schedules'),
    workflowName: z.string().min(1).max(200).optional().describe('Only the schedules of the workflow with this exact name'),
    page: z.number().int().min(1).optional(),
    limit: z.number().int().min(1).max(100).optional().describe('Schedules per page (default 20)'),
  }),
  output: z.object({ schedules: z.array(ScheduleSchema), page: z.number().int(), total: z.number().int(), totalPages: z.number().int() }),
  async run(args, { api }) {
    const workflowId = args.workflowId || args.workflowName ? await resolveWorkflowId(api, args) : undefined;
    const query = { page: args.page, perPage: args.limit ?? 20 };
    const answer = await api.get<{ schedules: RestSchedule[]; pagination: { page: number; total: number; totalPages: number } }>(
      workflowId === undefined ? '/api/v1/schedules' : schedulePath(workflowId),
      query,
    );
    return { schedules: answer.schedules.map(toScheduleSummary), page: answer.pagination.page, total: answer.pagination.total, totalPages: answer.pagination.totalPages };
  },
});
