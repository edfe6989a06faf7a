/**
 * The active-run cap (issue #20 item 5): an engine executes at most `maxActiveRuns` runs at once;
 * runs started beyond it stay `pending` and are claimed in trigger order as executions end — none
 * dropped, none lost when the engine stops, wake-ups of parked runs included. Concurrency is
 * measured by an executor that counts its calls in flight and holds each until the test lets it go.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkflowNodeInput } from '@switchyard/domain';
import type { Executor } from './executors/types.ts';
import { openHarness, type Harness } from './testing/harness.ts';

/** An executor `hold` that records which run (`arguments.n`) entered, counts calls in flight and holds each until released. */
function holdingExecutor() {
  const entered: number[] = [];
  const held: Array<() => void> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let onEnter: (() => void) | null = null;
  const executor: Executor = {
    kind: 'test',
    key: 'hold',
    timeoutMs: 60_000,
    invoke: async (call) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      entered.push(call.arguments['n'] as number);
      try {
        await new Promise<void>((resolve, reject) => {
          held.push(resolve);
          call.signal.addEventListener(
            'abort',
            () => {
              held.splice(held.indexOf(resolve), 1);
              reject(call.signal.reason);
            },
            { once: true },
          );
          onEnter?.();
        });
        return { arguments: call.arguments, input: call.input };
      } finally {
        inFlight--;
      }
    },
  };
  return {
    executor,
    entered,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    /** Resolves once at least `count` calls are held (rejects after 10 s of real time: a bound, not a margin). */
    async untilHeld(count: number): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (held.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} held calls, found ${held.length}`);
        await new Promise<void>((resolve) => {
          onEnter = resolve;
          setTimeout(resolve, 50);
        });
        onEnter = null;
      }
    },
    /** Lets the oldest held call finish. */
    releaseOne(): void {
      held.shift()!();
    },
  };
}

const holdStep: WorkflowNodeInput = { name: 'work', nodeType: 'step', executorKey: 'hold', config: { n: { $cel: 'input.n' } } };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the active-run cap', () => {
  it('runs 1,000 triggers with a cap of 4: all complete, at most 4 execute at once, in trigger order', async () => {
    const hold = holdingExecutor();
    h = await openHarness({ maxActiveRuns: 4 }, { doubles: { hold: hold.executor } });
    const wf = await h.createWorkflow([holdStep]);
    const total = 1_000;
    const runIds: string[] = [];
    for (let n = 0; n < total; n++) {
      const run = await h.createRun(wf.id, { n });
      runIds.push(run.id);
      void h.engine.start(run.id);
    }
    // Beyond the cap nothing is claimed: the runs wait in the store as `pending`.
    await hold.untilHeld(4);
    expect(h.engine.activeCount).toBe(4);
    expect(await h.repos.runs.countByStatus('pending')).toBe(total - 4);
    for (let done = 0; done < total; done++) {
      await hold.untilHeld(Math.min(4, total - done));
      expect(hold.inFlight).toBeLessThanOrEqual(4);
      hold.releaseOne();
    }
    await h.engine.idle();
    expect(hold.maxInFlight).toBe(4);
    // The first four start together (their executions race to the step); every later one takes the
    // slot its predecessor freed, one at a time, in trigger order.
    expect(new Set(hold.entered.slice(0, 4))).toEqual(new Set([0, 1, 2, 3]));
    expect(hold.entered.slice(4)).toEqual(Array.from({ length: total - 4 }, (_, n) => n + 4));
    expect(await h.repos.runs.countByStatus('completed')).toBe(total);
    expect(h.executors.count('hold')).toBe(total);
  }, 60_000);

  it('keeps the waiting runs when the engine stops, and a new engine continues them in trigger order without re-running completed nodes', async () => {
    const hold = holdingExecutor();
    h = await openHarness({ maxActiveRuns: 3 }, { doubles: { hold: hold.executor } });
    const wf = await h.createWorkflow([holdStep, { name: 'after', nodeType: 'step', executorKey: 'echo' }]);
    const total = 20;
    for (let n = 0; n < total; n++) void h.engine.start((await h.createRun(wf.id, { n })).id);
    for (let i = 0; i < 5; i++) {
      await hold.untilHeld(3);
      hold.releaseOne();
    }
    await hold.untilHeld(3);
    await h.engine.close(); // runs 5, 6, 7 are aborted in flight and released; 8.. never started
    expect(await h.repos.runs.countByStatus('completed')).toBe(5);
    expect(await h.repos.runs.countByStatus('pending')).toBe(total - 8);

    const second = h.newEngine({ owner: 'second', maxActiveRuns: 3 });
    second.startRecovery();
    for (let done = 5; done < total; done++) {
      await hold.untilHeld(Math.min(3, total - done));
      expect(hold.inFlight).toBeLessThanOrEqual(3);
      hold.releaseOne();
    }
    await second.idle();
    expect(await h.repos.runs.countByStatus('completed')).toBe(total);
    // First entries follow the trigger order; only the three aborted calls ran again, first after the restart.
    // Runs started together (the first three; the three aborted ones taken up at once by the new
    // engine) may reach the step in any order; every other run follows trigger order.
    expect(new Set(hold.entered.slice(0, 3))).toEqual(new Set([0, 1, 2]));
    expect(hold.entered.slice(3, 8)).toEqual([3, 4, 5, 6, 7]);
    expect(new Set(hold.entered.slice(8, 11))).toEqual(new Set([5, 6, 7]));
    expect(hold.entered.slice(11)).toEqual(Array.from({ length: total - 8 }, (_, n) => n + 8));
    expect(h.executors.count('hold')).toBe(total + 3);
    expect(h.executors.count('echo')).toBe(total);
    await second.close();
  }, 30_000);

  it('does not lose the wake-up of a parked run decided while the instance is at its cap', async () => {
    const hold = holdingExecutor();
    h = await openHarness({ maxActiveRuns: 1 }, { doubles: { hold: hold.executor } });
    const gated = await h.createWorkflow([{ name: 'gate', nodeType: 'step', executorKey: 'echo', humanReview: { requiresConfirmation: true } }]);
    const busy = await h.createWorkflow([holdStep]);
    const parked = await h.createRun(gated.id, {});
    await h.engine.start(parked.id);
    expect(await h.repos.runs.get(parked.id)).toMatchObject({ status: 'awaiting_approval' });

    const blocker = await h.createRun(busy.id, { n: 1 });
    void h.engine.start(blocker.id);
    await hold.untilHeld(1);
    const [gate] = await h.pending(parked.id);
    expect(await h.decide(parked.id, { stepId: gate!.stepId, resolution: 'confirm' })).not.toBeNull();
    // At the cap the woken run is not claimed: it waits, claimable, in the store.
    expect(h.engine.activeCount).toBe(1);
    expect(await h.repos.runs.get(parked.id)).toMatchObject({ status: 'awaiting_approval', wakePending: true });

    hold.releaseOne();
    await h.engine.idle();
    expect(await h.repos.runs.get(blocker.id)).toMatchObject({ status: 'completed' });
    expect(await h.repos.runs.get(parked.id)).toMatchObject({ status: 'completed' });
  });

  it('does not strand a run started while a fill was reading the store: it takes the next free slot, no recovery tick needed', async () => {
    const hold = holdingExecutor();
    h = await openHarness({ maxActiveRuns: 2 }, { doubles: { hold: hold.executor } });
    const wf = await h.createWorkflow([holdStep]);
    for (const n of [1, 2]) void h.engine.start((await h.createRun(wf.id, { n })).id);
    await hold.untilHeld(2);
    void h.engine.start((await h.createRun(wf.id, { n: 3 })).id); // waits: at the cap
    // The next read of the store answers what it found before run 4 was triggered, and only when let go.
    const runs = h.repos.runs;
    const original = runs.listClaimable.bind(runs);
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    let reading!: () => void;
    const readStarted = new Promise<void>((resolve) => (reading = resolve));
    runs.listClaimable = async (now, limit) => {
      const ids = await original(now, limit);
      runs.listClaimable = original;
      reading();
      await gate;
      return ids;
    };
    hold.releaseOne(); // run 1 ends: its slot is filled from that read
    await readStarted;
    void h.engine.start((await h.createRun(wf.id, { n: 4 })).id); // triggered while the read is under way
    letGo();
    await hold.untilHeld(2); // runs 2 and 3
    hold.releaseOne(); // run 2 ends: run 4 takes its slot
    await hold.untilHeld(2);
    expect(hold.entered).toEqual([1, 2, 3, 4]);
    hold.releaseOne();
    hold.releaseOne();
    await h.engine.idle();
    expect(await h.repos.runs.countByStatus('completed')).toBe(4);
  });

  it('leaves a slot to the recovery scan when claiming fails, instead of retrying the claim in a tight loop', async () => {
    const hold = holdingExecutor();
    h = await openHarness({ maxActiveRuns: 1 }, { doubles: { hold: hold.executor } });
    const wf = await h.createWorkflow([holdStep]);
    for (const n of [1, 2, 3]) void h.engine.start((await h.createRun(wf.id, { n })).id);
    await hold.untilHeld(1);
    // The store reads but refuses claims (e.g. a full disk): every claim fails.
    const runs = h.repos.runs;
    const original = runs.claim.bind(runs);
    let claims = 0;
    runs.claim = async () => {
      claims++;
      throw new Error('the store refuses writes');
    };
    hold.releaseOne(); // run 1 ends (its own writes are not claims); the freed slot tries run 2 once
    await h.engine.idle();
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(claims).toBe(1);
    expect(h.engine.activeCount).toBe(0);
    // Once the store accepts claims again, the recovery scan fills the slot, in trigger order.
    runs.claim = original;
    await h.engine.recoverOrphans();
    await hold.untilHeld(1);
    hold.releaseOne();
    await hold.untilHeld(1);
    hold.releaseOne();
    await h.engine.idle();
    expect(hold.entered).toEqual([1, 2, 3]);
    expect(await h.repos.runs.countByStatus('completed')).toBe(3);
  });

  it('claims nothing once the engine began to close: a run started then stays pending', async () => {
    h = await openHarness({ maxActiveRuns: 2 });
    const wf = await h.createWorkflow([{ name: 'A', nodeType: 'step', executorKey: 'echo' }]);
    await h.engine.close();
    const run = await h.createRun(wf.id, {});
    await h.engine.start(run.id);
    expect(await h.engine.recoverOrphans()).toBe(0);
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'pending', leaseOwner: null });
  });
});
