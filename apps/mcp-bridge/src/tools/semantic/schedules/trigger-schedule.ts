import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { ScheduleRef, schedulePath } from './schedule.ts';

export const triggerSchedule = defineTool({
  name: 'trigger_schedule',
  title: 'Run a schedule now',
  description:
    'Fires a schedule now, as one of its ticks (with its input and overlap policy, so it may be skipped or wait for the running run); ' +
    'its remaining runs are not used up, and it works while paused. Returns the outcome (`started` with runId, `skipped` with the ' +
    'reason, or `buffered`); follow a started run with get_run or watch_run.',
  kind: 'launch',
  input: z.object(ScheduleRef),
  output: z.object({
    scheduledAt: z.string(),
    outcome: z.enum(['started', 'skipped', 'buffered']),
    runId: z.string().nullable(),
    runStatus: z.string().nullable(),
    reason: z.string().nullable(),
  }),
  async run(args, { api }) {
    return api.post(schedulePath(args.workflowId, args.scheduleId, '/trigger'));
  },
});
