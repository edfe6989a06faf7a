import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { NoteArg, ScheduleRef, ScheduleSchema, schedulePath, toScheduleSummary, type RestSchedule } from './schedule.ts';

export const resumeSchedule = defineTool({
  name: 'resume_schedule',
  title: 'Resume a schedule',
  description: 'Resumes a paused schedule: ticks fire again from the next one after now (the ticks of the pause are not made up). The `note` replaces the earlier note. Returns the schedule with its next run times.',
  kind: 'launch',
  input: z.object({ ...ScheduleRef, note: NoteArg }),
  output: ScheduleSchema,
  async run(args, { api }) {
    const body = args.note === undefined ? {} : { note: args.note };
    return toScheduleSummary(await api.post<RestSchedule>(schedulePath(args.workflowId, args.scheduleId, '/resume'), body));
  },
});
