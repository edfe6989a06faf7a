/**
 * Run directives at the engine level (issue "Run control" item 1, item 9 timeout, item 11
 * waiting-timer): pause at the node boundary, resume by re-traversal, cancel aborting in-flight
 * work, directives reaching another instance through its heartbeat or a crashed one through
 * recovery, the run timeout, and concurrent directives converging. Time that matters runs on a
 * manual clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, TIMEOUT_ACTOR, runStateOf, type WorkflowNodeInput } from '@switchyard/domain';
import pino from 'pino';
import { systemClock, type Clock } from './clock.ts';
import { requestDirective, type DirectiveDeps, type DirectiveRequest } from './directives.ts';
import type { RunEngine } from './engine.ts';
import type { ExecutionControl } from './stop-reason.ts';
import { TimeoutSweeper } from './sweeper.ts';
import { ManualClock } from './testing/manual-clock.ts';
import { openHarness, type Harness } from './testing/harness.ts';

/** The actor of the directives these tests send. */
const TESTER = { userId: 'tester', username: 'tester', via: 'none' } as const;

const step = (name: string, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'echo', ...extra });
const sleeping = (name: string, ms: number) => step(name, { executorKey: 'sleep', config: { ms } });

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

/** Directive deps on this instance's `engine` (default the harness engine). */
const deps = (engine: Pick<RunEngine, 'signal' | 'start'> = h.engine, clock: Clock = systemClock): DirectiveDeps => ({ repos: h.repos, clock, engine });
/** An instance that executes nothing: a directive sent through it reaches the owner only through the store. */
const elsewhere: Pick<RunEngine, 'signal' | 'start'> = { signal: () => null, start: async () => {} };

const direct = (runId: string, directive: DirectiveRequest['directive'], extra: Partial<DirectiveRequest> = {}, engine?: Pick<RunEngine, 'signal' | 'start'>) =>
  requestDirective(deps(engine), runId, { directive, requestedBy: TESTER, ...extra });

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function nodeRunsByName(runId: string) {
  return Object.fromEntries((await h.repos.nodeRuns.listByRun(runId)).map((n) => [n.nodeName, n]));
}

const started = (runId: string, name: string) => until(async () => (await h.repos.nodeRuns.listByRun(runId)).some((n) => n.nodeName === name), `${name} to start`);

describe('pause and resume', () => {
  it('lets the executing node finish, starts no other, and resumes without executing anything twice', async () => {
    const wf = await h.createWorkflow([step('A'), sleeping('B', 150), step('C'), step('D')]);
    const run = await h.createRun(wf.id);
    h.engine.start(run.id);
    await started(run.id, 'B');

    const requested = await direct(run.id, 'pause');
    expect(requested).toMatchObject({ changed: true, run: { status: 'running', pendingDirective: 'pause' } });
    await h.engine.idle();
    const paused = (await h.repos.runs.get(run.id))!;
    expect(paused).toMatchObject({ status: 'paused', pendingDirective: null, leaseOwner: null });
    expect(paused.pausedAt).toBeInstanceOf(Date);
    expect(Object.keys(await nodeRunsByName(run.id)).sort()).toEqual(['A', 'B']);
    expect((await nodeRunsByName(run.id)).B).toMatchObject({ status: 'completed', attempt: 1 });
    expect(runStateOf(paused, Date.now()).state).toBe('paused');

    // Pausing again is a no-op; the paused run is not claimable by recovery.
    expect(await direct(run.id, 'pause')).toMatchObject({ changed: false, message: 'Run is already paused' });
    expect(await h.newEngine().recoverOrphans()).toBe(0);

    expect(await direct(run.id, 'resume')).toMatchObject({ changed: true, run: { status: 'pending', pausedAt: null } });
    await h.engine.idle();
    const done = (await h.repos.runs.get(run.id))!;
    expect(done.status).toBe('completed');
    const nodeRuns = await nodeRunsByName(run.id);
    expect(Object.values(nodeRuns).map((n) => [n.nodeName, n.attempt])).toEqual([['A', 1], ['B', 1], ['C', 1], ['D', 1]]);
    expect(h.executors.count('echo')).toBe(3);
    expect(h.executors.count('sleep')).toBe(1);
    const types = (await h.repos.events.listByRun(run.id)).map((e) => e.type);
    expect(types).toContain('run.paused');
    expect(types.filter((t) => t === 'directive.received')).toHaveLength(2);
    expect(types.indexOf('run.resumed')).toBeGreaterThan(types.indexOf('run.paused'));
  });

  it('reaches an owner on another instance with its next heartbeat', async () => {
    const clock = new ManualClock(Date.now());
    const owner = h.newEngine({ owner: 'other', clock, leaseMs: 30_000, heartbeatMs: 1_000 });
    const wf = await h.createWorkflow([sleeping('A', 100), step('B')]);
    const run = await h.createRun(wf.id);
    owner.start(run.id);
    await started(run.id, 'A');
    await direct(run.id, 'pause', {}, elsewhere);
    await clock.advance(1_000); // the heartbeat renews the lease and finds the directive
    await owner.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('paused');
    expect(Object.keys(await nodeRunsByName(run.id))).toEqual(['A']);
  });

  it('withdraws a pause that was not honoured yet when resumed at once', async () => {
    const wf = await h.createWorkflow([sleeping('A', 100), step('B')]);
    const run = await h.createRun(wf.id);
    h.engine.start(run.id);
    await started(run.id, 'A');
    await h.repos.runs.setDirective(run.id, null, 'pause', new Date()); // stored, not yet signalled
    expect(await direct(run.id, 'resume')).toMatchObject({ changed: true, run: { status: 'running', pendingDirective: null } });
    await h.engine.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('completed');
  });

  it('pauses a parked run at once, keeps decisions taken meanwhile, and goes back to its gates on resume', async () => {
    const wf = await h.createWorkflow([step('A', { humanReview: { requiresConfirmation: true } }), step('B', { humanReview: { requiresConfirmation: true } })]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('awaiting_approval');
    expect(await direct(run.id, 'pause')).toMatchObject({ changed: true, run: { status: 'paused' } });
    const [gateA] = await h.pending(run.id);
    expect(await h.decide(run.id, { stepId: gateA!.stepId, resolution: 'confirm' })).not.toBeNull();
    await h.engine.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('paused');
    expect(h.executors.count('echo')).toBe(0);

    await direct(run.id, 'resume');
    await h.engine.idle();
    const after = (await h.repos.runs.get(run.id))!;
    expect(after.status).toBe('awaiting_approval');
    expect(after.pendingRequirements.filter((r) => r.decidedAt === null).map((r) => r.nodeId)).toEqual([wf.nodes[1]!.id]);
    expect(h.executors.count('echo')).toBe(1);
  });
});

describe('a pause that arrives just as the run parks at its gates', () => {
  it('is honoured instead of parking, and resume brings the run back to its gate', async () => {
    let pauses = 0;
    const engine = h.newEngine({
      hooks: {
        // The first time the run is about to park, a pause comes in.
        beforePark: async (runId) => {
          if (pauses++ === 0) await h.repos.runs.setDirective(runId, null, 'pause', new Date());
        },
      },
    });
    const wf = await h.createWorkflow([step('A', { humanReview: { requiresConfirmation: true } })]);
    const run = await h.createRun(wf.id);
    engine.start(run.id);
    await engine.idle();
    expect((await h.repos.runs.get(run.id))!).toMatchObject({ status: 'paused', pendingDirective: null });
    await requestDirective(deps(engine), run.id, { directive: 'resume', requestedBy: TESTER });
    await engine.idle();
    expect((await h.repos.runs.get(run.id))!).toMatchObject({ status: 'awaiting_approval', pendingDirective: null });
  });
});

describe('cancel', () => {
  it('aborts an in-flight call at once and records who cancelled and why', async () => {
    const wf = await h.createWorkflow([step('A'), sleeping('B', 60_000), step('C')]);
    const run = await h.createRun(wf.id);
    h.engine.start(run.id);
    await started(run.id, 'B');
    const result = await direct(run.id, 'cancel', { reason: 'wrong input' });
    // The answer waited for the execution in this instance to end.
    expect(result).toMatchObject({ changed: true, message: 'Run cancelled', run: { status: 'cancelled', cancelReason: 'wrong input', cancelledBy: TESTER } });
    expect(result!.run.errorSummary).toBe('Cancelled by tester: wrong input');
    const nodeRuns = await nodeRunsByName(run.id);
    expect(nodeRuns.B).toMatchObject({ status: 'cancelled' });
    expect(nodeRuns.C).toBeUndefined();
    expect(await direct(run.id, 'cancel')).toMatchObject({ changed: false });
    await expect(direct(run.id, 'resume')).rejects.toThrow(ConflictError);
  });

  it('ends a retry backoff wait at once; meanwhile the run shows waiting-timer', async () => {
    const clock = new ManualClock(Date.now());
    const engine = h.newEngine({ clock });
    const wf = await h.createWorkflow([step('A', { executorKey: 'fail', stepConfig: { maxRetries: 3, backoffBaseSeconds: 60, backoffMaxSeconds: 60, onError: 'fail' } })]);
    const run = await h.createRun(wf.id);
    engine.start(run.id);
    await until(async () => clock.sleepers === 1 && ((await h.repos.runs.get(run.id))!.retryWaits ?? []).length === 1, 'the backoff wait');
    const waiting = (await h.repos.runs.get(run.id))!;
    const state = runStateOf(waiting, clock.now().getTime());
    expect(state).toMatchObject({ state: 'waiting-timer', blocked: { kind: 'timer', nodeId: wf.nodes[0]!.id } });
    const retrying = (await h.repos.events.listByRun(run.id)).find((e) => e.type === 'node.retrying')!;
    expect(Date.parse((state.blocked as { wakeAt: string }).wakeAt)).toBe(clock.now().getTime() + (retrying.payload['delayMs'] as number));

    await requestDirective(deps(engine, clock), run.id, { directive: 'cancel', requestedBy: TESTER });
    await engine.idle();
    const cancelled = (await h.repos.runs.get(run.id))!;
    expect(cancelled).toMatchObject({ status: 'cancelled', retryWaits: [] });
    expect(h.executors.count('fail')).toBe(1);
  });

  it('closes the gates of a parked run', async () => {
    const wf = await h.createWorkflow([step('A', { humanReview: { requiresConfirmation: true } })]);
    const run = await h.runToEnd(wf.id);
    const result = await direct(run.id, 'cancel');
    expect(result!.run.status).toBe('cancelled');
    expect(result!.run.pendingRequirements[0]).toMatchObject({ decidedBy: 'run_ended', resolution: 'cancel' });
    expect((await nodeRunsByName(run.id)).A!.status).toBe('cancelled');
    const types = (await h.repos.events.listByRun(run.id)).map((e) => e.type);
    expect(types.slice(-2)).toEqual(['directive.received', 'run.cancelled']);
  });
});

describe('directives stored while no runner could act on them', () => {
  /** Starts `runId` on an instance that then dies (no release, no heartbeat), leaving its lease to expire. */
  async function crashDuring(runId: string, nodeName: string): Promise<void> {
    const crashed = h.newEngine({ owner: 'crashed', leaseMs: 1_000, heartbeatMs: 60_000 });
    crashed.start(runId);
    await started(runId, nodeName);
    (crashed as unknown as { active: Map<string, { control: ExecutionControl }> }).active.get(runId)!.control.stop({ kind: 'lease_lost', detail: 'process died' });
    await crashed.idle();
  }
  const later: Clock = { ...systemClock, now: () => new Date(Date.now() + 5_000) };

  it('a cancel requested just before the owner crashed is honoured on recovery', async () => {
    const wf = await h.createWorkflow([sleeping('A', 60_000), step('B')]);
    const run = await h.createRun(wf.id);
    await crashDuring(run.id, 'A');
    expect(await direct(run.id, 'cancel', { reason: 'stop it' }, elsewhere)).toMatchObject({ run: { status: 'running', pendingDirective: 'cancel' } });
    const survivor = h.newEngine({ owner: 'survivor', clock: later });
    expect(await survivor.recoverOrphans()).toBe(1);
    await survivor.idle();
    expect((await h.repos.runs.get(run.id))!).toMatchObject({ status: 'cancelled', errorSummary: 'Cancelled by tester: stop it' });
    expect((await nodeRunsByName(run.id)).A!.status).toBe('cancelled');
    expect(h.executors.count('echo')).toBe(0);
  });

  it('a pause requested just before the owner crashed is honoured on recovery', async () => {
    const wf = await h.createWorkflow([sleeping('A', 60_000), step('B')]);
    const run = await h.createRun(wf.id);
    await crashDuring(run.id, 'A');
    await direct(run.id, 'pause', {}, elsewhere);
    const survivor = h.newEngine({ owner: 'survivor', clock: later });
    await survivor.recoverOrphans();
    await survivor.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('paused');
    expect(h.executors.count('sleep')).toBe(1);
  });
});

describe('run timeout', () => {
  const logger = pino({ level: 'silent' });

  it('stops a running run past its deadline and fails it, saying it timed out', async () => {
    const wf = await h.createWorkflow([sleeping('A', 60_000)]);
    const run = await h.createRun(wf.id, {}, undefined, { timeoutSeconds: 30 });
    expect(run.deadlineAt!.getTime()).toBe(run.startedAt.getTime() + 30_000);
    h.engine.start(run.id);
    await started(run.id, 'A');
    const clock = new ManualClock(run.startedAt.getTime() + 29_000);
    const sweeper = new TimeoutSweeper({ repos: h.repos, wake: () => {}, engine: h.engine, logger, clock });
    expect(await sweeper.stopOverdueRuns(clock.now())).toBe(0);
    await clock.advance(1_000);
    expect(await sweeper.stopOverdueRuns(clock.now())).toBe(1);
    await h.engine.idle();
    const ended = (await h.repos.runs.get(run.id))!;
    expect(ended).toMatchObject({ status: 'failed', cancelledBy: TIMEOUT_ACTOR });
    expect(ended.errorSummary).toMatch(/^Run timed out: it did not end within its timeoutSeconds \(30 s\)/);
    expect((await nodeRunsByName(run.id)).A!.status).toBe('cancelled');
    expect((await h.repos.events.listByRun(run.id)).map((e) => e.type)).toContain('run.timed_out');
    expect(await sweeper.stopOverdueRuns(clock.now())).toBe(0);
  });

  it('fails a parked run past its deadline directly', async () => {
    const wf = await h.createWorkflow([step('A', { humanReview: { requiresConfirmation: true } })]);
    const created = await h.createRun(wf.id, {}, undefined, { timeoutSeconds: 5 });
    h.engine.start(created.id);
    await h.engine.idle();
    const sweeper = new TimeoutSweeper({ repos: h.repos, wake: () => {}, logger, clock: new ManualClock(created.startedAt.getTime() + 6_000) });
    await sweeper.sweep();
    expect((await h.repos.runs.get(created.id))!).toMatchObject({ status: 'failed', pendingRequirements: [{ decidedBy: 'run_ended' }] });
  });
});

describe('concurrent directives', () => {
  it('converge on one consistent state: one cancel wins, the rest are no-ops or conflicts', async () => {
    const wf = await h.createWorkflow([sleeping('A', 60_000), step('B')]);
    const run = await h.createRun(wf.id);
    h.engine.start(run.id);
    await started(run.id, 'A');
    const kinds: DirectiveRequest['directive'][] = ['pause', 'cancel', 'resume', 'pause', 'cancel', 'resume', 'cancel', 'pause'];
    const outcomes = await Promise.allSettled(Array.from({ length: 24 }, (_, i) => direct(run.id, kinds[i % kinds.length]!)));
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(ConflictError);
    await h.engine.idle();
    const ended = (await h.repos.runs.get(run.id))!;
    expect(ended).toMatchObject({ status: 'cancelled', pendingDirective: null, leaseOwner: null });
    const types = (await h.repos.events.listByRun(run.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'run.cancelled')).toHaveLength(1);
    expect(types.at(-1)).toBe('run.cancelled');
    expect((await h.repos.nodeRuns.listByRun(run.id)).every((n) => n.status === 'cancelled')).toBe(true);
  });
});
