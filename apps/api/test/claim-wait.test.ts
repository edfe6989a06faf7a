/**
 * The shared wait on a claim another request holds (services/claim-wait.ts, used by
 * `Idempotency-Key` and event posts): pauses double from 20 ms to 500 ms, a holder is taken over
 * only once it stalled past 10 s, and at most 64 requests wait on one claim per process.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { awaitClaim, type ClaimLook } from '../src/services/claim-wait.ts';

const busy = (waiting: number) => new Error(`busy: ${waiting} wait`);

describe('awaitClaim', () => {
  it("looks again after 20 ms, doubling up to 500 ms, and answers the holder's result", async () => {
    const clock = new ManualClock();
    const start = clock.now();
    const looks: number[] = [];
    const waiting = awaitClaim<string>(clock, {
      key: 'test result',
      look: async () => {
        looks.push(clock.now().getTime() - start.getTime());
        return looks.length < 8 ? { claimedAt: start } : { result: 'done' };
      },
      takeOver: async () => {
        throw new Error('no take-over within the grace');
      },
      busy,
    });
    let settled = false;
    void waiting.finally(() => (settled = true));
    for (let round = 0; round < 20 && !settled; round++) {
      await clock.untilSleepers(1);
      await clock.advance(500);
    }
    expect(await waiting).toEqual({ result: 'done' });
    // Pauses of 20, 40, 80, 160, 320, then 500 ms.
    expect(looks).toEqual([0, 20, 60, 140, 300, 620, 1_120, 1_620]);
  });

  it('takes over a holder only once it held the claim longer than 10 s, and only if the take-over wins', async () => {
    const clock = new ManualClock();
    const claimedAt = clock.now();
    const takeOvers: number[] = [];
    let wins = false;
    const waiting = awaitClaim<string>(clock, {
      key: 'test stalled',
      look: async () => ({ claimedAt }),
      takeOver: async (since, now) => {
        expect(since).toBe(claimedAt);
        takeOvers.push(now.getTime() - claimedAt.getTime());
        return wins;
      },
      busy,
    });
    await clock.untilSleepers(1);
    await clock.advance(10_000);
    await clock.untilSleepers(1);
    expect(takeOvers).toEqual([]);
    await clock.advance(500);
    await clock.untilSleepers(1);
    expect(takeOvers).toHaveLength(1); // lost to another taker: it waits on
    wins = true;
    await clock.advance(500);
    expect(await waiting).toEqual({ mine: true });
    expect(takeOvers).toHaveLength(2);
    expect(takeOvers[0]).toBeGreaterThan(10_000);
  });

  it('lets 64 requests wait on one claim; one more is refused at once, and places free when waits end', async () => {
    const clock = new ManualClock();
    const claimedAt = clock.now();
    let look: ClaimLook<string> = { claimedAt };
    const wait = (key: string) => awaitClaim<string>(clock, { key, look: async () => look, takeOver: async () => false, busy });
    const waiters = Array.from({ length: 64 }, () => wait('test bounded'));
    await clock.untilSleepers(64);
    await expect(wait('test bounded')).rejects.toThrow('busy: 64 wait');
    // Another claim has its own places.
    const other = wait('test other');
    await clock.untilSleepers(65);
    look = { result: 'done' };
    await clock.advance(20);
    expect(await Promise.all([...waiters, other])).toEqual(Array(65).fill({ result: 'done' }));
    look = { claimedAt };
    const again = wait('test bounded');
    await clock.untilSleepers(1);
    look = { mine: true };
    await clock.advance(20);
    expect(await again).toEqual({ mine: true });
  });
});
