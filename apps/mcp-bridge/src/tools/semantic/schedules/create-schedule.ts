import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { resolveWorkflowId } from '../../shared.ts';
import { ScheduleSchema, schedulePath, toScheduleSummary, type RestSchedule } from './schedule.ts';

export const createSchedule = defineTool({
  name: 'create_schedule',
  title: 'Create a schedule',
  description:
    'Makes a workflow run on a schedule. Give exactly one of `cron` (5 fields "minute hour day month weekday", or 6 with seconds first, ' +
    'read in `timezone`, e.g. "0 9 * * 1-5" with "Europe/Berlin" for 9:00 on weekdays) and `intervalSeconds` (every N seconds). Each tick ' +
    'starts a run with `input` (checked against the workflow\'s declared inputs). `overlapPolicy` says what a tick does while the previous ' +
    'run is still going: skip (default), buffer_one, buffer_all, cancel_other, allow_all. Returns the schedule with its next 5 run times.',
  kind: 'launch',
  input: z.object({
    workflowId: z.string().regex(/^[0-9a-f]{24}$/i, 'Workflow id must be a 24-character hex id').optional().describe('The workflow to schedule'),
    workflowName: z.string().min(1).max(200).optional().describe('Or its exact name'),
    name: z.string().min(1).max(200).describe('Unique among the workflow\'s schedules'),
    cron: z.string().min(1).max(256).optional(),
    intervalSeconds: z.number().int().min(1).optional(),
    timezone: z.string().min(1).max(100).optional().describe('IANA time zone of the cron (default UTC)'),
    input: z.record(z.string(), z.unknown()).optional().describe('The input of every run'),
    overlapPolicy: z.enum(['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all']).optional(),
    remainingRuns: z.number().int().min(1).optional().describe('Stop after this many runs (default: unlimited)'),
    paused: z.boolean().optional().describe('Create it paused'),
    note: z.string().max(1_000).optional(),
  }),
  output: ScheduleSchema,
  async run(args, { api }) {
    const { workflowId: _id, workflowName: _name, ...body } = args;
    const workflowId = await resolveWorkflowId(api, args);
    return toScheduleSummary(await api.post<RestSchedule>(schedulePath(workflowId), body));
  },
});
