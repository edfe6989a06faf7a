import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CLAIMS_WITHOUT_PROGRESS } from './engine.ts';
import { openHarness, type Harness } from './testing/harness.ts';
import { ManualClock } from './testing/manual-clock.ts';

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

/** A clock that tests move forward by hand (leases, heartbeats and recovery backoff follow it). */
const movableClock = () => new ManualClock(Date.now());

/** Resolves once the run has a node run in `status`. */
async function nodeRunIn(runId: string, status: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await h.repos.nodeRuns.listByRun(runId)).some((n) => n.status === status)) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`no node run became ${status}`);
}

describe('poison-run protection', () => {
  it('fails a run whose executions keep dying before any node finishes, instead of claiming it forever', async () => {
    const clock = movableClock();
    const engine = h.newEngine({ clock, leaseMs: 1_000 });
    const wf = await h.createWorkflow([{ name: 'Hang', nodeType: 'step', executorKey: 'sleep', config: { ms: 3_600_000 } }]);
    const run = await h.createRun(wf.id);
    engine.start(run.id);
    for (let execution = 1; execution <= MAX_CLAIMS_WITHOUT_PROGRESS; execution++) {
      await nodeRunIn(run.id, 'running');
      // The execution dies without a trace (as on kill -9 or a lost lease): its lease stays until it expires.
      await engine.abort(run.id, 'simulated crash');
      expect((await h.repos.runs.get(run.id))!.claimsSinceProgress).toBe(execution);
      if (execution > 1) expect(await engine.recoverOrphans()).toBe(0); // backing off
      await clock.advance(10 * 60_000);
      expect(await engine.recoverOrphans()).toBe(1);
    }
    await engine.idle();
    const failed = (await h.repos.runs.get(run.id))!;
    expect(failed.status).toBe('failed');
    expect(failed.errorSummary).toMatch(/after 5 executions in a row ended without progress/);
    const events = await h.repos.events.listByRun(run.id);
    expect(events.at(-1)?.type).toBe('run.failed');
    expect(await engine.recoverOrphans()).toBe(0);
  });

  it('does not count executions that made progress or parked', async () => {
    const clock = movableClock();
    const engine = h.newEngine({ clock, leaseMs: 1_000 });
    const steps = Array.from({ length: MAX_CLAIMS_WITHOUT_PROGRESS + 2 }, (_, i) => ({
      name: `S${i}`,
      nodeType: 'step' as const,
      executorKey: 'echo',
      humanReview: { requiresConfirmation: true },
    }));
    const wf = await h.createWorkflow(steps);
    const run = await h.createRun(wf.id);
    engine.start(run.id);
    await engine.idle();
    for (const { name } of steps) {
      const [gate] = await h.pending(run.id);
      expect(gate?.nodeId).toBe(wf.nodes.find((n) => n.name === name)?.id);
      await h.decide(run.id, { stepId: gate!.stepId, resolution: 'confirm' }, engine);
      await engine.idle();
    }
    expect((await h.repos.runs.get(run.id))!.status).toBe('completed');
  });

  it('does not count claims that ended at a gate, even when no node finished in between', async () => {
    const engine = h.newEngine();
    const wf = await h.createWorkflow([
      { name: 'Ask', nodeType: 'step', executorKey: 'echo', humanReview: { requiresConfirmation: true, onReject: 'retry', maxRetries: 20 } },
    ]);
    const run = await h.createRun(wf.id);
    engine.start(run.id);
    await engine.idle();
    for (let round = 0; round < MAX_CLAIMS_WITHOUT_PROGRESS + 2; round++) {
      const [gate] = await h.pending(run.id);
      await h.decide(run.id, { stepId: gate!.stepId, resolution: 'reject' }, engine);
      await engine.idle();
      expect((await h.repos.runs.get(run.id))!.status).toBe('awaiting_approval');
    }
    const [gate] = await h.pending(run.id);
    await h.decide(run.id, { stepId: gate!.stepId, resolution: 'confirm' }, engine);
    await engine.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('completed');
  });

  it('takes back the claim of a graceful shutdown, without forgetting earlier claims without progress', async () => {
    const clock = movableClock();
    const first = h.newEngine({ clock, leaseMs: 1_000 });
    const wf = await h.createWorkflow([{ name: 'Hang', nodeType: 'step', executorKey: 'sleep', config: { ms: 3_600_000 } }]);
    const run = await h.createRun(wf.id);
    first.start(run.id);
    await nodeRunIn(run.id, 'running');
    await first.abort(run.id, 'simulated crash');
    await clock.advance(10 * 60_000);
    const second = h.newEngine({ clock, leaseMs: 1_000 });
    expect(await second.recoverOrphans()).toBe(1);
    await nodeRunIn(run.id, 'running');
    expect((await h.repos.runs.get(run.id))!.claimsSinceProgress).toBe(2);
    await second.close(); // graceful: releases the run
    expect((await h.repos.runs.get(run.id))!).toMatchObject({ leaseOwner: null, claimsSinceProgress: 1 });
  });
});
