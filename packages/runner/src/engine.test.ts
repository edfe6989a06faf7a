import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowNodeInput } from '@switchyard/domain';
import { Interpreter } from './interpreter.ts';
import { RunLedger } from './ledger.ts';
import type { ExecutionControl } from './stop-reason.ts';
import { systemClock } from './clock.ts';
import { openHarness, type Harness } from './testing/harness.ts';
import { ManualClock } from './testing/manual-clock.ts';

const step = (name: string, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'echo', ...extra });
const fast = { backoffBaseSeconds: 0.001, backoffMaxSeconds: 0.002 };

let h: Harness;
beforeEach(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await h.close();
});

/** Reopens `h` on a manual clock: its engines, their leases and the `wait` executor follow it. */
async function onManualClock(): Promise<ManualClock> {
  await h.close();
  const clock = new ManualClock(Date.now());
  h = await openHarness({ clock });
  return clock;
}

async function nodeRunsByName(runId: string) {
  const nodeRuns = await h.repos.nodeRuns.listByRun(runId);
  return Object.fromEntries(nodeRuns.map((n) => [`${n.nodeName}${n.iterationPath ? `@${n.iterationPath}` : ''}`, n]));
}

describe('sequences and CEL arguments', () => {
  it('passes each step the previous output and evaluates $cel arguments', async () => {
    const wf = await h.createWorkflow([
      step('A', { config: { greeting: { $cel: "'hello ' + input.name" } } }),
      step('B', { config: { fromA: { $cel: 'previous_step_content.arguments.greeting' }, byName: { $cel: "previous_step_outputs['A'].arguments.greeting" } } }),
    ]);
    const run = await h.runToEnd(wf.id, { name: 'Ada' });
    expect(run.status).toBe('completed');
    const runs = await nodeRunsByName(run.id);
    expect(runs.A!.outputSnapshot).toEqual({ arguments: { greeting: 'hello Ada' }, input: { name: 'Ada' } });
    expect(runs.B!.inputSnapshot).toEqual({ fromA: 'hello Ada', byName: 'hello Ada' });
    expect(run.finalOutput).toEqual({ arguments: { fromA: 'hello Ada', byName: 'hello Ada' }, input: runs.A!.outputSnapshot });
    const events = await h.repos.events.listByRun(run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.type).toBe('run.started');
    expect(events.at(-1)!.type).toBe('run.completed');
  });

  it('fails the run when an argument expression cannot be evaluated, without retrying', async () => {
    const wf = await h.createWorkflow([step('A', { config: { x: { $cel: 'input.missing.deeper' } }, stepConfig: { maxRetries: 3, ...fast } })]);
    const run = await h.runToEnd(wf.id, {});
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toMatch(/^Node 'A' failed: config\.x: /);
    expect(h.executors.calls).toHaveLength(0);
    const runs = await nodeRunsByName(run.id);
    expect(runs.A).toMatchObject({ status: 'failed', attempt: 1 });
  });
});

describe('recording node runs', () => {
  it('records a step that answers within the turn in one write, with the same node run and events as a slower one', async () => {
    const writes: string[] = [];
    const nodeRuns = h.repos.nodeRuns;
    for (const method of ['startAttempt', 'recordEndedAttempt', 'end'] as const) {
      const original = nodeRuns[method].bind(nodeRuns) as (...args: unknown[]) => Promise<unknown>;
      (nodeRuns as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        writes.push(method);
        return original(...args);
      };
    }
    const wf = await h.createWorkflow([step('Quick', { config: { a: 1 } }), step('Slow', { executorKey: 'wait', config: { ms: 5 } })]);
    const run = await h.runToEnd(wf.id, { x: 1 });
    expect(run.status).toBe('completed');
    expect(writes).toEqual(['recordEndedAttempt', 'startAttempt', 'end']);
    const runs = await nodeRunsByName(run.id);
    for (const name of ['Quick', 'Slow']) {
      expect(runs[name]).toMatchObject({ status: 'completed', attempt: 1, executorKey: name === 'Quick' ? 'echo' : 'wait', error: null });
      expect(runs[name]!.startedAt!.getTime()).toBeLessThanOrEqual(runs[name]!.finishedAt!.getTime());
    }
    expect(runs.Quick).toMatchObject({ inputSnapshot: { a: 1 }, outputSnapshot: { arguments: { a: 1 }, input: { x: 1 } }, snapshotBytes: { input: 7, output: JSON.stringify({ arguments: { a: 1 }, input: { x: 1 } }).length } });
    const events = await h.repos.events.listByRun(run.id);
    expect(events.map((e) => [e.type, e.payload.nodeName ?? null])).toEqual([
      ['run.started', null],
      ['node.started', 'Quick'],
      ['node.completed', 'Quick'],
      ['node.started', 'Slow'],
      ['node.completed', 'Slow'],
      ['run.completed', null],
    ]);
  });
});

describe('parallel', () => {
  it('runs children concurrently and outputs them by name', async () => {
    const clock = await onManualClock();
    const wf = await h.createWorkflow([
      {
        name: 'P',
        nodeType: 'parallel',
        children: [step('S1', { executorKey: 'wait', config: { ms: 300 } }), step('S2', { executorKey: 'wait', config: { ms: 300 } }), step('S3', { executorKey: 'wait', config: { ms: 300 } })],
      },
    ]);
    const created = await h.createRun(wf.id, { k: 1 });
    h.engine.start(created.id);
    await clock.untilSleepers(3); // all three calls in flight at once
    await clock.advance(300); // so one stretch of 300 ms ends them all
    expect(clock.sleepers).toBe(0);
    await h.engine.idle();
    const run = (await h.repos.runs.get(created.id))!;
    expect(run.status).toBe('completed');
    expect(Object.keys(run.finalOutput as object)).toEqual(['S1', 'S2', 'S3']);
    const runs = await nodeRunsByName(run.id);
    expect(runs.P).toMatchObject({ status: 'completed', nodeType: 'parallel' });
  });

  it('fails the parallel node when one child fails, after its siblings settle', async () => {
    const wf = await h.createWorkflow([{ name: 'P', nodeType: 'parallel', children: [step('ok'), step('bad', { executorKey: 'fail', config: { message: 'boom' } })] }, step('after')]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe("Node 'bad' failed: boom");
    const runs = await nodeRunsByName(run.id);
    expect(runs.ok!.status).toBe('completed');
    expect(runs.P).toMatchObject({ status: 'failed', error: "Node 'bad' failed: boom" });
    expect(runs.after).toBeUndefined();
  });
});

describe('loop', () => {
  it('stops when endConditionCel holds and records each iteration', async () => {
    const wf = await h.createWorkflow([
      { name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 5, endConditionCel: 'loop_state.iteration >= 3' }, children: [step('body', { config: { i: { $cel: 'loop_state.iteration' } } })] },
    ]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('completed');
    const outputs = run.finalOutput as Array<{ arguments: { i: number } }>;
    expect(outputs.map((o) => o.arguments.i)).toEqual([1, 2, 3]);
    const runs = await nodeRunsByName(run.id);
    expect(Object.keys(runs).sort()).toEqual(['L', 'body@1', 'body@2', 'body@3']);
  });

  it('stops at maxIterations without an end condition, nesting iteration paths', async () => {
    const wf = await h.createWorkflow([
      { name: 'outer', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [{ name: 'inner', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [step('x')] }] },
    ]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('completed');
    const runs = await nodeRunsByName(run.id);
    expect(Object.keys(runs).filter((k) => k.startsWith('x@')).sort()).toEqual(['x@1/1', 'x@1/2', 'x@2/1', 'x@2/2']);
  });
});

describe('condition and router', () => {
  const tree = (): WorkflowNodeInput[] => [
    step('A'),
    {
      name: 'B',
      nodeType: 'condition',
      conditionCel: 'input.routeToTrue == true',
      trueSteps: [step('C'), step('E'), step('G')],
      falseSteps: [step('D'), step('F'), step('H')],
    },
  ];

  it.each([
    [true, ['A', 'B', 'C', 'E', 'G']],
    [false, ['A', 'B', 'D', 'F', 'H']],
  ])('routeToTrue=%s runs only that branch, in order', async (routeToTrue, expected) => {
    const wf = await h.createWorkflow(tree());
    const run = await h.runToEnd(wf.id, { routeToTrue });
    expect(run.status).toBe('completed');
    const nodeRuns = await h.repos.nodeRuns.listByRun(run.id);
    expect(nodeRuns.map((n) => n.nodeName).sort()).toEqual([...expected].sort());
    const b = nodeRuns.find((n) => n.nodeName === 'B')!;
    expect(b.inputSnapshot).toMatchObject({ result: routeToTrue, branch: routeToTrue ? 'trueSteps' : 'falseSteps' });
  });

  it('fails a condition whose expression is not a bool', async () => {
    const wf = await h.createWorkflow([{ name: 'B', nodeType: 'condition', conditionCel: 'input.kind', trueSteps: [step('C')] }]);
    const run = await h.runToEnd(wf.id, { kind: 'yes' });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toMatch(/^Node 'B' failed: conditionCel: .*bool/);
  });

  const router = (): WorkflowNodeInput[] => [
    {
      name: 'R',
      nodeType: 'router',
      conditionCel: 'input.strategy',
      choices: [
        { name: 'tech', steps: [step('hn'), step('deep')] },
        { name: 'general', steps: [step('web')] },
      ],
    },
  ];

  it('runs the selected choice steps', async () => {
    const wf = await h.createWorkflow(router());
    const run = await h.runToEnd(wf.id, { strategy: 'tech' });
    expect(run.status).toBe('completed');
    const nodeRuns = await h.repos.nodeRuns.listByRun(run.id);
    expect(nodeRuns.map((n) => n.nodeName).sort()).toEqual(['R', 'deep', 'hn']);
  });

  it('fails the router with a clear error on an unknown choice', async () => {
    const wf = await h.createWorkflow(router());
    const run = await h.runToEnd(wf.id, { strategy: 'sports' });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe("Node 'R' failed: router selected 'sports', which is not one of its choices: tech, general");
  });
});

describe('retries and error policies', () => {
  it('retries until success, as new attempts of the same node run', async () => {
    const wf = await h.createWorkflow([step('flaky', { executorKey: 'fail', config: { times: 2 }, stepConfig: { maxRetries: 2, onError: 'retry', ...fast } })]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('completed');
    const runs = await nodeRunsByName(run.id);
    expect(runs.flaky).toMatchObject({ status: 'completed', attempt: 3, error: null });
    expect(h.executors.calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
    const events = await h.repos.events.listByRun(run.id);
    expect(events.filter((e) => e.type === 'node.retrying')).toHaveLength(2);
  });

  it('fails after maxRetries retries', async () => {
    const wf = await h.createWorkflow([step('flaky', { executorKey: 'fail', config: { times: 5, message: 'still down' }, stepConfig: { maxRetries: 1, ...fast } })]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe("Node 'flaky' failed: still down");
    expect(h.executors.count('fail')).toBe(2);
  });

  it('skips the step with onError skip and goes on with the previous content', async () => {
    const wf = await h.createWorkflow([step('A'), step('bad', { executorKey: 'fail', stepConfig: { maxRetries: 1, onError: 'skip', ...fast } }), step('C')]);
    const run = await h.runToEnd(wf.id, { v: 1 });
    expect(run.status).toBe('completed');
    const runs = await nodeRunsByName(run.id);
    expect(runs.bad).toMatchObject({ status: 'skipped', attempt: 2 });
    expect((runs.C!.outputSnapshot as { input: unknown }).input).toEqual(runs.A!.outputSnapshot);
  });

  it('fails over across the a2aPool in order within one attempt', async () => {
    const wf = await h.createWorkflow([{ name: 'pooled', nodeType: 'step', a2aPool: ['fail', 'echo'] }]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('completed');
    expect(h.executors.calls.map((c) => c.key)).toEqual(['fail', 'echo']);
    const pooled = (await nodeRunsByName(run.id)).pooled!;
    expect(pooled.attempt).toBe(1);
    // The node run records which agent served the attempt, and which failed before it.
    expect(pooled.executorKey).toBe('echo');
    expect(pooled.poolAttempts).toEqual([{ executorKey: 'fail', error: expect.any(String) }]);
  });

  it('records the executor key of a single-executor step, and every pool member when all fail', async () => {
    const wf = await h.createWorkflow([step('single'), { name: 'allDown', nodeType: 'step', a2aPool: ['fail', 'builtin.fail'], stepConfig: { maxRetries: 0, ...fast } }]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('failed');
    const runs = await nodeRunsByName(run.id);
    expect(runs.single).toMatchObject({ status: 'completed', executorKey: 'echo', poolAttempts: null });
    expect(runs.allDown).toMatchObject({ status: 'failed', executorKey: null });
    expect(runs.allDown!.poolAttempts!.map((tried) => tried.executorKey)).toEqual(['fail', 'builtin.fail']);
  });
});

describe('memoized re-traversal', () => {
  it('re-walking a finished run executes nothing and yields the same output', async () => {
    const wf = await h.createWorkflow([
      step('A'),
      { name: 'P', nodeType: 'parallel', children: [step('P1'), step('P2')] },
      { name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [step('body')] },
      { name: 'R', nodeType: 'router', conditionCel: "'x'", choices: [{ name: 'x', steps: [step('X')] }, { name: 'y', steps: [step('Y')] }] },
    ]);
    const run = await h.runToEnd(wf.id, { n: 1 });
    expect(run.status).toBe('completed');
    const calls = h.executors.calls.length;
    const history = await h.repos.nodeRuns.listByRun(run.id);
    const interpreter = new Interpreter({
      ledger: new RunLedger(h.repos, run, systemClock, history, 'replayer'),
      executors: h.executors,
      cel: h.cel,
      clock: systemClock,
      signal: new AbortController().signal,
      parallelLimit: 4,
    });
    expect(await interpreter.run()).toEqual(run.finalOutput);
    expect(h.executors.calls.length).toBe(calls);
  });

  it('continues a run whose owner died, reusing its settled node runs', async () => {
    const clock = await onManualClock();
    const wf = await h.createWorkflow([step('A'), step('B', { executorKey: 'wait', config: { ms: 1_000 } }), step('C')]);
    const crashed = h.newEngine({ owner: 'crashed', leaseMs: 1_000, heartbeatMs: 60_000 });
    const run = await h.createRun(wf.id, {});
    crashed.start(run.id);
    await clock.untilSleepers(1); // B is in flight
    // The owner vanishes without a trace: no heartbeat, no release (as after kill -9).
    (crashed as unknown as { active: Map<string, { control: ExecutionControl }> }).active.get(run.id)!.control.stop({ kind: 'lease_lost', detail: 'process died' });
    await crashed.idle();
    const stuck = (await h.repos.runs.get(run.id))!;
    expect(stuck).toMatchObject({ status: 'running', leaseOwner: 'crashed' });
    const survivor = h.newEngine({ owner: 'survivor' });
    expect(await survivor.recoverOrphans()).toBe(0); // the dead owner's lease still holds

    await clock.advance(1_100); // later than the crashed owner's lease
    expect(await survivor.recoverOrphans()).toBe(1);
    await clock.untilSleepers(1); // B again
    await clock.advance(1_000);
    await survivor.idle();
    const done = (await h.repos.runs.get(run.id))!;
    expect(done.status).toBe('completed');
    expect(h.executors.count('echo')).toBe(2);
    const runs = await nodeRunsByName(run.id);
    expect(runs.A!.attempt).toBe(1);
    expect(runs.B).toMatchObject({ status: 'completed', attempt: 2 });
    const events = await h.repos.events.listByRun(run.id);
    // The survivor's claim names the owner whose expired lease it took over (a lease takeover).
    expect(events.filter((e) => e.type === 'run.started' || e.type === 'run.resumed').map((e) => [e.type, e.payload])).toEqual([
      ['run.started', { owner: 'crashed' }],
      ['run.resumed', { owner: 'survivor', takenOverFrom: 'crashed' }],
    ]);
    // Step attempts name the executor that served them.
    expect(events.find((e) => e.type === 'node.completed')?.payload).toMatchObject({ executorKey: 'echo' });
  });

  it('releases the lease at shutdown so that another instance continues', async () => {
    const clock = await onManualClock();
    const wf = await h.createWorkflow([step('slow', { executorKey: 'wait', config: { ms: 1_000 } }), step('next')]);
    const first = h.newEngine({ owner: 'first' });
    const run = await h.createRun(wf.id, {});
    first.start(run.id);
    await clock.untilSleepers(1); // slow is in flight
    await first.close();
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'running', leaseOwner: null });
    // Released, not left to expire: another instance claims it without any time passing.
    const second = h.newEngine({ owner: 'second' });
    expect(await second.recoverOrphans()).toBe(1);
    await clock.untilSleepers(1);
    await clock.advance(1_000);
    await second.idle();
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'completed' });
    // A released lease is no takeover.
    const resumed = (await h.repos.events.listByRun(run.id)).find((e) => e.type === 'run.resumed');
    expect(resumed?.payload).toEqual({ owner: 'second' });
  });

  it('lets exactly one of two instances claim a run', async () => {
    const wf = await h.createWorkflow([step('A')]);
    const run = await h.createRun(wf.id, {});
    const [a, b] = [h.newEngine({ owner: 'a' }), h.newEngine({ owner: 'b' })];
    a.start(run.id);
    b.start(run.id);
    await Promise.all([a.idle(), b.idle()]);
    expect(h.executors.count('echo')).toBe(1);
    expect(await h.repos.runs.get(run.id)).toMatchObject({ status: 'completed' });
  });
});
