import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toScheduleSpec, type ScheduleSpecInput } from '@switchyard/domain/schedule-spec';
import { newId, openEmbeddedStore, openRepositories, type DocumentStore, type Repositories, type ScheduleRecord } from '@switchyard/store';
import { ScheduleLoop, nextTickAfter, type FireOutcome } from './schedule-loop.ts';
import { ManualClock } from './testing/manual-clock.ts';

const logger = pino({ level: 'silent' });
const T0 = Date.UTC(2026, 0, 1);
const at = (seconds: number) => new Date(T0 + seconds * 1000);

/** A fake `fire`: records each call (engine name and tick) and starts a "run", or answers what `answer` says. */
function recorder(engine: string, calls: Array<{ engine: string; scheduledAt: number }>, answer?: (schedule: ScheduleRecord, scheduledAt: Date) => FireOutcome) {
  return async (schedule: ScheduleRecord, scheduledAt: Date): Promise<FireOutcome> => {
    await new Promise((resolve) => setImmediate(resolve)); // let the other engine interleave
    calls.push({ engine, scheduledAt: scheduledAt.getTime() });
    return answer?.(schedule, scheduledAt) ?? { started: true, runId: newId(), runStatus: 'pending', startedAt: scheduledAt };
  };
}

describe('ScheduleLoop', () => {
  let store: DocumentStore;
  let repos: Repositories;
  let clock: ManualClock;
  let calls: Array<{ engine: string; scheduledAt: number }>;

  beforeEach(async () => {
    store = await openEmbeddedStore({ dataDir: null });
    repos = await openRepositories(store);
    clock = new ManualClock(T0);
    calls = [];
  });
  afterEach(async () => {
    await store.close();
  });

  async function createSchedule(spec: ScheduleSpecInput, extra: Partial<Pick<ScheduleRecord, 'remainingRuns' | 'catchupWindowSeconds' | 'paused'>> = {}) {
    const id = newId();
    const full = toScheduleSpec(spec);
    return repos.schedules.create(
      { id, workflowDefinitionId: newId(), name: 's', spec: full, input: { k: 1 }, overlapPolicy: 'skip', catchupWindowSeconds: 60, paused: false, note: null, remainingRuns: null, ...extra, next: nextTickAfter(id, full, clock.now()) },
      clock.now(),
    );
  }
  const loopFor = (engine: string, answer?: Parameters<typeof recorder>[2]) => new ScheduleLoop({ schedules: repos.schedules, fire: recorder(engine, calls, answer), logger, clock });

  it('two engines sharing one store fire each of 1,000 every-second ticks exactly once', async () => {
    const { id } = await createSchedule({ intervalSeconds: 1 });
    const [a, b] = [loopFor('a'), loopFor('b')];
    for (let i = 1; i <= 1000; i++) {
      await clock.advance(1000);
      await Promise.all(i % 2 ? [a.pass(), b.pass()] : [b.pass(), a.pass()]);
    }
    const ticks = calls.map((call) => call.scheduledAt);
    expect(ticks).toEqual(Array.from({ length: 1000 }, (_, i) => at(i + 1).getTime()));
    expect(new Set(ticks).size).toBe(1000);
    const byA = calls.filter((call) => call.engine === 'a').length;
    expect([byA, calls.length - byA].every((count) => count > 100)).toBe(true); // both engines won ticks: the race was real
    const schedule = (await repos.schedules.get(id))!;
    expect(schedule.nextFireAt).toEqual(at(1001));
    expect(schedule.recentRuns.map((run) => run.scheduledAt)).toEqual(Array.from({ length: 10 }, (_, i) => at(991 + i)));
  });

  it('a tick whose loop died between claim and record is fired again by another loop after staleFiringMs, and recorded once', async () => {
    const { id } = await createSchedule({ intervalSeconds: 3600 }, { remainingRuns: 5 });
    let release!: (outcome: FireOutcome) => void;
    const hung = new Promise<FireOutcome>((resolve) => (release = resolve));
    // Engine a claims the tick, then "dies": its fire never returns (until released below, as a very slow engine would).
    const a = new ScheduleLoop({ schedules: repos.schedules, fire: () => hung, logger, clock, staleFiringMs: 60_000 });
    const b = loopFor('b');
    await clock.advance(3600_000);
    const dying = a.pass();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await repos.schedules.get(id))!.nextFireAt).toEqual(at(7200)); // claimed by a
    expect(await b.pass()).toBe(0); // in flight for less than staleFiringMs: left alone
    expect(calls).toEqual([]);

    await clock.advance(61_000);
    expect(await b.pass()).toBe(1);
    expect(calls).toEqual([{ engine: 'b', scheduledAt: at(3600).getTime() }]);
    // The slow engine finishes after all: its outcome is not recorded a second time.
    release({ started: true, runId: newId(), runStatus: 'pending', startedAt: at(3600) });
    expect(await dying).toBe(0);
    const schedule = (await repos.schedules.get(id))!;
    expect(schedule.recentRuns).toHaveLength(1);
    expect(schedule.remainingRuns).toBe(4);
    expect(await b.pass()).toBe(0); // nothing in flight any more
    expect(calls).toHaveLength(1);
  });

  it('a tick fired again and skipped gives back the run its first claim took', async () => {
    const { id } = await createSchedule({ intervalSeconds: 3600 }, { remainingRuns: 2 });
    const a = new ScheduleLoop({ schedules: repos.schedules, fire: () => new Promise<FireOutcome>(() => undefined), logger, clock });
    const b = loopFor('b', () => ({ started: false, reason: 'the workflow is disabled' }));
    await clock.advance(3600_000);
    void a.pass();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await repos.schedules.get(id))!.remainingRuns).toBe(1);
    await clock.advance(61_000);
    await b.pass();
    const schedule = (await repos.schedules.get(id))!;
    expect(schedule.remainingRuns).toBe(2);
    expect(schedule.recentRuns).toEqual([{ scheduledAt: at(3600), status: 'skipped', reason: 'the workflow is disabled' }]);
  });

  it('one pass takes the next batch of due schedules at once when a batch was full (no wait of a period per 100 schedules)', async () => {
    for (let i = 0; i < 5; i++) await createSchedule({ intervalSeconds: 60 });
    const loop = new ScheduleLoop({ schedules: repos.schedules, fire: recorder('a', calls), logger, clock, batchSize: 2 });
    await clock.advance(60_000);
    expect(await loop.pass()).toBe(5);
    expect(calls.map((call) => call.scheduledAt)).toEqual(Array(5).fill(at(60).getTime()));
  });

  it('handles a schedule once a pass: a catch-up longer than maxTicksPerSchedule goes on in the next pass, also when batches follow', async () => {
    await createSchedule({ intervalSeconds: 1 }, { catchupWindowSeconds: 3600 });
    await createSchedule({ intervalSeconds: 3600 });
    const loop = new ScheduleLoop({ schedules: repos.schedules, fire: recorder('a', calls), logger, clock, batchSize: 1, maxTicksPerSchedule: 50 });
    await clock.advance(200_000);
    expect(await loop.pass()).toBe(50);
    expect(await loop.pass()).toBe(50);
    expect(calls.map((call) => call.scheduledAt)).toEqual(Array.from({ length: 100 }, (_, i) => at(i + 1).getTime()));
  });

  it('a buffered tick keeps its run taken and records nothing; startBuffered runs first in every pass', async () => {
    const { id } = await createSchedule({ intervalSeconds: 1 }, { remainingRuns: 3 });
    const order: string[] = [];
    const loop = new ScheduleLoop({
      schedules: repos.schedules,
      fire: async () => {
        order.push('fire');
        return { started: false, buffered: true };
      },
      startBuffered: async (now) => {
        order.push(`buffered@${now.getTime() - T0}`);
        return 0;
      },
      logger,
      clock,
    });
    await clock.advance(1000);
    expect(await loop.pass()).toBe(0);
    expect(order).toEqual(['buffered@1000', 'fire']);
    const schedule = (await repos.schedules.get(id))!;
    expect(schedule).toMatchObject({ remainingRuns: 2, recentRuns: [], nextFireAt: at(2) });
  });

  it('runs on its clock: start() passes every intervalMs until stop(), and reports its status', async () => {
    await createSchedule({ intervalSeconds: 2 });
    const loop = loopFor('a');
    loop.start();
    await clock.advance(10_000);
    await loop.stop();
    expect(calls.map((call) => call.scheduledAt)).toEqual([2, 4, 6, 8, 10].map((s) => at(s).getTime()));
    expect(loop.loopStatus()).toMatchObject({ running: false, intervalMs: 1000, startedAt: at(0), lastRunAt: at(10) });
    await clock.advance(10_000);
    expect(calls).toHaveLength(5);
  });

  it('a restart within the catch-up window fires every missed tick, in order', async () => {
    const { id } = await createSchedule({ intervalSeconds: 1 });
    await clock.advance(1000);
    await loopFor('before').pass();
    await clock.advance(30_000); // down for 30 s (window 60 s)
    expect(await loopFor('after').pass()).toBe(30);
    expect(calls.map((call) => call.scheduledAt)).toEqual(Array.from({ length: 31 }, (_, i) => at(i + 1).getTime()));
    expect((await repos.schedules.get(id))!.recentRuns.every((run) => run.status === 'pending')).toBe(true);
  });

  it('after a restart outside the window, the ticks older than the window are not fired, those within it are', async () => {
    const { id } = await createSchedule({ intervalSeconds: 1 });
    await clock.advance(1000);
    await loopFor('before').pass();
    await clock.advance(300_000); // down for 300 s: now T0+301 s, window from T0+241 s
    expect(await loopFor('after').pass()).toBe(61);
    expect(calls.slice(1).map((call) => call.scheduledAt)).toEqual(Array.from({ length: 61 }, (_, i) => at(241 + i).getTime()));
    expect((await repos.schedules.get(id))!.nextFireAt).toEqual(at(302)); // (the skip record is checked in the next test: here 61 runs pushed it out of the last 10)
  });

  it('records the skipped ticks of an hourly schedule missed for two hours, and goes on with the next one', async () => {
    const { id } = await createSchedule({ intervalSeconds: 3600 });
    await clock.advance(2 * 3600_000 + 30_000); // ticks at 1 h and 2 h missed; now 2 h 30 s
    expect(await loopFor('a').pass()).toBe(1); // 2 h is 30 s late: within the 60 s window
    await clock.advance(3 * 3600_000 + 60_000); // down again: now 5 h 1 min 30 s; ticks at 3 h, 4 h, 5 h missed by more than 60 s
    expect(await loopFor('a').pass()).toBe(0);
    expect(calls.map((call) => call.scheduledAt)).toEqual([at(7200).getTime()]);
    const schedule = (await repos.schedules.get(id))!;
    expect(schedule.recentRuns.map(({ scheduledAt, status }) => ({ scheduledAt, status }))).toEqual([
      { scheduledAt: at(3600), status: 'skipped' },
      { scheduledAt: at(7200), status: 'pending' },
      { scheduledAt: at(10_800), status: 'skipped' },
    ]);
    expect(schedule.recentRuns[2]).toMatchObject({
      reason: 'missed by more than the catch-up window (60 s): ticks from 2026-01-01T03:00:00.000Z to before 2026-01-01T06:00:00.000Z skipped',
    });
    expect(schedule.nextFireAt).toEqual(at(6 * 3600));
  });

  it('remainingRuns: taken by each run started, not by a skipped tick (a disabled workflow); no ticks once none is left', async () => {
    let enabled = false;
    const { id } = await createSchedule({ intervalSeconds: 10 }, { remainingRuns: 2 });
    const loop = loopFor('a', () => (enabled ? undefined! : { started: false, reason: 'the workflow is disabled' }));
    await clock.advance(10_000);
    await loop.pass();
    expect((await repos.schedules.get(id))!).toMatchObject({ remainingRuns: 2, recentRuns: [{ scheduledAt: at(10), status: 'skipped', reason: 'the workflow is disabled' }] });
    enabled = true;
    for (let i = 0; i < 5; i++) {
      await clock.advance(10_000);
      await loop.pass();
    }
    expect(calls.map((call) => call.scheduledAt)).toEqual([10, 20, 30].map((s) => at(s).getTime()));
    expect((await repos.schedules.get(id))!.remainingRuns).toBe(0);
  });

  it('a fire that throws records the tick skipped with the reason and gives the run back', async () => {
    const { id } = await createSchedule({ intervalSeconds: 10 }, { remainingRuns: 1 });
    const loop = new ScheduleLoop({ schedules: repos.schedules, fire: async () => Promise.reject(new Error('store down')), logger, clock });
    await clock.advance(10_000);
    expect(await loop.pass()).toBe(0);
    expect((await repos.schedules.get(id))!).toMatchObject({ remainingRuns: 1, nextFireAt: at(20), recentRuns: [{ status: 'skipped', reason: 'the run could not be started: store down' }] });
  });

  it('a paused schedule does not fire; jitter delays a tick but keeps its scheduledAt', async () => {
    await createSchedule({ intervalSeconds: 10 }, { paused: true });
    const jittered = await createSchedule({ intervalSeconds: 60, jitterSeconds: 30 });
    const delay = jittered.dueAt!.getTime() - jittered.nextFireAt!.getTime();
    expect(jittered.nextFireAt).toEqual(at(60));
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThan(30_000);
    const loop = loopFor('a');
    await clock.advance(60_000);
    expect(await loop.pass()).toBe(0);
    await clock.advance(delay);
    expect(await loop.pass()).toBe(1);
    expect(calls).toEqual([{ engine: 'a', scheduledAt: at(60).getTime() }]);
  });

  it('a cron schedule in Europe/Berlin fires at 02:30 local across the spring DST change (01:00Z on 2026-03-29)', async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 28, 12));
    await createSchedule({ cron: '30 2 * * *', timezone: 'Europe/Berlin' });
    const loop = loopFor('a');
    for (let minute = 0; minute < 48 * 60; minute++) {
      await clock.advance(60_000);
      await loop.pass();
    }
    expect(calls.map((call) => new Date(call.scheduledAt).toISOString())).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
  });
});
