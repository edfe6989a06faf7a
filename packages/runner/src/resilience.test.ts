import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowNodeInput } from '@switchyard/domain';
import { MAX_INTERNAL_FAILURES } from './engine.ts';
import { openHarness, type Harness } from './testing/harness.ts';
import { ManualClock } from './testing/manual-clock.ts';

const step = (name: string, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'echo', ...extra });

let h: Harness;
beforeEach(async () => {
  h = await openHarness({ parallelLimit: 64 });
});
afterEach(async () => {
  await h.close();
});

/** Reopens `h` on a manual clock: its engines, their leases and the `wait` executor follow it. */
async function onManualClock(): Promise<ManualClock> {
  await h.close();
  const clock = new ManualClock(Date.now());
  h = await openHarness({ parallelLimit: 64, clock });
  return clock;
}

/** Makes the next `times` run-event appends of `type` throw, as a store outage would. */
function failEventAppends(type: string, times: number): void {
  const original = h.repos.events.append.bind(h.repos.events);
  let left = times;
  h.repos.events.append = async (event, now, expected) => {
    if (event.type === type && left > 0) {
      left -= 1;
      throw new Error('store unavailable');
    }
    return original(event, now, expected);
  };
}

describe('run events under concurrency', () => {
  it('numbers the events of 32 concurrent steps 1, 2, 3, ... without a clash', async () => {
    const branch = (b: number): WorkflowNodeInput => ({ name: `P${b}`, nodeType: 'parallel', children: Array.from({ length: 8 }, (_, i) => step(`S${b}-${i}`)) });
    const wf = await h.createWorkflow([{ name: 'Outer', nodeType: 'parallel', children: [branch(1), branch(2), branch(3), branch(4)] }]);
    const run = await h.runToEnd(wf.id);
    expect(run.status, run.errorSummary ?? '').toBe('completed');
    const events = await h.repos.events.listByRun(run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'node.completed')).toHaveLength(37);
  });
});

describe('store errors are not workflow failures', () => {
  it('does not run a step again when recording its success fails', async () => {
    const wf = await h.createWorkflow([step('A', { stepConfig: { maxRetries: 2, backoffBaseSeconds: 0.001, backoffMaxSeconds: 0.001 } }), step('B')]);
    failEventAppends('node.completed', 1);
    const run = await h.createRun(wf.id);
    await h.engine.start(run.id);
    const released = (await h.repos.runs.get(run.id))!;
    expect(released).toMatchObject({ status: 'running', leaseOwner: null, internalFailures: 1 });
    expect(await h.engine.recoverOrphans()).toBe(1);
    await h.engine.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('completed');
    expect(h.executors.calls.map((c) => c.key)).toEqual(['echo', 'echo']);
  });

  it('releases the run on an internal error and continues it on recovery instead of failing it', async () => {
    const clock = await onManualClock();
    const wf = await h.createWorkflow([step('A'), step('B'), step('C')]);
    failEventAppends('node.started', 2);
    const run = await h.createRun(wf.id);
    await h.engine.start(run.id);
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });
    await h.engine.recoverOrphans();
    await h.engine.idle();
    // The second execution made no progress either: recovery backs off before claiming it again.
    expect(await h.engine.recoverOrphans()).toBe(0);
    await clock.advance(10 * 60_000);
    expect(await h.engine.recoverOrphans()).toBe(1);
    await h.engine.idle();
    const done = (await h.repos.runs.get(run.id))!;
    expect(done.status).toBe('completed');
    const nodeRuns = await h.repos.nodeRuns.listByRun(run.id);
    expect(nodeRuns.map((n) => [n.nodeName, n.status])).toEqual([
      ['A', 'completed'],
      ['B', 'completed'],
      ['C', 'completed'],
    ]);
  });

  it('aborts a call whose start could not be recorded before the run is released, so that recovery never runs the step beside it', async () => {
    // On a manual clock the `wait` step never ends by itself: it sleeps until the abort ends it.
    const clock = await onManualClock();
    const wf = await h.createWorkflow([step('Slow', { executorKey: 'wait', config: { ms: 60_000 } })]);
    const original = h.repos.nodeRuns.startAttempt.bind(h.repos.nodeRuns);
    h.repos.nodeRuns.startAttempt = async () => {
      throw new Error('store unavailable');
    };
    const run = await h.createRun(wf.id);
    await h.engine.start(run.id);
    await h.engine.idle();
    expect(h.executors.calls.map((c) => c.key)).toEqual(['wait']);
    expect(clock.sleepers).toBe(0); // the call is over, not left running
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });
    expect(await h.repos.nodeRuns.listByRun(run.id)).toEqual([]);
    h.repos.nodeRuns.startAttempt = original;
  });

  it(`fails the run after ${MAX_INTERNAL_FAILURES} internal errors in a row`, async () => {
    // A step that takes a while: its start is recorded before it answers (a quick one's start and
    // end are one write, which would be progress), and that start's event keeps failing.
    const wf = await h.createWorkflow([step('A', { executorKey: 'wait', config: { ms: 5 } })]);
    failEventAppends('node.started', 100);
    const run = await h.createRun(wf.id);
    for (let i = 0; i < MAX_INTERNAL_FAILURES; i++) {
      await h.engine.start(run.id);
      await h.engine.idle();
    }
    const done = (await h.repos.runs.get(run.id))!;
    expect(done.status).toBe('failed');
    expect(done.errorSummary).toBe('Internal error: store unavailable');
  });
});

describe('lease fencing', () => {
  it('an owner that cannot renew its lease stops before another instance takes over', async () => {
    const clock = await onManualClock();
    const wf = await h.createWorkflow([step('Slow', { executorKey: 'wait', config: { ms: 600 } }), step('SendEmail')]);
    // The heartbeat period does not divide the lease: the fence still fires when the lease runs out.
    const cutOff = h.newEngine({ owner: 'cut-off', leaseMs: 300, heartbeatMs: 70 });
    h.repos.runs.renewLease = async () => {
      throw new Error('network partition');
    };
    const run = await h.createRun(wf.id);
    let stopped = false;
    const first = cutOff.start(run.id).then(() => void (stopped = true));
    await clock.untilSleepers(1); // Slow is in flight; every renewal from now on fails
    const survivor = h.newEngine({ owner: 'survivor' });
    await clock.advance(299);
    expect(stopped).toBe(false); // the lease still holds: the owner carries on, nobody else may claim
    expect(await survivor.recoverOrphans()).toBe(0);
    await clock.advance(1); // the lease runs out: the owner fences itself at once...
    await first;
    expect(cutOff.activeCount).toBe(0);
    expect(await survivor.recoverOrphans()).toBe(0); // ...before the lease can pass to anyone
    await clock.advance(1);
    expect(await survivor.recoverOrphans()).toBe(1);
    await clock.untilSleepers(1); // Slow again, on the survivor
    await clock.advance(600);
    await survivor.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('completed');
    // The interrupted step runs again on the survivor; the next one runs exactly once, never on the cut-off owner.
    expect(h.executors.count('echo')).toBe(1);
    expect(h.executors.count('wait')).toBe(2);
  });
});

describe('an ended run leaves nothing open', () => {
  it('closes held node runs and undecided gates of branches the run never came back to', async () => {
    const wf = await h.createWorkflow([
      { name: 'P', nodeType: 'parallel', children: [step('Gated', { humanReview: { requiresConfirmation: true } }), step('Broken', { executorKey: 'fail', config: { message: 'down' } })] },
    ]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('failed');
    const gated = (await h.repos.nodeRuns.listByRun(run.id)).find((n) => n.nodeName === 'Gated')!;
    expect(gated).toMatchObject({ status: 'cancelled', error: 'run failed' });
    expect(gated.finishedAt).not.toBeNull();
    expect(run.pendingRequirements).toHaveLength(1);
    expect(run.pendingRequirements[0]).toMatchObject({ decidedBy: 'run_ended', resolution: 'cancel' });
    expect(run.pendingRequirements[0]!.decidedAt).not.toBeNull();
  });
});
