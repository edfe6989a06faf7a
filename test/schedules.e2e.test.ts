/**
 * Schedules over real HTTP (issue #21 item 1; docs/guide/schedules.md) on a ManualClock: CRUD and
 * the schedule document, ticks starting runs (`triggerSource: "schedule"`, `scheduleId`,
 * `scheduledAt`, the schedule's input), every overlap policy against a run held at a gate, pause
 * and resume with notes, trigger now, backfill (and 400 beyond 1,000 ticks), `remainingRuns`, a
 * disabled workflow's ticks, catch-up inside and outside the window, deletion with the workflow,
 * and the abuse cases (sizes, counts, bad specs, roles).
 *
 * The loop's timer is not started: each test moves the clock and runs one pass
 * (`svc.scheduleLoop.pass()`), so exactly the ticks due at that instant fire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { Authenticator } from '@switchyard/api';
import { CANVAS, echoStep, nested, startService, uniqueName, wf, type TestService } from './support/service.ts';
import { call, jwtAuthConfig, signToken } from './support/jwt-callers.ts';

const START = Date.UTC(2026, 0, 1);
let clock: ManualClock;
let svc: TestService;

beforeAll(async () => {
  clock = new ManualClock(START);
  // The sweeper's timer would fire on every advance: once an hour is enough here.
  svc = await startService({ clock, sweepIntervalMs: 3_600_000 });
});
afterAll(async () => {
  await svc.close();
});

const gated = (name: string) => echoStep(name, {}, { humanReview: { requiresConfirmation: true } });

/** A new enabled workflow: one echo step, or one step held at a confirmation gate. */
async function workflow(kind: 'echo' | 'gated' = 'echo', extra: Record<string, unknown> = {}): Promise<string> {
  const created = await svc.createWorkflow({ name: uniqueName(`sched-${kind}`), canvas: CANVAS, nodes: [kind === 'echo' ? echoStep('A') : gated('G')], ...extra });
  await svc.enable(created.id);
  return created.id as string;
}

const schedules = (workflowId: string, suffix = '') => wf(`/${workflowId}/schedules${suffix}`);

async function createSchedule(workflowId: string, body: Record<string, unknown>): Promise<any> {
  const response = await svc.api.post(schedules(workflowId), { name: uniqueName('s'), ...body });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const getSchedule = async (workflowId: string, id: string) => (await svc.api.get(schedules(workflowId, `/${id}`))).body;

/** Moves the clock by `ms` and runs one loop pass. */
async function tick(ms: number): Promise<void> {
  await clock.advance(ms);
  await svc.scheduleLoop.pass();
}

/** The runs a schedule started, oldest first. */
async function runsOf(workflowId: string, scheduleId: string): Promise<any[]> {
  const response = await svc.api.get(wf(`/${workflowId}/runs?perPage=100&includeNodeRuns=false`));
  return (response.body.runs as any[]).filter((run) => run.scheduleId === scheduleId).sort((a, b) => a.scheduledAt.localeCompare(b.scheduledAt));
}

/** Confirms the gate of a run held at it, and waits for the run to complete. */
async function release(workflowId: string, runId: string): Promise<void> {
  const run = await svc.waitForGate(workflowId, runId);
  expect((await svc.approve(workflowId, runId, { stepId: run.pendingRequirements[0].stepId, resolution: 'confirm' })).status).toBe(200);
  expect((await svc.waitForRun(workflowId, runId)).status).toBe('completed');
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('schedule documents', () => {
  it('creates a cron schedule in Europe/Berlin and shows its next 5 run times; lists, updates and deletes it', async () => {
    const workflowId = await workflow();
    const created = await createSchedule(workflowId, { name: 'morning', cron: '0 9 * * *', timezone: 'Europe/Berlin', input: { greeting: 'hi' }, note: 'daily' });
    // 09:00 CET is 08:00Z in January.
    expect(clock.now().getTime()).toBe(START);
    const firstDay = Date.UTC(2026, 0, 1, 8);
    expect(created.nextRunTimes).toEqual([0, 1, 2, 3, 4].map((day) => iso(firstDay + day * 86_400_000)));
    expect(created).toMatchObject({ name: 'morning', timezone: 'Europe/Berlin', overlapPolicy: 'skip', catchupWindowSeconds: 60, paused: false, note: 'daily', remainingRuns: null, recentRuns: [], input: { greeting: 'hi' } });

    expect((await svc.api.get(schedules(workflowId))).body).toMatchObject({ schedules: [{ id: created.id }], pagination: { total: 1 } });
    const all = await svc.api.get(`/api/v1/schedules?workflowId=${workflowId}`);
    expect(all.body.schedules.map((s: any) => s.id)).toEqual([created.id]);

    const updated = await svc.api.put(schedules(workflowId, `/${created.id}`), { intervalSeconds: 3600, note: 'hourly now' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ cron: null, intervalSeconds: 3600, note: 'hourly now', version: 2 });
    expect(new Date(updated.body.nextRunTimes[0]).getTime() % 3_600_000).toBe(0);

    expect((await svc.api.post(schedules(workflowId), { name: 'morning', intervalSeconds: 60 })).status).toBe(409);
    expect((await svc.api.delete(schedules(workflowId, `/${created.id}`))).status).toBe(204);
    expect((await svc.api.get(schedules(workflowId, `/${created.id}`))).body.detail).toMatchObject({ error: 'resource_not_found', resource: 'schedule' });
  });

  it("a tick starts a run with triggerSource schedule, scheduleId, scheduledAt and the schedule's input, triggered by the schedule", async () => {
    const workflowId = await workflow('echo', { inputSchema: { type: 'object', properties: { n: { type: 'integer' }, mode: { type: 'string', default: 'auto' } }, required: ['n'] } });
    const schedule = await createSchedule(workflowId, { intervalSeconds: 60, input: { n: 7 } });
    const due = new Date(schedule.nextRunTimes[0]).getTime();
    await tick(due - clock.now().getTime());
    const [run] = await runsOf(workflowId, schedule.id);
    expect(run).toMatchObject({ triggerSource: 'schedule', scheduleId: schedule.id, scheduledAt: iso(due) });
    const detail = await svc.waitForRun(workflowId, run.runId ?? run.id);
    expect(detail.initialInput).toEqual({ n: 7, mode: 'auto' });
    expect(detail.triggeredBy).toMatchObject({ userId: `schedule:${schedule.id}`, username: `schedule:${schedule.name}`, via: 'system' });
    const after = await getSchedule(workflowId, schedule.id);
    expect(after.recentRuns).toEqual([{ scheduledAt: iso(due), startedAt: iso(clock.now().getTime()), runId: detail.id, status: 'pending' }]);
    expect(after.nextRunTimes[0]).toBe(iso(due + 60_000));
    // A second pass at the same instant fires nothing more.
    await svc.scheduleLoop.pass();
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(1);
  });
});

describe('overlap policies, with the first run held at a gate', () => {
  /** A gated workflow, a 60 s schedule with `overlapPolicy`, and its first tick fired (run held at the gate). */
  async function held(overlapPolicy: string, extra: Record<string, unknown> = {}) {
    const workflowId = await workflow('gated');
    const schedule = await createSchedule(workflowId, { intervalSeconds: 60, overlapPolicy, ...extra });
    const first = new Date(schedule.nextRunTimes[0]).getTime();
    await tick(first - clock.now().getTime());
    const [run] = await runsOf(workflowId, schedule.id);
    await svc.waitForGate(workflowId, run.id);
    return { workflowId, schedule, first, firstRunId: run.id as string };
  }

  it('skip: a tick during the run is skipped and recorded', async () => {
    const { workflowId, schedule, first, firstRunId } = await held('skip');
    await tick(60_000);
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(1);
    const { recentRuns } = await getSchedule(workflowId, schedule.id);
    expect(recentRuns[1]).toEqual({ scheduledAt: iso(first + 60_000), status: 'skipped', reason: expect.stringContaining(`run ${firstRunId} of this schedule is still awaiting_approval`) });
  });

  it('buffer_one: one tick waits and starts when the run ends; later ones are skipped', async () => {
    const { workflowId, schedule, first, firstRunId } = await held('buffer_one');
    await tick(60_000);
    await tick(60_000);
    const during = await getSchedule(workflowId, schedule.id);
    expect(during.bufferedTicks).toEqual([iso(first + 60_000)]);
    expect(during.recentRuns.at(-1)).toMatchObject({ scheduledAt: iso(first + 120_000), status: 'skipped', reason: expect.stringContaining('buffer_one') });
    await release(workflowId, firstRunId);
    await svc.scheduleLoop.pass();
    const runs = await runsOf(workflowId, schedule.id);
    expect(runs.map((run) => run.scheduledAt)).toEqual([iso(first), iso(first + 60_000)]);
    expect((await getSchedule(workflowId, schedule.id)).bufferedTicks).toEqual([]);
  });

  it('buffer_all: every tick waits and they start in order, one after the other', async () => {
    const { workflowId, schedule, first, firstRunId } = await held('buffer_all');
    await tick(60_000);
    await tick(60_000);
    expect((await getSchedule(workflowId, schedule.id)).bufferedTicks).toEqual([iso(first + 60_000), iso(first + 120_000)]);
    await release(workflowId, firstRunId);
    await svc.scheduleLoop.pass();
    let runs = await runsOf(workflowId, schedule.id);
    expect(runs.map((run) => run.scheduledAt)).toEqual([iso(first), iso(first + 60_000)]);
    // The second run holds the third tick back until it ends too.
    await svc.scheduleLoop.pass();
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(2);
    await release(workflowId, runs[1].id);
    await svc.scheduleLoop.pass();
    runs = await runsOf(workflowId, schedule.id);
    expect(runs.map((run) => run.scheduledAt)).toEqual([iso(first), iso(first + 60_000), iso(first + 120_000)]);
  });

  it('a buffered tick fired again after its loop stopped stays buffered once: not skipped, its run not given back', async () => {
    const { workflowId, schedule, first, firstRunId } = await held('buffer_one', { remainingRuns: 5 });
    const settle = svc.repos.schedules.settleTick;
    svc.repos.schedules.settleTick = () => Promise.reject(new Error('process stopped'));
    try {
      await tick(60_000); // buffered, then the loop "stops" before settling
    } finally {
      svc.repos.schedules.settleTick = settle;
    }
    await tick(61_000); // in flight for more than a minute: fired again (and the next tick is skipped: buffer_one is full)
    const after = await getSchedule(workflowId, schedule.id);
    expect(after.bufferedTicks).toEqual([iso(first + 60_000)]);
    expect(after.recentRuns.filter((entry: any) => entry.scheduledAt === iso(first + 60_000))).toEqual([]);
    expect(after.remainingRuns).toBe(3); // the first run and the buffered tick took theirs; the skipped one gave its back
    await release(workflowId, firstRunId);
    await svc.scheduleLoop.pass();
    expect((await runsOf(workflowId, schedule.id)).map((run) => run.scheduledAt)).toEqual([iso(first), iso(first + 60_000)]);
  });

  it('buffered ticks skipped later give back only the runs the loop took (not those of trigger or backfill)', async () => {
    const { workflowId, schedule, first, firstRunId } = await held('buffer_all', { remainingRuns: 10 });
    await tick(60_000); // the loop's tick: buffered, its run taken
    const path = schedules(workflowId, `/${schedule.id}`);
    await clock.advance(1_000);
    const triggered = await svc.api.post(`${path}/trigger`);
    expect(triggered.body.outcome, JSON.stringify(triggered.body)).toBe('buffered');
    expect((await svc.api.post(`${path}/backfill`, { startAt: iso(first - 120_000), endAt: iso(first - 1) })).body).toMatchObject({ ticks: 2 });
    expect(await getSchedule(workflowId, schedule.id)).toMatchObject({ remainingRuns: 8 });
    expect((await getSchedule(workflowId, schedule.id)).bufferedTicks).toHaveLength(4);
    expect((await svc.api.post(wf(`/${workflowId}/toggle`), { enabled: false })).status).toBe(200);
    await release(workflowId, firstRunId);
    for (let i = 0; i < 4; i++) await svc.scheduleLoop.pass(); // one buffered tick leaves per pass, skipped: the workflow is disabled
    expect(await getSchedule(workflowId, schedule.id)).toMatchObject({ bufferedTicks: [], remainingRuns: 9 });
  });

  it('cancel_other: the running scheduled run is cancelled with a reason naming the schedule, and the new one starts', async () => {
    const { workflowId, schedule, first, firstRunId } = await held('cancel_other');
    await tick(60_000);
    const cancelled = await svc.waitForRun(workflowId, firstRunId);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.cancelReason).toContain(`schedule '${schedule.name}'`);
    const runs = await runsOf(workflowId, schedule.id);
    expect(runs.map((run) => run.scheduledAt)).toEqual([iso(first), iso(first + 60_000)]);
    await svc.waitForGate(workflowId, runs[1].id);
  });

  it('allow_all: both run at once', async () => {
    const { workflowId, schedule, firstRunId } = await held('allow_all');
    await tick(60_000);
    const runs = await runsOf(workflowId, schedule.id);
    expect(runs).toHaveLength(2);
    await svc.waitForGate(workflowId, runs[1].id);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${firstRunId}`))).body.status).toBe('awaiting_approval');
  });
});

describe('control', () => {
  it('pause stops the ticks, resume starts again from the next tick; the latest note replaces the earlier one', async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { intervalSeconds: 60, note: 'first' });
    const paused = await svc.api.post(schedules(workflowId, `/${schedule.id}/pause`), { note: 'maintenance until 02:00' });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, note: 'maintenance until 02:00' });
    await tick(180_000);
    expect(await runsOf(workflowId, schedule.id)).toEqual([]);
    const resumed = await svc.api.post(schedules(workflowId, `/${schedule.id}/resume`), { note: 'back' });
    expect(resumed.body).toMatchObject({ paused: false, note: 'back', recentRuns: [] });
    const next = new Date(resumed.body.nextRunTimes[0]).getTime();
    expect(next).toBeGreaterThan(clock.now().getTime());
    await tick(next - clock.now().getTime());
    expect((await runsOf(workflowId, schedule.id)).map((run) => run.scheduledAt)).toEqual([iso(next)]);
  });

  it('trigger runs now (scheduledAt = now) as the caller, without consuming remainingRuns', async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { intervalSeconds: 3600, remainingRuns: 2 });
    const response = await svc.api.post(schedules(workflowId, `/${schedule.id}/trigger`));
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ outcome: 'started', scheduledAt: iso(clock.now().getTime()), reason: null });
    const run = await svc.waitForRun(workflowId, response.body.runId);
    expect(run).toMatchObject({ triggerSource: 'schedule', scheduleId: schedule.id, scheduledAt: iso(clock.now().getTime()) });
    expect((await getSchedule(workflowId, schedule.id)).remainingRuns).toBe(2);
  });

  it('backfill fires every tick of a range in order; more than 1,000 ticks is a 400 that fires nothing', async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { intervalSeconds: 3600 });
    const response = await svc.api.post(schedules(workflowId, `/${schedule.id}/backfill`), { startAt: '2025-12-01T00:00:00Z', endAt: '2025-12-01T05:00:00Z', overlapPolicy: 'allow_all' });
    expect(response.status, response.text).toBe(200);
    const hours = [0, 1, 2, 3, 4].map((h) => iso(Date.UTC(2025, 11, 1, h)));
    expect(response.body).toMatchObject({ ticks: 5, started: 5 });
    expect(response.body.outcomes.map((o: any) => o.scheduledAt)).toEqual(hours);
    expect((await runsOf(workflowId, schedule.id)).map((run) => run.scheduledAt)).toEqual(hours);

    const tooMany = await svc.api.post(schedules(workflowId, `/${schedule.id}/backfill`), { startAt: '2025-01-01T00:00:00Z', endAt: '2025-03-01T00:00:00Z' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail.message).toMatch(/more than 1000 ticks/);
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(5);

    // The past only: a tick to come is the loop's to fire.
    const future = await svc.api.post(schedules(workflowId, `/${schedule.id}/backfill`), { startAt: iso(clock.now().getTime() - 3_600_000), endAt: iso(clock.now().getTime() + 3_600_000) });
    expect(future.status).toBe(400);
    expect(future.body.detail.problems).toEqual(['/endAt: must not be after now']);
    // The same range again finds each tick's run: nothing starts twice, nothing is cancelled.
    const again = await svc.api.post(schedules(workflowId, `/${schedule.id}/backfill`), { startAt: '2025-12-01T00:00:00Z', endAt: '2025-12-01T05:00:00Z', overlapPolicy: 'cancel_other' });
    expect(again.body.outcomes.map((o: any) => o.runId)).toEqual(response.body.outcomes.map((o: any) => o.runId));
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(5);
  });

  it('remainingRuns counts down and at 0 the schedule stops firing', async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { intervalSeconds: 60, remainingRuns: 2 });
    expect(schedule.nextRunTimes).toHaveLength(2);
    for (let i = 0; i < 4; i++) await tick(60_000);
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(2);
    expect(await getSchedule(workflowId, schedule.id)).toMatchObject({ remainingRuns: 0, nextRunTimes: [] });
    // More runs later: the ticks go on from now, with no false "missed" record for the pause in between.
    await clock.advance(600_000);
    expect((await svc.api.put(schedules(workflowId, `/${schedule.id}`), { remainingRuns: 1 })).status).toBe(200);
    await tick(60_000);
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(3);
    expect((await getSchedule(workflowId, schedule.id)).recentRuns.every((entry: any) => entry.status !== 'skipped')).toBe(true);
  });

  it("a disabled workflow's ticks are recorded as skipped and keep their remaining runs", async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { intervalSeconds: 60, remainingRuns: 5 });
    expect((await svc.api.post(wf(`/${workflowId}/toggle`), { enabled: false })).status).toBe(200);
    await tick(60_000);
    expect(await runsOf(workflowId, schedule.id)).toEqual([]);
    const after = await getSchedule(workflowId, schedule.id);
    expect(after.recentRuns).toEqual([expect.objectContaining({ status: 'skipped', reason: 'the workflow is disabled' })]);
    expect(after.remainingRuns).toBe(5);
  });

  it('after a restart, missed ticks inside the catch-up window fire; older ones are skipped and recorded', async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { intervalSeconds: 10, catchupWindowSeconds: 30, overlapPolicy: 'allow_all' });
    const first = new Date(schedule.nextRunTimes[0]).getTime();
    // Down for 25 s: the 3 missed ticks are all inside the window.
    await tick(first - clock.now().getTime() + 20_000 + 5_000);
    expect((await runsOf(workflowId, schedule.id)).map((run) => run.scheduledAt)).toEqual([iso(first), iso(first + 10_000), iso(first + 20_000)]);
    // Down for 120 s: ticks older than 30 s are skipped (one record), the rest fire.
    await clock.advance(120_000);
    const now = clock.now().getTime();
    await svc.scheduleLoop.pass();
    const fired = (await runsOf(workflowId, schedule.id)).slice(3).map((run) => new Date(run.scheduledAt).getTime());
    expect(fired.length).toBeGreaterThan(0);
    for (const at of fired) expect(now - at).toBeLessThanOrEqual(30_000);
    const skipped = (await getSchedule(workflowId, schedule.id)).recentRuns.filter((r: any) => r.status === 'skipped');
    expect(skipped).toEqual([expect.objectContaining({ scheduledAt: iso(first + 30_000), reason: expect.stringContaining('catch-up window') })]);
  });

  it('a tick whose run was made but not recorded (the loop stopped in between) is recorded by a later pass, not judged against its own run', async () => {
    const workflowId = await workflow('gated');
    const schedule = await createSchedule(workflowId, { intervalSeconds: 3600, overlapPolicy: 'skip' });
    const first = new Date(schedule.nextRunTimes[0]).getTime();
    // The process "stops" right after creating the run: recording the outcome never happens.
    const settle = svc.repos.schedules.settleTick;
    svc.repos.schedules.settleTick = () => Promise.reject(new Error('process stopped'));
    try {
      await tick(first - clock.now().getTime());
    } finally {
      svc.repos.schedules.settleTick = settle;
    }
    const [run] = await runsOf(workflowId, schedule.id);
    await svc.waitForGate(workflowId, run.id);
    await tick(30_000);
    expect((await getSchedule(workflowId, schedule.id)).recentRuns).toEqual([]); // still in flight
    await tick(31_000); // in flight for more than a minute: fired again
    expect(await runsOf(workflowId, schedule.id)).toHaveLength(1);
    expect((await getSchedule(workflowId, schedule.id)).recentRuns).toEqual([{ scheduledAt: iso(first), startedAt: expect.any(String), runId: run.id, status: expect.any(String) }]);
  });

  it("the workflow's audit trail records who created, changed, paused, resumed and deleted a schedule", async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { name: 'audited', intervalSeconds: 3600 });
    const path = schedules(workflowId, `/${schedule.id}`);
    expect((await svc.api.put(path, { intervalSeconds: 7200, note: 'slower' })).status).toBe(200);
    expect((await svc.api.post(`${path}/pause`, { note: 'holiday' })).status).toBe(200);
    expect((await svc.api.post(`${path}/resume`, {})).status).toBe(200);
    expect((await svc.api.delete(path)).status).toBe(204);
    const entries = (await svc.api.get(wf(`/${workflowId}/audit`))).body.entries as any[];
    expect(entries.map((entry) => [entry.type, entry.payload]).reverse().slice(2)).toEqual([
      ['schedule.created', { scheduleId: schedule.id, name: 'audited' }],
      ['schedule.updated', { scheduleId: schedule.id, name: 'audited', fields: ['intervalSeconds', 'note'] }],
      ['schedule.paused', { scheduleId: schedule.id, name: 'audited', note: 'holiday' }],
      ['schedule.resumed', { scheduleId: schedule.id, name: 'audited', note: null }],
      ['schedule.deleted', { scheduleId: schedule.id, name: 'audited' }],
    ]);
  });

  it('deleting the workflow deletes its schedules', async () => {
    const workflowId = await workflow();
    const schedule = await createSchedule(workflowId, { intervalSeconds: 60 });
    expect((await svc.api.delete(wf(`/${workflowId}`))).status).toBe(204);
    expect(await svc.repos.schedules.get(schedule.id)).toBeNull();

    // One created while the delete ran (the delete did not see it) goes at its first tick.
    const orphan = await svc.repos.schedules.create(
      { workflowDefinitionId: workflowId, name: 'orphan', spec: { cron: null, intervalSeconds: 60, offsetSeconds: 0, timezone: 'UTC', startAt: null, endAt: null, jitterSeconds: 0 }, input: {}, overlapPolicy: 'skip', catchupWindowSeconds: 60, paused: false, note: null, remainingRuns: null, next: { fireAt: clock.now(), dueAt: clock.now() } },
      clock.now(),
    );
    await tick(1_000);
    expect(await svc.repos.schedules.get(orphan.id)).toBeNull();
  });
});

describe('abuse', () => {
  const bad = async (workflowId: string, body: Record<string, unknown>) => {
    const response = await svc.api.post(schedules(workflowId), { name: uniqueName('bad'), ...body });
    expect(response.status, response.text).toBe(400);
    return response.body.detail;
  };

  it('refuses bad cron, time zone, catch-up window, oversized note and input, too deep input, input against the inputSchema', async () => {
    const workflowId = await workflow('echo', { inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } });
    expect((await bad(workflowId, { cron: '61 * * * *', input: { n: 1 } })).problems.join()).toMatch(/^\/cron: /);
    expect((await bad(workflowId, { cron: '* * *', input: { n: 1 } })).problems.join()).toMatch(/has 3 fields/);
    expect((await bad(workflowId, { cron: '0 9 * * *', timezone: 'Mars/Olympus', input: { n: 1 } })).problems).toEqual([expect.stringMatching(/^\/timezone: /)]);
    expect((await bad(workflowId, { intervalSeconds: 60, catchupWindowSeconds: 5, input: { n: 1 } })).problems).toEqual([expect.stringMatching(/^\/catchupWindowSeconds: /)]);
    // Ticks bypass the trigger rate limit: a period below SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS (10 s) is refused.
    expect((await bad(workflowId, { intervalSeconds: 1, input: { n: 1 } })).problems).toEqual(['/intervalSeconds: must be an integer from 10 to 316224000']);
    expect((await bad(workflowId, { cron: '* * * * * *', input: { n: 1 } })).problems.join()).toMatch(/fires more often than every 10 s/);
    expect((await bad(workflowId, { cron: '0 0 30 2 *', input: { n: 1 } })).problems).toEqual(['/cron: never fires (no date matches it)']);
    expect((await bad(workflowId, { cron: '*/5 * * * *', jitterSeconds: 300, input: { n: 1 } })).problems.join()).toMatch(/jitterSeconds: must be less than the shortest gap between two ticks of cron \(300 s\)/);
    expect((await bad(workflowId, { intervalSeconds: 60, cron: '* * * * *', input: { n: 1 } })).problems.join()).toMatch(/exactly one of cron and intervalSeconds/);
    expect((await bad(workflowId, { intervalSeconds: 60, note: 'x'.repeat(1001), input: { n: 1 } })).message).toMatch(/note/);
    expect((await bad(workflowId, { intervalSeconds: 60, input: { n: 1, blob: 'x'.repeat(70_000) } })).problems).toEqual(['/input: is larger than 65536 bytes']);
    expect((await bad(workflowId, { intervalSeconds: 60, input: { n: 1, deep: nested(40) } })).problems).toEqual([expect.stringMatching(/^\/input: nests deeper/)]);
    expect((await bad(workflowId, { intervalSeconds: 60, input: { n: 'seven' } })).problems).toEqual([expect.stringMatching(/^\/input\/n: /)]);
    expect((await bad(workflowId, { intervalSeconds: 60, name: 'x'.repeat(201), input: { n: 1 } })).message).toMatch(/name/);
    expect((await svc.api.post(schedules(workflowId), { name: 'extra', intervalSeconds: 60, input: { n: 1 }, unknownField: 1 })).status).toBe(400);
    expect((await svc.api.get(`/api/v1/schedules?perPage=101`)).status).toBe(400);
    expect((await svc.api.get(schedules(workflowId, '/not-an-id'))).status).toBe(400);
  });

  it('refuses the 101st schedule of a workflow with 409, also when creates race for the last places', async () => {
    const workflowId = await workflow();
    for (let i = 0; i < 95; i++) await createSchedule(workflowId, { name: `s${i}`, intervalSeconds: 3600, paused: true });
    // Every racing create has counted 95 before any inserts: the inserts wait for all 20.
    const repo = svc.repos.schedules;
    const insert = repo.create;
    let arrived = 0;
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const valve = setTimeout(() => release(), 10_000); // should a request never reach the insert
    repo.create = async (...args) => {
      if (++arrived === 20) release();
      await barrier;
      return insert.apply(repo, args);
    };
    let racing: Awaited<ReturnType<typeof svc.api.post>>[];
    try {
      racing = await Promise.all(Array.from({ length: 20 }, (_, i) => svc.api.post(schedules(workflowId), { name: `r${i}`, intervalSeconds: 3600, paused: true })));
    } finally {
      clearTimeout(valve);
      repo.create = insert;
    }
    expect(racing.every((response) => response.status === 201 || response.status === 409)).toBe(true);
    expect((await svc.api.get(schedules(workflowId, '?perPage=1'))).body.pagination.total).toBeLessThanOrEqual(100);
    while ((await svc.api.get(schedules(workflowId, '?perPage=1'))).body.pagination.total < 100) await createSchedule(workflowId, { name: uniqueName('fill'), intervalSeconds: 3600, paused: true });
    const response = await svc.api.post(schedules(workflowId), { name: 's100', intervalSeconds: 3600 });
    expect(response.status).toBe(409);
    expect(response.body.detail.message).toMatch(/at most 100 schedules/);
  });
});

describe('roles', () => {
  let auth: TestService;
  const authClock = new ManualClock(Date.now());
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    auth = await startService({ clock: authClock, edge: { authenticator: await Authenticator.create(jwtAuthConfig()) }, sweepIntervalMs: 3_600_000 });
    for (const who of ['owner', 'viewer', 'operator', 'editor', 'stranger']) tokens[who] = await signToken(who);
    tokens.readOnly = await signToken('owner', { scopes: ['workflows-read'] });
    tokens.writeOnly = await signToken('owner', { scopes: ['workflows-read', 'workflows-write'] });
  });
  afterAll(async () => {
    await auth.close();
  });
  const as = (who: string, method: string, path: string, body?: unknown) => call(auth.baseUrl, method, path, tokens[who]!, body);

  it('viewers read, operators trigger and pause but do not create, strangers see nothing, scopes still apply', async () => {
    const created = await as('owner', 'POST', wf(), { name: uniqueName('roles'), canvas: CANVAS, nodes: [echoStep('A')] });
    const workflowId = created.body.id as string;
    expect((await as('owner', 'POST', wf(`/${workflowId}/toggle`), { enabled: true })).status).toBe(200);
    expect((await as('owner', 'PUT', wf(`/${workflowId}/access`), { owners: ['user:owner'], editors: [], operators: ['user:operator'], viewers: ['user:viewer'] })).status).toBe(200);
    const schedule = await as('owner', 'POST', schedules(workflowId), { name: 'nightly', cron: '0 2 * * *' });
    expect(schedule.status).toBe(201);
    expect(schedule.body.createdBy).toBe('owner');
    const path = schedules(workflowId, `/${schedule.body.id}`);

    expect((await as('viewer', 'GET', path)).status).toBe(200);
    expect((await as('viewer', 'POST', `${path}/trigger`)).status).toBe(403);
    expect((await as('viewer', 'POST', `${path}/pause`, { note: 'no' })).status).toBe(403);
    expect((await as('operator', 'POST', schedules(workflowId), { name: 'mine', intervalSeconds: 60 })).status).toBe(403);
    expect((await as('operator', 'DELETE', path)).status).toBe(403);
    expect((await as('operator', 'POST', `${path}/pause`, { note: 'paused by operator' })).body).toMatchObject({ paused: true, note: 'paused by operator', updatedBy: 'operator' });
    const triggered = await as('operator', 'POST', `${path}/trigger`);
    expect(triggered.body.outcome).toBe('started');
    expect((await as('operator', 'GET', wf(`/${workflowId}/runs/${triggered.body.runId}`))).body.triggeredBy).toMatchObject({ userId: 'operator' });

    expect((await as('stranger', 'GET', path)).status).toBe(403);
    expect((await as('stranger', 'GET', '/api/v1/schedules')).body.schedules.map((s: any) => s.id)).not.toContain(schedule.body.id);
    expect((await as('viewer', 'GET', '/api/v1/schedules')).body.schedules.map((s: any) => s.id)).toContain(schedule.body.id);
    expect((await as('readOnly', 'POST', schedules(workflowId), { name: 'ro', intervalSeconds: 60 })).status).toBe(403);
    // A schedule starts runs: creating or changing one needs workflows-control, as a trigger does.
    const writeOnly = await as('writeOnly', 'POST', schedules(workflowId), { name: 'wo', intervalSeconds: 60 });
    expect(writeOnly.status).toBe(403);
    expect(writeOnly.body.detail).toMatchObject({ error: 'permission_denied', details: { requiredScope: 'workflows-control' } });
    expect((await as('writeOnly', 'PUT', path, { intervalSeconds: 60 })).status).toBe(403);
    expect((await call(auth.baseUrl, 'GET', path, null)).status).toBe(401);
  });

  it("four-eyes: the schedule's creator and whoever changed its settings may not approve a gate of a run it started; who only paused it may", async () => {
    const created = await as('owner', 'POST', wf(), { name: uniqueName('four-eyes'), canvas: CANVAS, nodes: [echoStep('G', {}, { humanReview: { requiresConfirmation: true, allowSelfApproval: false } })] });
    const workflowId = created.body.id as string;
    await as('owner', 'POST', wf(`/${workflowId}/toggle`), { enabled: true });
    await as('owner', 'PUT', wf(`/${workflowId}/access`), { owners: ['user:owner'], editors: ['user:editor'], operators: ['user:operator'], viewers: [] });
    const schedule = (await as('owner', 'POST', schedules(workflowId), { name: 'gated', intervalSeconds: 10 })).body;
    const path = schedules(workflowId, `/${schedule.id}`);
    expect((await as('editor', 'PUT', path, { input: { set: 'by the editor' } })).status).toBe(200);
    // A pause and resume later does not make the operator a changer of what the runs do.
    expect((await as('operator', 'POST', `${path}/pause`, {})).status).toBe(200);
    expect((await as('operator', 'POST', `${path}/resume`, {})).body).toMatchObject({ paused: false, updatedBy: 'operator', changedBy: ['owner', 'editor'] });
    await authClock.advance(10_000);
    await auth.scheduleLoop.pass();
    const runs = (await as('owner', 'GET', wf(`/${workflowId}/runs?includeNodeRuns=false`))).body.runs as any[];
    expect(runs.map((run) => run.scheduleId)).toEqual([schedule.id]);
    let parked: any;
    for (let i = 0; i < 500 && parked?.status !== 'awaiting_approval'; i++) {
      parked = (await as('owner', 'GET', wf(`/${workflowId}/runs/${runs[0].id}`))).body;
      if (parked.status !== 'awaiting_approval') await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const stepId = parked.pendingRequirements[0].stepId;
    const mine = await as('owner', 'POST', wf(`/${workflowId}/runs/${runs[0].id}/approve`), { stepId, resolution: 'confirm' });
    expect(mine.status).toBe(403);
    expect(mine.body.detail.error).toBe('self_approval_forbidden');
    const editors = await as('editor', 'POST', wf(`/${workflowId}/runs/${runs[0].id}/approve`), { stepId, resolution: 'confirm' });
    expect(editors.status).toBe(403);
    expect(editors.body.detail.error).toBe('self_approval_forbidden');
    expect((await as('operator', 'POST', wf(`/${workflowId}/runs/${runs[0].id}/approve`), { stepId, resolution: 'confirm' })).status).toBe(200);
  });
});

describe('the loop in the service', () => {
  it('runs on the injected clock, fires due ticks by itself and reports to /readyz as `schedules`', async () => {
    const own = new ManualClock(START);
    const live = await startService({ clock: own, sweepIntervalMs: 3_600_000, scheduleLoop: true, env: { SWITCHYARD_SCHEDULE_INTERVAL_MS: '1000', SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS: '5' } });
    try {
      const created = await live.createWorkflow({ name: uniqueName('live'), canvas: CANVAS, nodes: [echoStep('A')] });
      await live.enable(created.id);
      const schedule = (await live.api.post(schedules(created.id), { name: 'every 5 s', intervalSeconds: 5 })).body;
      for (let i = 0; i < 10; i++) await own.advance(1_000);
      await live.scheduleLoop.stop();
      const runs = (await live.api.get(wf(`/${created.id}/runs?includeNodeRuns=false`))).body.runs as any[];
      expect(runs.map((run) => run.scheduledAt).sort()).toEqual([iso(START + 5_000), iso(START + 10_000)]);
      expect(runs.every((run) => run.scheduleId === schedule.id)).toBe(true);
      const ready = await live.api.get('/readyz');
      expect(ready.body.checks.schedules).toMatchObject({ running: false, intervalMs: 1000 });
    } finally {
      await live.close();
    }
  });
});
