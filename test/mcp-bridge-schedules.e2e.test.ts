/**
 * The MCP bridge's schedule tools (issue #21 item 1) through a real SDK client against the real
 * API: list_schedules, create_schedule, pause_schedule, resume_schedule, trigger_schedule — their
 * annotations, results (validated against the listed outputSchema by `call`) and errors.
 */
import { describe, expect, it } from 'vitest';
import type { BridgeClient } from './support/bridge.ts';
import { useServiceAndBridge } from './support/bridge-hooks.ts';
import { CANVAS, echoStep, uniqueName, type TestService } from './support/service.ts';

let svc: TestService;
let bridge: BridgeClient;
useServiceAndBridge((service, client) => ([svc, bridge] = [service, client]));

const UNKNOWN_ID = '0123456789abcdef01234567';

describe('schedule tools', () => {
  // Their annotations (list reads; create, resume and trigger launch; pause writes) are checked with every tool's in mcp-bridge.e2e.test.ts.
  it('creates a schedule by workflow name, lists it, pauses and resumes it with notes, and triggers a run', async () => {
    const name = uniqueName('bridge-sched');
    const workflow = await svc.createWorkflow({ name, canvas: CANVAS, nodes: [echoStep('A')] });
    await svc.enable(workflow.id);

    const created = await bridge.call('create_schedule', { workflowName: name, name: 'mornings', cron: '0 9 * * *', timezone: 'Europe/Berlin', input: { who: 'agent' } });
    expect(created.error).toBeUndefined();
    expect(created.data).toMatchObject({ workflowId: workflow.id, name: 'mornings', cron: '0 9 * * *', timezone: 'Europe/Berlin', overlapPolicy: 'skip', paused: false });
    expect(created.data.nextRunTimes).toHaveLength(5);
    for (const at of created.data.nextRunTimes) expect([7, 8]).toContain(new Date(at).getUTCHours()); // 09:00 CET/CEST
    const scheduleId = created.data.scheduleId;

    const listed = await bridge.call('list_schedules', { workflowId: workflow.id });
    expect(listed.data).toMatchObject({ total: 1, schedules: [{ scheduleId, name: 'mornings' }] });
    expect((await bridge.call('list_schedules', {})).data.schedules.map((s: any) => s.scheduleId)).toContain(scheduleId);

    const paused = await bridge.call('pause_schedule', { workflowId: workflow.id, scheduleId, note: 'holiday' });
    expect(paused.data).toMatchObject({ paused: true, note: 'holiday' });
    const resumed = await bridge.call('resume_schedule', { workflowId: workflow.id, scheduleId, note: 'back' });
    expect(resumed.data).toMatchObject({ paused: false, note: 'back' });

    const triggered = await bridge.call('trigger_schedule', { workflowId: workflow.id, scheduleId });
    expect(triggered.data).toMatchObject({ outcome: 'started', reason: null });
    const run = await svc.waitForRun(workflow.id, triggered.data.runId);
    expect(run).toMatchObject({ status: 'completed', triggerSource: 'schedule', scheduleId, initialInput: { who: 'agent' } });
  });

  it('reports errors with stable codes: bad cron, unknown schedule, unknown workflow, unknown argument', async () => {
    const workflow = await svc.createWorkflow({ name: uniqueName('bridge-sched-bad'), canvas: CANVAS, nodes: [echoStep('A')] });
    const badCron = await bridge.call('create_schedule', { workflowId: workflow.id, name: 'x', cron: '99 * * * *' });
    expect(badCron.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(badCron.error?.details?.problems?.join()).toMatch(/^\/cron: /);
    expect((await bridge.call('pause_schedule', { workflowId: workflow.id, scheduleId: UNKNOWN_ID })).error).toMatchObject({ code: 'SCHEDULE_NOT_FOUND' });
    expect((await bridge.call('trigger_schedule', { workflowId: UNKNOWN_ID, scheduleId: UNKNOWN_ID })).error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
    expect((await bridge.call('list_schedules', { workflowName: 'no such workflow anywhere' })).error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
    expect((await bridge.call('resume_schedule', { workflowId: workflow.id, scheduleId: UNKNOWN_ID, extra: 1 })).error).toMatchObject({ code: 'INVALID_INPUT' });
    expect((await bridge.call('pause_schedule', { workflowId: workflow.id, scheduleId: UNKNOWN_ID, note: 'x'.repeat(1001) })).error).toMatchObject({ code: 'INVALID_INPUT' });
  });
});
