import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { NoteArg, ScheduleRef, ScheduleSchema, schedulePath, toScheduleSummary, type RestSchedule } from './schedule.ts';

export const pauseSchedule = defineTool({
  name: 'pause_schedule',
  title: 'Pause a schedule',
  description: 'Pauses a schedule: no tick starts a run until resume_schedule (runs already started go on). The `note` (why, until when) replaces the earlier note. Returns the schedule.',
  kind: 'write',
  input: z.object({ ...ScheduleRef, note: NoteArg }),
  output: ScheduleSchema,
  async run(args, { api }) {
    const body = args.note === undefined ? {} : { note: args.note };
    return toScheduleSummary(await api.post<RestSchedule>(schedulePath(args.workflowId, args.scheduleId, '/pause'), body));
  },
});
