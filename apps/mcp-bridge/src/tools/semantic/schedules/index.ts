/** Tools of the semantic surface: the schedule group (one tool per file; issue #21 item 1). */
import type { AnyTool } from '../../../tool.ts';
import { createSchedule } from './create-schedule.ts';
import { listSchedules } from './list-schedules.ts';
import { pauseSchedule } from './pause-schedule.ts';
import { resumeSchedule } from './resume-schedule.ts';
import { triggerSchedule } from './trigger-schedule.ts';

export const SCHEDULE_TOOLS: readonly AnyTool[] = [listSchedules, createSchedule, pauseSchedule, resumeSchedule, triggerSchedule];
