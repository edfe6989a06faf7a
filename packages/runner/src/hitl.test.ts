import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildAskRequirement, type WorkflowNodeInput } from '@switchyard/domain';
import { TimeoutSweeper } from './sweeper.ts';
import { openHarness, type Harness } from './testing/harness.ts';
import { ManualClock } from './testing/manual-clock.ts';

const step = (name: string, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'echo', ...extra });
const confirmed = (name: string, extra: Partial<WorkflowNodeInput['humanReview']> = {}) => step(name, { humanReview: { requiresConfirmation: true, ...extra } });

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

/** Polls `condition` between macrotasks until it holds (fails the test after a few seconds). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 5_000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not met');
}

/** Starts a run and waits until the engine has let go of it (finished or parked). */
async function startRun(workflowId: string, input: Record<string, unknown> = {}) {
  const run = await h.createRun(workflowId, input);
  await h.engine.start(run.id);
  return (await h.repos.runs.get(run.id))!;
}

describe('gates park the run and hold nothing', () => {
  it('parks at a confirmation with no lease and continues after the decision', async () => {
    const wf = await h.createWorkflow([confirmed('A', { confirmationMessage: 'Go?' }), step('B')]);
    const parked = await startRun(wf.id);
    expect(parked).toMatchObject({ status: 'awaiting_approval', leaseOwner: null, leaseExpiresAt: null, wakePending: false });
    expect(h.engine.activeCount).toBe(0);
    const [requirement] = await h.pending(parked.id);
    expect(requirement).toMatchObject({ stepName: 'A', requiresConfirmation: true, confirmationMessage: 'Go?', isPostExecution: false });
    expect(h.executors.calls).toHaveLength(0);

    await h.decide(parked.id, { stepId: requirement!.stepId, resolution: 'confirm' });
    await h.engine.idle();
    expect((await h.repos.runs.get(parked.id))!.status).toBe('completed');
    expect(h.executors.calls.map((c) => c.key)).toEqual(['echo', 'echo']);
  });

  it('survives a restart while parked: a fresh engine continues after the decision', async () => {
    const wf = await h.createWorkflow([confirmed('A')]);
    const parked = await startRun(wf.id);
    await h.engine.close();
    const restarted = h.newEngine({ owner: 'restarted' });
    const [requirement] = await h.pending(parked.id);
    await h.decide(parked.id, { stepId: requirement!.stepId, resolution: 'confirm' }, restarted);
    await restarted.idle();
    expect((await h.repos.runs.get(parked.id))!.status).toBe('completed');
  });

  it('a decision whose continuation was lost (crash) is picked up by recovery', async () => {
    const wf = await h.createWorkflow([confirmed('A')]);
    const parked = await startRun(wf.id);
    const [requirement] = await h.pending(parked.id);
    // Decide without waking any engine, as if the deciding process died right after the CAS.
    const { validateDecision } = await import('@switchyard/domain');
    await h.repos.runs.decideRequirement(parked.id, requirement!.gateKey, validateDecision(requirement!, { stepId: requirement!.stepId, resolution: 'confirm' }), new Date());
    const other = h.newEngine({ owner: 'other' });
    expect(await other.recoverOrphans()).toBe(1);
    await other.idle();
    expect((await h.repos.runs.get(parked.id))!.status).toBe('completed');
  });
});

describe('triggering identity', () => {
  it('reaches executors after a HITL pause, carried by the run', async () => {
    const wf = await h.createWorkflow([confirmed('A')]);
    const identity = { userId: 'u-1', username: 'ada', scopes: ['workflows-control'] };
    const run = await h.createRun(wf.id, {}, identity);
    await h.engine.start(run.id);
    await h.engine.close();
    const resumed = h.newEngine({ owner: 'after-pause' });
    const [requirement] = await h.pending(run.id);
    await h.decide(run.id, { stepId: requirement!.stepId, resolution: 'confirm' }, resumed);
    await resumed.idle();
    expect(h.executors.calls.map((c) => c.identity)).toEqual([identity]);
  });
});

describe('lost wake-up', () => {
  it('never parks while a decision that arrived during the traversal is unconsumed', async () => {
    const wf = await h.createWorkflow([confirmed('A'), step('B')]);
    let injected = 0;
    const engine = h.newEngine({
      owner: 'racer',
      hooks: {
        // The traversal found gate A undecided and is about to park: a decision lands right now.
        // Its wake-up (engine.start) finds the run still owned by this traversal and does nothing.
        beforePark: async (runId) => {
          if (injected++ > 0) return;
          const [requirement] = await h.pending(runId);
          expect(await h.decide(runId, { stepId: requirement!.stepId, resolution: 'confirm' }, engine)).not.toBeNull();
        },
      },
    });
    const run = await h.createRun(wf.id);
    await engine.start(run.id);
    await engine.idle();
    expect(injected).toBe(1);
    const done = (await h.repos.runs.get(run.id))!;
    expect(done.status).toBe('completed');
    expect(h.executors.count('echo')).toBe(2);
    const types = (await h.repos.events.listByRun(run.id)).map((e) => e.type);
    expect(types).not.toContain('run.awaiting_approval');
  });
});

describe('timeout sweeper', () => {
  /** The engine, the harness and the sweeper share a manual clock: gate timeouts expire when the test advances it. */
  let clock: ManualClock;
  beforeEach(async () => {
    await h.close();
    clock = new ManualClock(Date.now());
    h = await openHarness({ clock });
  });
  const sweeperFor = (wake: (id: string) => unknown) => new TimeoutSweeper({ repos: h.repos, wake, logger: pino({ level: 'silent' }), clock });

  it.each([
    ['approve', 'completed', 'completed'],
    ['skip', 'skipped', 'completed'],
    ['cancel', 'cancelled', 'cancelled'],
  ] as const)('onTimeout %s: node %s, run %s', async (onTimeout, nodeStatus, runStatus) => {
    const wf = await h.createWorkflow([confirmed('A', { timeoutSeconds: 30, onTimeout }), step('B')]);
    const parked = await startRun(wf.id);
    const [requirement] = await h.pending(parked.id);
    // The clock starts when the run parks with the gate visible, right after it was raised here.
    expect(requirement!.timeoutAt!.getTime() - requirement!.requestedAt.getTime()).toBe(30_000);
    const sweeper = sweeperFor((id) => h.engine.start(id));
    expect(await sweeper.sweep()).toBe(0);
    await clock.advance(29_999);
    expect(await sweeper.sweep()).toBe(0);
    await clock.advance(1);
    expect(await sweeper.sweep()).toBe(1);
    await h.engine.idle();
    const done = (await h.repos.runs.get(parked.id))!;
    expect(done.status).toBe(runStatus);
    const nodeRuns = await h.repos.nodeRuns.listByRun(parked.id);
    expect(nodeRuns.find((n) => n.nodeName === 'A')!.status).toBe(nodeStatus);
    expect(done.pendingRequirements[0]).toMatchObject({ decidedBy: 'timeout' });
  });

  it('does not time a gate out before anyone could see it (the run still running another branch)', async () => {
    const wf = await h.createWorkflow([
      { name: 'P', nodeType: 'parallel', children: [confirmed('Gate', { timeoutSeconds: 0.05, onTimeout: 'cancel' }), step('Slow', { executorKey: 'wait', config: { ms: 300 } })] },
    ]);
    const run = await h.createRun(wf.id);
    const done = h.engine.start(run.id);
    const sweeper = sweeperFor((id) => h.engine.start(id));
    await clock.untilSleepers(1); // Slow is in flight
    await until(async () => (await h.pending(run.id)).length === 1);
    await clock.advance(150);
    // Raised 150 ms ago, 3x its timeout, but the run is still running: not visible, not timed.
    expect((await h.repos.runs.get(run.id))!.status).toBe('running');
    expect((await h.pending(run.id))[0]).toMatchObject({ stepName: 'Gate', timeoutAt: null });
    expect(await sweeper.sweep()).toBe(0);
    await clock.advance(150); // Slow ends; the run parks and the gate's clock starts now
    await done;
    const parked = (await h.repos.runs.get(run.id))!;
    expect(parked.status).toBe('awaiting_approval');
    expect(parked.pendingRequirements[0]!.timeoutAt).toEqual(new Date(clock.now().getTime() + 50));
  });

  it('a human and the sweeper racing on one gate produce exactly one decision', async () => {
    let expectedCalls = 0;
    for (let round = 0; round < 10; round++) {
      const wf = await h.createWorkflow([confirmed('A', { timeoutSeconds: 0.02, onTimeout: 'skip' })]);
      const parked = await startRun(wf.id);
      const [requirement] = await h.pending(parked.id);
      await clock.advance(20); // expired: the sweeper may decide it, and so may the human
      const sweeper = sweeperFor((id) => h.engine.start(id));
      const [human, swept] = await Promise.all([h.decide(parked.id, { stepId: requirement!.stepId, resolution: 'confirm' }), sweeper.sweep()]);
      expect(Number(human !== null) + swept).toBe(1);
      await h.engine.idle();
      const done = (await h.repos.runs.get(parked.id))!;
      expect(done.status).toBe('completed');
      expect(done.pendingRequirements.filter((r) => r.decidedAt !== null)).toHaveLength(1);
      const decidedBy = done.pendingRequirements[0]!.decidedBy!;
      // The gate records the side that was told it won: the person's decision when theirs
      // returned the run, else the timeout's (onTimeout skip), never the loser's.
      expect({ decidedBy, resolution: done.pendingRequirements[0]!.resolution }).toEqual(
        human !== null ? { decidedBy: 'human', resolution: 'confirm' } : { decidedBy: 'timeout', resolution: 'skip' },
      );
      // A human confirmation runs the step once; the timeout (onTimeout skip) never runs it.
      if (decidedBy === 'human') expectedCalls += 1;
      expect(h.executors.calls.length).toBe(expectedCalls);
      expect((await h.repos.nodeRuns.listByRun(parked.id))[0]!.status).toBe(decidedBy === 'human' ? 'completed' : 'skipped');
    }
  });

  it('human requests: raised without the lease while a step executes, timed at once, expired without waking, closed by the run end', async () => {
    const wf = await h.createWorkflow([step('Agent', { executorKey: 'wait', config: { ms: 300 } }), step('B')]);
    const run = await h.createRun(wf.id);
    const done = h.engine.start(run.id);
    await clock.untilSleepers(1); // Agent is in flight
    const ask = (token: string, timeoutSeconds: number | null) =>
      buildAskRequirement({ node: wf.nodes[0]!, iterationPath: '', token, prompt: 'Sure?', context: null, choices: null, timeoutSeconds, now: clock.now() });
    const expiring = ask('t1', 0.1);
    const open = ask('t2', null);
    const stored = await h.repos.runs.addRequirementToLiveRun(run.id, expiring, clock.now());
    expect(stored).toMatchObject({ status: 'running', leaseOwner: h.engine.owner });
    expect(await h.repos.runs.addRequirementToLiveRun(run.id, expiring, clock.now())).toBeNull(); // same key
    expect(await h.repos.runs.addRequirementToLiveRun(run.id, open, clock.now())).not.toBeNull();
    expect((await h.pending(run.id))[0]!.timeoutAt).toEqual(new Date(clock.now().getTime() + 100));

    const wakes: string[] = [];
    const sweeper = sweeperFor((id) => wakes.push(id));
    await clock.advance(100);
    expect(await sweeper.sweep()).toBe(1);
    expect(wakes).toEqual([]);
    const swept = (await h.repos.runs.get(run.id))!;
    expect(swept).toMatchObject({ status: 'running', wakeSeq: stored!.wakeSeq, wakePending: false });
    expect(swept.pendingRequirements[0]).toMatchObject({ decidedBy: 'timeout', resolution: 'cancel' });

    await clock.advance(200); // Agent ends; the run goes on as if nobody had asked
    await done;
    const ended = (await h.repos.runs.get(run.id))!;
    expect(ended.status).toBe('completed');
    expect(h.executors.calls.map((c) => c.key)).toEqual(['wait', 'echo']);
    expect(ended.pendingRequirements.map((r) => r.decidedBy)).toEqual(['timeout', 'run_ended']);
    expect(await h.repos.runs.addRequirementToLiveRun(run.id, ask('t3', null), clock.now())).toBeNull(); // ended
  });
});

describe('confirmation plus output review with retry', () => {
  it('re-executes in the next round after the rejected output, asking for confirmation again first', async () => {
    const wf = await h.createWorkflow([
      step('A', { config: { round: { $cel: 'additional_data.retryCount' } }, humanReview: { requiresConfirmation: true, requiresOutputReview: true, onReject: 'retry', maxRetries: 2 } }),
    ]);
    const run = await startRun(wf.id);
    const decide = async (resolution: 'confirm' | 'reject') => {
      const [gate] = await h.pending(run.id);
      await h.decide(run.id, { stepId: gate!.stepId, resolution, feedback: resolution === 'reject' ? 'no' : null });
      await h.engine.idle();
      return gate!;
    };
    expect((await decide('confirm')).phase).toBe('pre');
    expect((await decide('reject')).phase).toBe('post');
    const again = await decide('confirm');
    expect(again).toMatchObject({ phase: 'pre', round: 1 });
    const review = await decide('confirm');
    expect(review).toMatchObject({ phase: 'post', round: 1, stepOutput: { arguments: { round: 1 } } });
    const done = (await h.repos.runs.get(run.id))!;
    expect(done.status).toBe('completed');
    expect(h.executors.calls.map((c) => c.arguments)).toEqual([{ round: 0 }, { round: 1 }]);
  });
});
