import { describe, expect, it } from 'vitest';
import { MAX_BACKFILL_TICKS, TooManyTicksError, jitterMs, nextTicks, scheduleProblems, ticksBetween, toScheduleSpec } from './schedule-spec.ts';

const iso = (dates: Date[]) => dates.map((date) => date.toISOString());
const at = (text: string) => new Date(text);

describe('cron ticks in Europe/Berlin across the DST changes', () => {
  const berlin = (cron: string) => toScheduleSpec({ cron, timezone: 'Europe/Berlin' });

  it('02:30 on the spring-forward day (2026-03-29, does not exist) fires at the next valid instant, 03:00 CEST', () => {
    expect(iso(nextTicks(berlin('30 2 * * *'), at('2026-03-28T12:00:00Z'), 3))).toEqual([
      '2026-03-29T01:00:00.000Z', // 03:00 CEST: the first valid instant after the gap
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('02:30 on the fall-back day (2026-10-25, occurs twice) fires once, at the first occurrence', () => {
    expect(iso(nextTicks(berlin('30 2 * * *'), at('2026-10-24T12:00:00Z'), 3))).toEqual([
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; not again at 01:30Z (02:30 CET)
      '2026-10-26T01:30:00.000Z', // 02:30 CET
      '2026-10-27T01:30:00.000Z',
    ]);
  });

  it('the 6-field form (seconds first) behaves the same', () => {
    expect(iso(nextTicks(berlin('15 30 2 * * *'), at('2026-03-28T12:00:00Z'), 1))).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(iso(nextTicks(berlin('15 30 2 * * *'), at('2026-10-24T12:00:00Z'), 2))).toEqual(['2026-10-25T00:30:15.000Z', '2026-10-26T01:30:15.000Z']);
  });

  it('a wildcard expression fires at every real instant it matches: each half hour of the repeated hour, none in the gap', () => {
    expect(iso(nextTicks(berlin('*/30 * * * *'), at('2026-10-24T23:59:00Z'), 5))).toEqual([
      '2026-10-25T00:00:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-25T02:00:00.000Z',
    ]);
    expect(iso(nextTicks(berlin('*/30 * * * *'), at('2026-03-29T00:00:00Z'), 3))).toEqual(['2026-03-29T00:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z']);
  });

  it('9:00 every morning is 08:00Z in winter and 07:00Z in summer', () => {
    expect(iso(nextTicks(berlin('0 9 * * *'), at('2026-03-28T00:00:00Z'), 2))).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z']);
  });

  it('ticks are strictly after `after`: stepping from a tick gives the next one', () => {
    const spec = berlin('0 9 * * *');
    const [first] = nextTicks(spec, at('2026-03-28T00:00:00Z'), 1);
    expect(iso(nextTicks(spec, first!, 1))).toEqual(['2026-03-29T07:00:00.000Z']);
  });
});

describe('interval ticks', () => {
  it('count from the Unix epoch plus the offset, whatever the time zone', () => {
    const spec = toScheduleSpec({ intervalSeconds: 3600, offsetSeconds: 900, timezone: 'Europe/Berlin' });
    expect(iso(nextTicks(spec, at('2026-03-29T00:20:00Z'), 3))).toEqual(['2026-03-29T01:15:00.000Z', '2026-03-29T02:15:00.000Z', '2026-03-29T03:15:00.000Z']);
    expect(iso(nextTicks(spec, at('2026-03-29T01:15:00Z'), 1))).toEqual(['2026-03-29T02:15:00.000Z']);
  });

  it('a 7-day interval starts on Thursdays (1970-01-01 was one)', () => {
    const [tick] = nextTicks(toScheduleSpec({ intervalSeconds: 7 * 86_400 }), at('2026-01-01T00:00:01Z'), 1);
    expect(tick!.toISOString()).toBe('2026-01-08T00:00:00.000Z');
    expect(tick!.getUTCDay()).toBe(4);
  });

  it('startAt is inclusive, endAt exclusive', () => {
    const spec = toScheduleSpec({ intervalSeconds: 60, startAt: at('2026-01-01T10:00:00Z'), endAt: at('2026-01-01T10:03:00Z') });
    expect(iso(nextTicks(spec, at('2026-01-01T00:00:00Z'), 10))).toEqual(['2026-01-01T10:00:00.000Z', '2026-01-01T10:01:00.000Z', '2026-01-01T10:02:00.000Z']);
    const cron = toScheduleSpec({ cron: '* * * * *', startAt: at('2026-01-01T10:00:00Z'), endAt: at('2026-01-01T10:02:00Z') });
    expect(iso(nextTicks(cron, at('2026-01-01T00:00:00Z'), 10))).toEqual(['2026-01-01T10:00:00.000Z', '2026-01-01T10:01:00.000Z']);
  });
});

describe('ticksBetween (backfill)', () => {
  it('lists every tick of [from, to) in order', () => {
    const spec = toScheduleSpec({ cron: '30 2 * * *', timezone: 'Europe/Berlin' });
    expect(iso(ticksBetween(spec, at('2026-10-24T00:30:00Z'), at('2026-10-26T01:30:00Z')))).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z']);
  });

  it('refuses a range of more than 1,000 ticks (or the caller\'s smaller max), accepts exactly 1,000', () => {
    const spec = toScheduleSpec({ intervalSeconds: 1 });
    const from = at('2026-01-01T00:00:00Z');
    expect(ticksBetween(spec, from, new Date(from.getTime() + 1_000_000))).toHaveLength(MAX_BACKFILL_TICKS);
    expect(() => ticksBetween(spec, from, new Date(from.getTime() + 1_001_000))).toThrow(TooManyTicksError);
    expect(() => ticksBetween(spec, from, new Date(from.getTime() + 11_000), 10)).toThrow('more than 10 ticks');
    expect(() => ticksBetween(spec, from, new Date(from.getTime() + 10_000_000), 5_000)).toThrow('more than 1000 ticks');
  });
});

describe('jitter', () => {
  it('is the same for one tick on every call, differs between ticks, and stays below jitterSeconds', () => {
    const spec = { jitterSeconds: 30 };
    const values = Array.from({ length: 200 }, (_, i) => jitterMs(spec, 's-1', new Date(Date.UTC(2026, 0, 1) + i * 60_000)));
    expect(values.every((value) => value >= 0 && value < 30_000)).toBe(true);
    expect(new Set(values).size).toBeGreaterThan(150);
    expect(jitterMs(spec, 's-1', at('2026-01-01T00:00:00Z'))).toBe(values[0]);
    expect(jitterMs({ jitterSeconds: 0 }, 's-1', at('2026-01-01T00:00:00Z'))).toBe(0);
  });
});

describe('scheduleProblems', () => {
  it('accepts a full valid schedule and the minimal forms', () => {
    expect(scheduleProblems({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', startAt: at('2026-01-01T00:00:00Z'), endAt: at('2027-01-01T00:00:00Z'), jitterSeconds: 60, catchupWindowSeconds: 120, overlapPolicy: 'buffer_one', remainingRuns: 3 })).toEqual([]);
    expect(scheduleProblems({ intervalSeconds: 1 })).toEqual([]);
    expect(scheduleProblems({ intervalSeconds: 60, offsetSeconds: 59, jitterSeconds: 59, remainingRuns: null })).toEqual([]);
  });

  it('refuses a cron that never fires, jitter reaching the next tick of a cron, and periods below the floor given', () => {
    expect(scheduleProblems({ cron: '0 0 30 2 *' })).toEqual(['/cron: never fires (no date matches it)']);
    expect(scheduleProblems({ cron: '*/5 * * * *', jitterSeconds: 300 })).toEqual(['/jitterSeconds: must be less than the shortest gap between two ticks of cron (300 s)']);
    expect(scheduleProblems({ cron: '*/5 * * * *', jitterSeconds: 299 })).toEqual([]);
    expect(scheduleProblems({ intervalSeconds: 5 }, 10)).toEqual(['/intervalSeconds: must be an integer from 10 to 316224000']);
    expect(scheduleProblems({ intervalSeconds: 10 }, 10)).toEqual([]);
    expect(scheduleProblems({ cron: '*/5 * * * * *' }, 10)[0]).toMatch(/^\/cron: fires more often than every 10 s/);
    expect(scheduleProblems({ cron: '0,30 * * * * *' }, 10)).toEqual([]);
    // Irregular gaps count by the shortest: minutes 0 and 1 of every hour are 60 s apart.
    expect(scheduleProblems({ cron: '0,1 * * * *' }, 120)[0]).toMatch(/^\/cron: fires more often than every 120 s/);
  });

  it('names each wrong field by its path', () => {
    expect(scheduleProblems({})).toEqual(['/cron: exactly one of cron and intervalSeconds is required']);
    expect(scheduleProblems({ cron: '* * * * *', intervalSeconds: 5 })).toEqual(['/cron: exactly one of cron and intervalSeconds is required']);
    expect(scheduleProblems({ cron: '* * * *' })).toEqual(['/cron: has 4 fields; expected 5 (minute hour day month weekday) or 6 (second first)']);
    expect(scheduleProblems({ cron: '0 0 0 * * * 2026' })[0]).toMatch(/^\/cron: has 7 fields/);
    expect(scheduleProblems({ cron: '61 * * * *' })[0]).toMatch(/^\/cron: is not a valid cron expression/);
    expect(scheduleProblems({ cron: 'x'.repeat(300) })).toEqual(['/cron: is longer than 256 characters']);
    expect(scheduleProblems({ intervalSeconds: 0 })).toEqual(['/intervalSeconds: must be an integer from 1 to 316224000']);
    expect(scheduleProblems({ intervalSeconds: 1.5 })).toEqual(['/intervalSeconds: must be an integer from 1 to 316224000']);
    expect(scheduleProblems({ intervalSeconds: 60, offsetSeconds: 60 })).toEqual(['/offsetSeconds: must be an integer from 0 to intervalSeconds - 1']);
    expect(scheduleProblems({ cron: '* * * * *', offsetSeconds: 5 })).toEqual(['/offsetSeconds: applies to intervalSeconds only']);
    expect(scheduleProblems({ cron: '* * * * *', timezone: 'Mars/Olympus' })).toEqual(['/timezone: is not a known IANA time zone (e.g. Europe/Berlin)']);
    expect(scheduleProblems({ intervalSeconds: 5, startAt: at('2026-02-01T00:00:00Z'), endAt: at('2026-01-01T00:00:00Z') })).toEqual(['/endAt: must be after startAt']);
    expect(scheduleProblems({ intervalSeconds: 5, startAt: new Date(NaN) })).toEqual(['/startAt: must be a date-time']);
    expect(scheduleProblems({ intervalSeconds: 60, jitterSeconds: 60 })).toEqual(['/jitterSeconds: must be less than intervalSeconds']);
    expect(scheduleProblems({ cron: '* * * * *', jitterSeconds: 86_401 })).toEqual(['/jitterSeconds: must be an integer from 0 to 86400']);
    expect(scheduleProblems({ intervalSeconds: 5, catchupWindowSeconds: 9 })).toEqual(['/catchupWindowSeconds: must be an integer from 10 to 31622400']);
    expect(scheduleProblems({ intervalSeconds: 5, overlapPolicy: 'queue' })).toEqual(['/overlapPolicy: must be one of skip, buffer_one, buffer_all, cancel_other, allow_all']);
    expect(scheduleProblems({ intervalSeconds: 5, remainingRuns: 0 })).toEqual(['/remainingRuns: must be null (unlimited) or an integer ≥ 1']);
  });

  it('toScheduleSpec applies the defaults and refuses an invalid spec', () => {
    expect(toScheduleSpec({ intervalSeconds: 10 })).toEqual({ cron: null, intervalSeconds: 10, offsetSeconds: 0, timezone: 'UTC', startAt: null, endAt: null, jitterSeconds: 0 });
    expect(() => toScheduleSpec({ intervalSeconds: 0 })).toThrow('/intervalSeconds');
  });
});
