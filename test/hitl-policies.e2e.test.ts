/**
 * HITL policies over real HTTP (README "Human gates (HITL)"): what a rejection does (`onReject`
 * skip / cancel / retry / else_branch), what a timeout does (`onTimeout` approve / skip / cancel,
 * decided by the background sweeper), iteration reviews on loops, and two gates pending at once
 * in parallel branches.
 */
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startService({ sweepIntervalMs: 20 });
});

afterAll(async () => {
  await svc?.close();
});

function body(nodes: unknown[]): Record<string, unknown> {
  return { name: uniqueName('hitl-policy'), canvas: CANVAS, nodes };
}

function byName(run: any): Record<string, any> {
  return Object.fromEntries(run.nodeRuns.map((n: any) => [n.nodeName, n]));
}

const first = () => echoStep('First', { a: 1 });
const last = () => echoStep('Last', { prev: { $cel: 'previous_step_content' } });

async function parkAt(nodes: unknown[], initialInput: Record<string, unknown> = {}) {
  const { workflowId, runId } = await svc.startRun(body(nodes), initialInput);
  const run = await svc.waitForGate(workflowId, runId);
  return { workflowId, runId, run, gate: run.pendingRequirements[0], stepId: run.pendingRequirements[0].stepId as string };
}

async function decide(workflowId: string, runId: string, decision: Record<string, unknown>): Promise<void> {
  const response = await svc.approve(workflowId, runId, decision);
  expect(response.status, response.text).toBe(200);
}

/** The `requirement.decided` payloads of a run, each checked to name its node, without that `nodeId`. */
async function decidedEvents(runId: string): Promise<any[]> {
  return (await svc.events(runId))
    .filter((e) => e.type === 'requirement.decided')
    .map(({ payload: { nodeId, ...rest } }) => {
      expect(typeof nodeId).toBe('string');
      return rest;
    });
}

// ---- 3. onReject --------------------------------------------------------------------------

describe('onReject', () => {
  it('skip: the node is skipped, the run completes and the next step gets the earlier content', async () => {
    const gated = echoStep('Gated', { g: 1 }, { humanReview: { requiresConfirmation: true, onReject: 'skip' } });
    const { workflowId, runId, stepId } = await parkAt([first(), gated, last()]);
    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'not today' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    const nodes = byName(run);
    expect(nodes['Gated']).toMatchObject({ status: 'skipped', outputSnapshot: null, error: "step 'Gated' was rejected: not today" });
    expect(nodes['Last'].outputSnapshot.arguments.prev).toEqual(nodes['First'].outputSnapshot);
    expect(run.finalOutput.arguments.prev.arguments).toEqual({ a: 1 });
    expect(await decidedEvents(runId)).toEqual([{ stepId, resolution: 'reject', decidedBy: 'human' }]);
  });

  it('skip on an output review drops the executed output: the next step gets the earlier content', async () => {
    const reviewed = echoStep('Reviewed', { r: 1 }, { humanReview: { requiresOutputReview: true, onReject: 'skip' } });
    const { workflowId, runId, stepId } = await parkAt([first(), reviewed, last()]);
    await decide(workflowId, runId, { stepId, resolution: 'reject' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    expect(byName(run)['Reviewed'].status).toBe('skipped');
    expect(run.finalOutput.arguments.prev.arguments).toEqual({ a: 1 });
  });

  it('cancel: the run ends cancelled and errorSummary names the rejection', async () => {
    const gated = echoStep('Gated', { g: 1 }, { humanReview: { requiresConfirmation: true, onReject: 'cancel' } });
    const { workflowId, runId, stepId } = await parkAt([first(), gated, last()]);
    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'wrong customer' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('cancelled');
    expect(run.errorSummary).toBe("Run cancelled: step 'Gated' was rejected: wrong customer");
    expect(run.runState.state).toBe('cancelled');
    expect(byName(run)['Gated']).toMatchObject({ status: 'cancelled', error: "step 'Gated' was rejected: wrong customer" });
    expect(byName(run)['Last']).toBeUndefined();
    const types = (await svc.events(runId)).map((e) => e.type);
    expect(types.filter((t) => t === 'run.cancelled')).toHaveLength(1);
  });

  it('retry on an output review: the step executes again with the feedback visible to $cel, then completes on confirm', async () => {
    const reviewed = echoStep(
      'Write Summary',
      { fb: { $cel: 'additional_data.rejectionFeedback' }, round: { $cel: 'additional_data.retryCount' } },
      { humanReview: { requiresOutputReview: true, onReject: 'retry', maxRetries: 2 } },
    );
    const { workflowId, runId, run, gate, stepId } = await parkAt([first(), reviewed, last()]);
    expect(gate).toMatchObject({ retryCount: 0, maxRetries: 2, onReject: 'retry', stepOutput: { arguments: { fb: null, round: 0 } } });
    expect(byName(run)['Write Summary']).toMatchObject({ status: 'awaiting_approval', attempt: 1 });

    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'too long, shorten it' });
    const again = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.retryCount === 1 });
    expect(again.pendingRequirements).toHaveLength(1);
    // Each round is a gate of its own, with its own stepId: a late decision meant for round 0 gets 409.
    expect(again.pendingRequirements[0]).toMatchObject({ stepId: `${stepId}:retry-1`, retryCount: 1, confirmed: null, stepOutput: { arguments: { fb: 'too long, shorten it', round: 1 } } });
    expect(byName(again)['Write Summary']).toMatchObject({ status: 'awaiting_approval', attempt: 2, outputSnapshot: { arguments: { fb: 'too long, shorten it', round: 1 } } });
    expect((await svc.approve(workflowId, runId, { stepId, resolution: 'confirm' })).status).toBe(409);

    await decide(workflowId, runId, { stepId: `${stepId}:retry-1`, resolution: 'confirm' });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.status, done.errorSummary).toBe('completed');
    expect(byName(done)['Write Summary']).toMatchObject({ status: 'completed', attempt: 2 });
    expect(done.finalOutput.arguments.prev.arguments).toEqual({ fb: 'too long, shorten it', round: 1 });
    const started = (await svc.events(runId)).filter((e) => e.type === 'node.started' && e.payload.nodeName === 'Write Summary');
    expect(started.map((e) => e.payload.attempt)).toEqual([1, 2]);
  });

  it('retry: after maxRetries re-runs are rejected too, the node fails and the run fails', async () => {
    const reviewed = echoStep('Write Summary', { fb: { $cel: 'additional_data.rejectionFeedback' } }, { humanReview: { requiresOutputReview: true, onReject: 'retry', maxRetries: 1 } });
    const { workflowId, runId, stepId } = await parkAt([reviewed, last()]);
    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'first no' });
    await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.retryCount === 1 });
    await decide(workflowId, runId, { stepId: `${stepId}:retry-1`, resolution: 'reject', feedback: 'second no' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe("Node 'Write Summary' failed: step 'Write Summary' was rejected: second no; no retries left (maxRetries 1)");
    expect(byName(run)['Write Summary']).toMatchObject({ status: 'failed', attempt: 2 });
    expect(byName(run)['Last']).toBeUndefined();
  });

  it('retry with maxRetries 0: the first rejection fails the node', async () => {
    const reviewed = echoStep('Once', {}, { humanReview: { requiresOutputReview: true, onReject: 'retry', maxRetries: 0 } });
    const { workflowId, runId, stepId } = await parkAt([reviewed]);
    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'no' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('failed');
    expect(byName(run)['Once']).toMatchObject({ status: 'failed', attempt: 1 });
  });

  it('retry on a confirmation gate asks again; the step runs once, after the confirm, and sees the feedback', async () => {
    const gated = echoStep('Gated', { fb: { $cel: 'additional_data.rejectionFeedback' } }, { humanReview: { requiresConfirmation: true, onReject: 'retry' } });
    const { workflowId, runId, stepId } = await parkAt([gated]);
    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'ask me later' });
    const again = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.retryCount === 1 });
    expect(byName(again)['Gated']).toMatchObject({ status: 'awaiting_approval', outputSnapshot: null });
    await decide(workflowId, runId, { stepId: again.pendingRequirements[0].stepId, resolution: 'confirm' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    expect(byName(run)['Gated']).toMatchObject({ status: 'completed', attempt: 1 });
    expect(run.finalOutput.arguments).toEqual({ fb: 'ask me later' });
  });

  it('else_branch on a condition: the other branch runs', async () => {
    const condition = {
      name: 'Is VIP',
      nodeType: 'condition',
      conditionCel: 'input.vip',
      trueSteps: [echoStep('VIP Path', { path: 'vip' })],
      falseSteps: [echoStep('Standard Path', { path: 'standard' })],
      humanReview: { requiresConfirmation: true, onReject: 'else_branch' },
    };
    const { workflowId, runId, gate, stepId } = await parkAt([condition, last()], { vip: true });
    expect(gate).toMatchObject({ stepType: 'condition', onReject: 'else_branch', stepOutput: { result: true, branch: 'trueSteps' } });
    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'treat as standard' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    const nodes = byName(run);
    expect(nodes['VIP Path']).toBeUndefined();
    expect(nodes['Standard Path'].status).toBe('completed');
    expect(nodes['Is VIP']).toMatchObject({ status: 'completed', inputSnapshot: { conditionCel: 'input.vip', result: true, branch: 'falseSteps' } });
    expect(run.finalOutput.arguments.prev.arguments).toEqual({ path: 'standard' });
  });

  it('else_branch on a condition that evaluated false: rejecting runs the true branch', async () => {
    const condition = {
      name: 'Is VIP',
      nodeType: 'condition',
      conditionCel: 'input.vip',
      trueSteps: [echoStep('VIP Path', { path: 'vip' })],
      falseSteps: [echoStep('Standard Path', { path: 'standard' })],
      humanReview: { requiresConfirmation: true, onReject: 'else_branch' },
    };
    const { workflowId, runId, stepId } = await parkAt([condition], { vip: false });
    await decide(workflowId, runId, { stepId, resolution: 'reject' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.nodeRuns.map((n: any) => n.nodeName).sort()).toEqual(['Is VIP', 'VIP Path']);
  });

  it('else_branch is refused on anything but a condition (400 at create)', async () => {
    const response = await svc.api.post(wf(), body([echoStep('S', {}, { humanReview: { requiresConfirmation: true, onReject: 'else_branch' } })]));
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain('else_branch is only valid on condition nodes');
  });
});

// ---- 4. onTimeout -------------------------------------------------------------------------

describe('onTimeout (timeoutSeconds 0.2, decided by the sweeper)', () => {
  const timed = (name: string, review: Record<string, unknown>, config: Record<string, unknown> = { t: name }) =>
    echoStep(name, config, { humanReview: { requiresConfirmation: true, timeoutSeconds: 0.2, ...review } });

  it('shows timeoutAt on the requirement (timeoutSeconds after the run parked on it)', async () => {
    const { workflowId, runId, run, gate, stepId } = await parkAt([echoStep('Slow', {}, { humanReview: { requiresConfirmation: true, timeoutSeconds: 90, onTimeout: 'skip' } })]);
    expect(gate.timeoutAt).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
    expect(gate.onTimeout).toBe('skip');
    const clock = Date.parse(gate.timeoutAt) - Date.parse(run.runState.blocked.requestedAt);
    expect(clock).toBeGreaterThanOrEqual(90_000);
    expect(clock).toBeLessThan(91_000);
    await decide(workflowId, runId, { stepId, resolution: 'confirm' });
    expect((await svc.waitForRun(workflowId, runId)).status).toBe('completed');
  });

  it('approve: the run completes without any decision call; the timeout is recorded as the decider', async () => {
    const { workflowId, runId } = await svc.startRun(body([first(), timed('Timed', { onTimeout: 'approve' }), last()]));
    const run = await svc.waitForRun(workflowId, runId, { timeoutMs: 5_000 });
    const stepId = run.definitionSnapshot.nodes[1].id;
    expect(run.status, run.errorSummary).toBe('completed');
    expect(byName(run)['Timed']).toMatchObject({ status: 'completed', attempt: 1 });
    expect(run.finalOutput.arguments.prev.arguments).toEqual({ t: 'Timed' });
    expect(await decidedEvents(runId)).toEqual([{ stepId, resolution: 'confirm', decidedBy: 'timeout' }]);
    const stored = (await svc.repos.runs.get(runId))!.pendingRequirements[0]!;
    expect(stored).toMatchObject({ decidedBy: 'timeout', resolution: 'confirm', confirmed: true });
    expect(stored.timeoutAt!.getTime() - stored.requestedAt.getTime()).toBeGreaterThanOrEqual(200);
    expect(stored.timeoutAt!.getTime() - stored.requestedAt.getTime()).toBeLessThan(1_200);
    expect(stored.decidedAt!.getTime()).toBeGreaterThanOrEqual(stored.timeoutAt!.getTime());
  });

  it('approve on a form: the step gets the form defaults as user_input', async () => {
    const form = echoStep('Form', { ui: { $cel: 'user_input' } }, {
      humanReview: {
        requiresUserInput: true,
        userInputSchema: [
          { name: 'plan', fieldType: 'string', required: true, defaultValue: 'pro' },
          { name: 'notify', fieldType: 'boolean', required: false, defaultValue: false },
          { name: 'note', fieldType: 'string', required: false },
        ],
        timeoutSeconds: 0.2,
        onTimeout: 'approve',
      },
    });
    const { workflowId, runId } = await svc.startRun(body([form]));
    const run = await svc.waitForRun(workflowId, runId, { timeoutMs: 5_000 });
    expect(run.status, run.errorSummary).toBe('completed');
    expect(run.finalOutput.arguments.ui).toEqual({ plan: 'pro', notify: false });
  });

  it('approve on an output review keeps the output', async () => {
    const reviewed = echoStep('Reviewed', { r: 1 }, { humanReview: { requiresOutputReview: true, timeoutSeconds: 0.2, onTimeout: 'approve' } });
    const { workflowId, runId } = await svc.startRun(body([reviewed, last()]));
    const run = await svc.waitForRun(workflowId, runId, { timeoutMs: 5_000 });
    expect(run.status, run.errorSummary).toBe('completed');
    expect(byName(run)['Reviewed']).toMatchObject({ status: 'completed', outputSnapshot: { arguments: { r: 1 } } });
    expect(run.finalOutput.arguments.prev.arguments).toEqual({ r: 1 });
  });

  it('approve on a route selection follows the conditionCel suggestion', async () => {
    const router = {
      name: 'Route',
      nodeType: 'router',
      conditionCel: '"b"',
      choices: [{ name: 'a', steps: [echoStep('A')] }, { name: 'b', steps: [echoStep('B')] }],
      humanReview: { requiresUserInput: true, timeoutSeconds: 0.2, onTimeout: 'approve' },
    };
    const { workflowId, runId } = await svc.startRun(body([router]));
    const run = await svc.waitForRun(workflowId, runId, { timeoutMs: 5_000 });
    expect(run.status, run.errorSummary).toBe('completed');
    expect(run.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Route', 'B']);
  });

  it('skip: the node is skipped as timed out, the run completes with the earlier content', async () => {
    const { workflowId, runId } = await svc.startRun(body([first(), timed('Timed', { onTimeout: 'skip' }), last()]));
    const run = await svc.waitForRun(workflowId, runId, { timeoutMs: 5_000 });
    expect(run.status, run.errorSummary).toBe('completed');
    expect(byName(run)['Timed']).toMatchObject({ status: 'skipped', error: "step 'Timed' timed out" });
    expect(run.finalOutput.arguments.prev.arguments).toEqual({ a: 1 });
    expect((await decidedEvents(runId)).map((p) => [p.resolution, p.decidedBy])).toEqual([['skip', 'timeout']]);
  });

  it('cancel (the default): the run ends cancelled, naming the timeout', async () => {
    const { workflowId, runId } = await svc.startRun(body([first(), timed('Timed', {}), last()]));
    const run = await svc.waitForRun(workflowId, runId, { timeoutMs: 5_000 });
    expect(run.status).toBe('cancelled');
    expect(run.errorSummary).toBe("Run cancelled: step 'Timed' timed out");
    expect(byName(run)['Timed'].status).toBe('cancelled');
    expect(byName(run)['Last']).toBeUndefined();
  });

  it('a human decision after the timeout won is a 409 naming the timeout; nothing changes', async () => {
    const nodes = [timed('Timed', { onTimeout: 'approve' }), echoStep('Manual', {}, { humanReview: { requiresConfirmation: true } })];
    const { workflowId, runId } = await svc.startRun(body(nodes));
    const run = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepName === 'Manual', timeoutMs: 5_000 });
    const timedId = run.definitionSnapshot.nodes[0].id;
    for (const resolution of ['confirm', 'reject']) {
      const late = await svc.approve(workflowId, runId, { stepId: timedId, resolution });
      expect(late.status).toBe(409);
      expect(late.body.detail.message).toBe(`Requirement for step '${timedId}' is already decided (confirm, by timeout)`);
    }
    expect(await decidedEvents(runId)).toEqual([{ stepId: timedId, resolution: 'confirm', decidedBy: 'timeout' }]);
    expect(byName(run)['Timed']).toMatchObject({ status: 'completed', attempt: 1 });
  });

  it('a human decision before the timeout wins, and the timeout then does nothing', async () => {
    // The engine, the sweeper and the routes share a manual clock: the timeout passes when the test says so.
    const clock = new ManualClock(Date.now());
    const own = await startService({ clock, sweepIntervalMs: 20 });
    try {
      const gate = echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, timeoutSeconds: 0.3, onTimeout: 'cancel' } });
      const { workflowId, runId } = await own.startRun(body([gate, last()]));
      const parked = await own.waitForGate(workflowId, runId);
      const { stepId, timeoutAt } = parked.pendingRequirements[0];
      expect(Date.parse(timeoutAt)).toBe(clock.now().getTime() + 300);
      expect((await own.approve(workflowId, runId, { stepId, resolution: 'confirm' })).status).toBe(200);
      expect((await own.waitForRun(workflowId, runId)).status).toBe('completed');
      await clock.advance(400); // past the timeout: the sweeper's timer fires 20 times meanwhile
      expect(await own.sweeper.sweep()).toBe(0);
      const decided = (await own.events(runId)).filter((e) => e.type === 'requirement.decided').map((e) => e.payload);
      expect(decided).toEqual([{ stepId, nodeId: expect.any(String), resolution: 'confirm', decidedBy: 'human' }]);
      expect((await own.api.get(wf(`/${workflowId}/runs/${runId}`))).body.status).toBe('completed');
    } finally {
      await own.close();
    }
  });
});

// ---- 5. iteration review --------------------------------------------------------------------

describe('iteration review on a loop', () => {
  const loop = (review: Record<string, unknown>, maxIterations = 3) => ({
    name: 'Refine',
    nodeType: 'loop',
    loopConfig: { maxIterations },
    children: [echoStep('Body', { i: { $cel: 'loop_state.iteration' } })],
    humanReview: { requiresIterationReview: true, iterationReviewMessage: 'Keep this iteration?', ...review },
  });
  const iterations = (output: any[]) => output.map((o) => o.arguments.i);

  it('gates after every iteration with that iteration in stepOutput; confirming each continues to the end', async () => {
    const { workflowId, runId } = await svc.startRun(body([loop({}), last()]));
    const stepIds: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const run = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepOutput?.arguments?.i === i });
      const gate = run.pendingRequirements[0];
      expect(run.pendingRequirements).toHaveLength(1);
      expect(gate).toMatchObject({ stepName: 'Refine', stepType: 'loop', requiresConfirmation: true, isPostExecution: true, outputReviewMessage: 'Keep this iteration?' });
      expect(gate.stepOutput).toEqual(byName(run)['Body'].outputSnapshot); // the iteration's output
      expect(run.nodeRuns.filter((n: any) => n.nodeName === 'Body').map((n: any) => n.iterationPath)).toEqual(['1', '2', '3'].slice(0, i));
      stepIds.push(gate.stepId);
      await decide(workflowId, runId, { stepId: gate.stepId, resolution: 'confirm' });
    }
    // One address per iteration's gate, so a late decision can never approve an iteration unseen.
    expect(stepIds.map((id) => id.replace(/^.*:/, ''))).toEqual(['iteration-1', 'iteration-2', 'iteration-3']);
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    expect(iterations(byName(run)['Refine'].outputSnapshot)).toEqual([1, 2, 3]);
    expect(iterations(run.finalOutput.arguments.prev)).toEqual([1, 2, 3]);
    expect((await decidedEvents(runId)).map((p) => p.resolution)).toEqual(['confirm', 'confirm', 'confirm']);
  });

  it('reject with onReject skip ends the loop early without the rejected iteration', async () => {
    const { workflowId, runId } = await svc.startRun(body([loop({ onReject: 'skip' }, 5), last()]));
    const one = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepOutput?.arguments?.i === 1 });
    await decide(workflowId, runId, { stepId: one.pendingRequirements[0].stepId, resolution: 'confirm' });
    const two = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepOutput?.arguments?.i === 2 });
    await decide(workflowId, runId, { stepId: two.pendingRequirements[0].stepId, resolution: 'reject', feedback: 'worse than before' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    expect(iterations(byName(run)['Refine'].outputSnapshot)).toEqual([1]);
    expect(iterations(run.finalOutput.arguments.prev)).toEqual([1]);
    // Iteration 3 never ran.
    expect(run.nodeRuns.filter((n: any) => n.nodeName === 'Body').map((n: any) => n.iterationPath)).toEqual(['1', '2']);
  });

  it('reject with onReject retry runs the iteration again, then continues', async () => {
    const { workflowId, runId } = await svc.startRun(body([loop({ onReject: 'retry', maxRetries: 1 }, 2)]));
    const one = await svc.waitForGate(workflowId, runId);
    const stepId = one.pendingRequirements[0].stepId;
    await decide(workflowId, runId, { stepId, resolution: 'reject', feedback: 'again' });
    const rerun = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.retryCount === 1 });
    expect(rerun.pendingRequirements[0].stepOutput.arguments.i).toBe(1);
    expect(rerun.nodeRuns.filter((n: any) => n.nodeName === 'Body').map((n: any) => n.iterationPath)).toEqual(['1', '1r1']);
    expect(rerun.pendingRequirements[0].stepId).toBe(`${stepId}:retry-1`);
    await decide(workflowId, runId, { stepId: `${stepId}:retry-1`, resolution: 'confirm' });
    const two = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepOutput?.arguments?.i === 2 });
    await decide(workflowId, runId, { stepId: two.pendingRequirements[0].stepId, resolution: 'confirm' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    expect(iterations(run.finalOutput)).toEqual([1, 2]);
  });

  it('reject with the default onReject cancels the run, naming the iteration', async () => {
    const { workflowId, runId } = await svc.startRun(body([loop({})]));
    const one = await svc.waitForGate(workflowId, runId);
    await decide(workflowId, runId, { stepId: one.pendingRequirements[0].stepId, resolution: 'reject', feedback: 'stop' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('cancelled');
    expect(run.errorSummary).toBe("Run cancelled: step 'Refine' was rejected: stop (iteration 1)");
  });

  it('a gated step inside a loop gates once per iteration, addressed as <node id>@<iteration>', async () => {
    const inner = { name: 'Each', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [echoStep('Inner', { i: { $cel: 'loop_state.iteration' } }, { humanReview: { requiresConfirmation: true, onReject: 'skip' } })] };
    const { workflowId, runId } = await svc.startRun(body([inner]));
    const one = await svc.waitForGate(workflowId, runId);
    const nodeId = one.definitionSnapshot.nodes[0].children[0].id;
    expect(one.pendingRequirements.map((r: any) => r.stepId)).toEqual([`${nodeId}@1`]);
    expect((await svc.approve(workflowId, runId, { stepId: nodeId, resolution: 'confirm' })).status).toBe(404);
    await decide(workflowId, runId, { stepId: `${nodeId}@1`, resolution: 'confirm' });
    const two = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepId === `${nodeId}@2` });
    expect(two.pendingRequirements).toHaveLength(1);
    await decide(workflowId, runId, { stepId: `${nodeId}@2`, resolution: 'reject' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    // (sorted here: a node run stopped at a gate before executing has startedAt null and is listed first)
    expect(run.nodeRuns.filter((n: any) => n.nodeName === 'Inner').map((n: any) => [n.iterationPath, n.status]).sort()).toEqual([
      ['1', 'completed'],
      ['2', 'skipped'],
    ]);
  });

  it('an endConditionCel still ends the loop after a confirmed iteration', async () => {
    const reviewed = { ...loop({}, 5), loopConfig: { maxIterations: 5, endConditionCel: 'loop_state.iteration >= 2' } };
    const { workflowId, runId } = await svc.startRun(body([reviewed]));
    for (let i = 1; i <= 2; i++) {
      const run = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepOutput?.arguments?.i === i });
      await decide(workflowId, runId, { stepId: run.pendingRequirements[0].stepId, resolution: 'confirm' });
    }
    const run = await svc.waitForRun(workflowId, runId);
    expect(iterations(run.finalOutput)).toEqual([1, 2]);
  });
});

// ---- 9. two gates at once ----------------------------------------------------------------------

describe('two gates pending at once in parallel branches', () => {
  const nodes = () => [
    {
      name: 'Fan Out',
      nodeType: 'parallel',
      children: [
        echoStep('Left Gate', { side: 'left' }, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Left?' } }),
        echoStep('Right Gate', { side: 'right' }, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Right?' } }),
      ],
    },
    last(),
  ];

  for (const order of [['Left Gate', 'Right Gate'], ['Right Gate', 'Left Gate']] as const) {
    it(`lists both; deciding ${order[0]} first lets the run go on and park again with ${order[1]} pending; deciding it completes the run`, async () => {
      const { workflowId, runId } = await svc.startRun(body(nodes()));
      const both = await svc.waitForGate(workflowId, runId, { until: (pending) => pending.length === 2 });
      expect(both.pendingRequirements.map((r: any) => [r.stepName, r.confirmationMessage]).sort()).toEqual([
        ['Left Gate', 'Left?'],
        ['Right Gate', 'Right?'],
      ]);
      expect(new Set(both.pendingRequirements.map((r: any) => r.stepId)).size).toBe(2);
      const idOf = (name: string) => both.pendingRequirements.find((r: any) => r.stepName === name).stepId as string;
      expect(both.runState.state).toBe('waiting-approval');

      await decide(workflowId, runId, { stepId: idOf(order[0]), resolution: 'confirm' });
      // The run continues (the decided branch executes) and parks again at the other gate.
      const one = await svc.waitForGate(workflowId, runId, {
        until: (pending, run) => pending.length === 1 && run.nodeRuns.some((n: any) => n.nodeName === order[0] && n.status === 'completed'),
      });
      expect(one.pendingRequirements.map((r: any) => r.stepName)).toEqual([order[1]]);
      expect(byName(one)[order[1]].status).toBe('awaiting_approval');
      expect(byName(one)['Last']).toBeUndefined();

      await decide(workflowId, runId, { stepId: idOf(order[1]), resolution: 'confirm' });
      const run = await svc.waitForRun(workflowId, runId);
      expect(run.status, run.errorSummary).toBe('completed');
      expect(run.pendingRequirements).toEqual([]);
      expect(run.finalOutput.arguments.prev).toEqual({
        'Left Gate': { arguments: { side: 'left' }, input: {} },
        'Right Gate': { arguments: { side: 'right' }, input: {} },
      });
      for (const name of order) expect(byName(run)[name]).toMatchObject({ status: 'completed', attempt: 1 });
      const events = await svc.events(runId);
      expect(events.filter((e) => e.type === 'requirement.decided')).toHaveLength(2);
      expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
    });
  }

  it('a decision on the other gate while the run is running again (a slow branch) is consumed: the run completes', async () => {
    const parallel = {
      name: 'Fan Out',
      nodeType: 'parallel',
      children: [
        { name: 'Slow Gate', nodeType: 'step', executorKey: 'sleep', config: { ms: 300 }, humanReview: { requiresConfirmation: true } },
        echoStep('Quick Gate', { q: 1 }, { humanReview: { requiresConfirmation: true } }),
      ],
    };
    const { workflowId, runId } = await svc.startRun(body([parallel]));
    const both = await svc.waitForGate(workflowId, runId, { until: (pending) => pending.length === 2 });
    const idOf = (name: string) => both.pendingRequirements.find((r: any) => r.stepName === name).stepId as string;
    await decide(workflowId, runId, { stepId: idOf('Slow Gate'), resolution: 'confirm' });
    // Wait until the slow step executes: the run is running, with no gate listed.
    const deadline = Date.now() + 5_000;
    let during: any;
    do {
      during = (await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body;
      if (byName(during)['Slow Gate']?.status === 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    } while (Date.now() < deadline);
    expect(during.status).toBe('running');
    expect(during.pendingRequirements).toEqual([]);
    const response = await svc.approve(workflowId, runId, { stepId: idOf('Quick Gate'), resolution: 'confirm' });
    expect(response.status, response.text).toBe(200);
    expect(response.body.status).toBe('running');
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    expect(Object.keys(run.finalOutput).sort()).toEqual(['Quick Gate', 'Slow Gate']);
    const events = await svc.events(runId);
    expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
    // The run parked once (both gates pending), never after the second decision.
    expect(events.filter((e) => e.type === 'run.awaiting_approval')).toHaveLength(1);
  });

  it('both decided back to back (the second while the run may be running again) completes the run', async () => {
    const { workflowId, runId } = await svc.startRun(body(nodes()));
    const both = await svc.waitForGate(workflowId, runId, { until: (pending) => pending.length === 2 });
    const [a, b] = both.pendingRequirements.map((r: any) => r.stepId as string);
    await decide(workflowId, runId, { stepId: a, resolution: 'confirm' });
    await decide(workflowId, runId, { stepId: b, resolution: 'reject', feedback: 'no right' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('cancelled');
    expect(run.errorSummary).toContain('was rejected: no right');
  });
});

// ---- node run bookkeeping across decisions (README: attempts count executions) ----------------

describe('container node runs across decisions', () => {
  it('a loop node run keeps attempt 1 through its iteration reviews (each re-traversal bumps it today)', async () => {
    const { workflowId, runId } = await svc.startRun(body([
      { name: 'Refine', nodeType: 'loop', loopConfig: { maxIterations: 3 }, children: [echoStep('Body', {})], humanReview: { requiresIterationReview: true } },
    ]));
    for (let i = 1; i <= 3; i++) {
      const run = await svc.waitForGate(workflowId, runId, { until: (_p, r) => r.nodeRuns.filter((n: any) => n.nodeName === 'Body').length === i });
      await decide(workflowId, runId, { stepId: run.pendingRequirements[0].stepId, resolution: 'confirm' });
    }
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('completed');
    const started = (await svc.events(runId)).filter((e) => e.type === 'node.started' && e.payload.nodeName === 'Refine');
    expect(byName(run)['Refine'].attempt).toBe(1); // actual: 4
    expect(started).toHaveLength(1); // actual: 4 node.started events
  });

  it('a parallel node run keeps attempt 1 while its children wait at gates (each re-traversal bumps it today)', async () => {
    const { workflowId, runId } = await svc.startRun(body([
      { name: 'Fan Out', nodeType: 'parallel', children: [echoStep('A', {}, { humanReview: { requiresConfirmation: true } }), echoStep('B', {}, { humanReview: { requiresConfirmation: true } })] },
    ]));
    const both = await svc.waitForGate(workflowId, runId, { until: (pending) => pending.length === 2 });
    await decide(workflowId, runId, { stepId: both.pendingRequirements[0].stepId, resolution: 'confirm' });
    await svc.waitForGate(workflowId, runId, { until: (pending) => pending.length === 1 });
    await decide(workflowId, runId, { stepId: both.pendingRequirements[1].stepId, resolution: 'confirm' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('completed');
    expect(byName(run)['Fan Out'].attempt).toBe(1); // actual: 3
  });

  it('the loop node run is awaiting_approval while its iteration review waits (it shows running today)', async () => {
    const { workflowId, runId } = await svc.startRun(body([
      { name: 'Refine', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [echoStep('Body', {})], humanReview: { requiresIterationReview: true } },
    ]));
    const run = await svc.waitForGate(workflowId, runId);
    expect(run.runState.state).toBe('waiting-approval');
    expect(byName(run)['Refine'].status).toBe('awaiting_approval'); // actual: 'running', with no lease behind it
  });
});
