/**
 * Graceful shutdown of the engine (issue #20 item 4), on the manual clock: `close({ graceMs })`
 * starts no node any more, lets executing nodes finish within the grace, aborts what remains at
 * the grace, and releases every lease — also when one release fails — so that another engine
 * continues at once without running a finished node again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkflowNodeInput } from '@switchyard/domain';
import type { Executor } from './executors/types.ts';
import { openHarness, type Harness } from './testing/harness.ts';
import { ManualClock } from './testing/manual-clock.ts';

const step = (name: string, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'echo', ...extra });

let h: Harness;
let clock: ManualClock;
afterEach(async () => {
  await h.close();
});

/** `stubborn`: waits `arguments.ms` on the clock and ignores its abort signal (an executor that does not stop when asked). */
const stubborn = (): Executor => ({
  kind: 'test',
  key: 'stubborn',
  timeoutMs: 600_000,
  invoke: async (call) => {
    await clock.sleep(call.arguments['ms'] as number);
    return { arguments: call.arguments, input: call.input };
  },
});

async function open(): Promise<void> {
  clock = new ManualClock(Date.now());
  h = await openHarness({ clock, leaseMs: 60_000 }, { doubles: { stubborn: stubborn() } });
}

async function nodeStatuses(runId: string): Promise<Record<string, string>> {
  return Object.fromEntries((await h.repos.nodeRuns.listByRun(runId)).map((n) => [n.nodeName, n.status]));
}

describe('engine shutdown with a grace', () => {
  it('lets an executing node finish within the grace, starts no next node, and a new engine continues without re-running it', async () => {
    await open();
    const wf = await h.createWorkflow([step('slow', { executorKey: 'wait', config: { ms: 1_000 } }), step('next')]);
    const first = h.newEngine({ owner: 'first' });
    const run = await h.createRun(wf.id, {});
    void first.start(run.id);
    await clock.untilSleepers(1); // slow is in flight
    const closed = first.close({ graceMs: 5_000 });
    await clock.untilSleepers(2); // slow, and the grace
    await clock.advance(1_000); // slow finishes well within the grace
    await closed;
    expect(await nodeStatuses(run.id)).toEqual({ slow: 'completed' });
    // Released at once (the lease would hold for another minute), not left to expire.
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });

    const second = h.newEngine({ owner: 'second' });
    expect(await second.recoverOrphans()).toBe(1);
    await second.idle();
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'completed' });
    expect(await nodeStatuses(run.id)).toEqual({ slow: 'completed', next: 'completed' });
    expect(h.executors.count('wait')).toBe(1);
    expect(h.executors.count('echo')).toBe(1);
  });

  it('aborts a node still executing when the grace ends and releases the run; the next claim runs that node again', async () => {
    await open();
    const wf = await h.createWorkflow([step('long', { executorKey: 'wait', config: { ms: 10_000 } })]);
    const first = h.newEngine({ owner: 'first' });
    const run = await h.createRun(wf.id, {});
    void first.start(run.id);
    await clock.untilSleepers(1);
    let done = false;
    const closed = first.close({ graceMs: 2_000 }).then(() => (done = true));
    await clock.untilSleepers(2);
    await clock.advance(1_999);
    expect(done).toBe(false); // within the grace the node keeps running
    expect(await h.repos.runs.get(run.id)).toMatchObject({ leaseOwner: 'first' });
    await clock.advance(1);
    await closed;
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });

    const second = h.newEngine({ owner: 'second' });
    expect(await second.recoverOrphans()).toBe(1);
    await clock.untilSleepers(1);
    await clock.advance(10_000);
    await second.idle();
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'completed' });
    expect(h.executors.count('wait')).toBe(2);
  });

  it('releases every lease when the release of one run fails: the others at once, the failed one on a second try', async () => {
    await open();
    const wf = await h.createWorkflow([step('long', { executorKey: 'wait', config: { ms: 60_000 } })]);
    const first = h.newEngine({ owner: 'first' });
    const runs = [await h.createRun(wf.id, {}), await h.createRun(wf.id, {}), await h.createRun(wf.id, {})];
    for (const run of runs) void first.start(run.id);
    await clock.untilSleepers(3);
    const release = h.repos.runs.release.bind(h.repos.runs);
    const failing = runs[0]!.id;
    let failures = 0;
    h.repos.runs.release = async (runId, owner, now) => {
      if (runId === failing && failures++ === 0) throw new Error('store unreachable');
      return release(runId, owner, now);
    };
    await first.close({ graceMs: 0 });
    expect(failures).toBe(2); // failed once, then released
    for (const run of runs) expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });
  });

  it('resolves close even when a release keeps failing, having released the other runs', async () => {
    await open();
    const wf = await h.createWorkflow([step('long', { executorKey: 'wait', config: { ms: 60_000 } })]);
    const first = h.newEngine({ owner: 'first' });
    const [a, b] = [await h.createRun(wf.id, {}), await h.createRun(wf.id, {})];
    void first.start(a.id);
    void first.start(b.id);
    await clock.untilSleepers(2);
    const release = h.repos.runs.release.bind(h.repos.runs);
    h.repos.runs.release = async (runId, owner, now) => {
      if (runId === a.id) throw new Error('store unreachable');
      return release(runId, owner, now);
    };
    await first.close({ graceMs: 0 });
    expect(await h.repos.runs.get(a.id)).toMatchObject({ leaseOwner: 'first' }); // it will expire
    expect(await h.repos.runs.get(b.id)).toMatchObject({ leaseOwner: null });
  });

  it('does not start a node after the shutdown began, even with a long grace', async () => {
    await open();
    const wf = await h.createWorkflow([step('one', { executorKey: 'wait', config: { ms: 100 } }), step('two', { executorKey: 'wait', config: { ms: 100 } })]);
    const first = h.newEngine({ owner: 'first' });
    const run = await h.createRun(wf.id, {});
    void first.start(run.id);
    await clock.untilSleepers(1);
    const closed = first.close({ graceMs: 60_000 });
    await clock.untilSleepers(2);
    await clock.advance(100);
    await closed; // ends as soon as the execution let go, not at the end of the grace
    expect(await nodeStatuses(run.id)).toEqual({ one: 'completed' });
    expect(h.executors.count('wait')).toBe(1);
  });

  it('releases the lease of an execution that does not stop when aborted, shortly after the abort', async () => {
    await open();
    const wf = await h.createWorkflow([step('deaf', { executorKey: 'stubborn', config: { ms: 30_000 } })]);
    const first = h.newEngine({ owner: 'first' });
    const run = await h.createRun(wf.id, {});
    void first.start(run.id);
    await clock.untilSleepers(1);
    let done = false;
    const closed = first.close({ graceMs: 0 }).then(() => (done = true));
    await clock.untilSleepers(2); // the executor's sleep, and the wait for the aborted execution to let go
    await clock.advance(1_000);
    expect(done).toBe(false);
    await clock.advance(1_000);
    await closed;
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });
    await clock.advance(30_000); // the call ends at last; its execution may no longer write
    await first.idle();
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });
  });
});
