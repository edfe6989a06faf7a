/**
 * Pause, resume and cancel over real HTTP (issue "Run control" item 1), the run timeout trigger
 * option (item 9) and the runState of a step in retry backoff (item 11).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, PROXY_HEADERS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ trustProxyIdentity: true });
});
afterAll(async () => {
  await svc.close();
});

const sleepStep = (name: string, ms: number) => ({ name, nodeType: 'step', executorKey: 'sleep', config: { ms } });
const gated = (name: string) => echoStep(name, {}, { humanReview: { requiresConfirmation: true } });
const runPath = (workflowId: string, runId: string, suffix = '') => wf(`/${workflowId}/runs/${runId}${suffix}`);

/** Polls the node runs until one of `name` exists. */
async function nodeStarted(workflowId: string, runId: string, name: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const nodes = (await svc.api.get(runPath(workflowId, runId, '/nodes'))).body.nodeRuns as Array<{ nodeName: string }>;
    if (nodes.some((n) => n.nodeName === name)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${name} never started`);
}

const nodeRunsOf = async (workflowId: string, runId: string) =>
  Object.fromEntries(((await svc.api.get(runPath(workflowId, runId, '/nodes'))).body.nodeRuns as any[]).map((n) => [n.nodeName, n]));

describe('POST .../pause and .../resume', () => {
  it('pauses a multi-step run after its executing node and resumes it without executing anything twice', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('pause'), canvas: CANVAS, nodes: [echoStep('A'), sleepStep('B', 200), echoStep('C'), echoStep('D')] });
    await nodeStarted(workflowId, runId, 'B');

    const paused = await svc.api.post(runPath(workflowId, runId, '/pause'));
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ runId, status: 'running', pendingDirective: 'pause', changed: true });
    const run = await svc.waitForRun(workflowId, runId, { until: ['paused'] });
    expect(run.pausedAt).not.toBeNull();
    expect(run.runState.state).toBe('paused');
    expect(Object.keys(await nodeRunsOf(workflowId, runId)).sort()).toEqual(['A', 'B']);
    // Once the engine has let go of every run, nothing can execute C: still only A and B.
    await svc.engine.idle();
    expect(Object.keys(await nodeRunsOf(workflowId, runId)).sort()).toEqual(['A', 'B']);

    const again = await svc.api.post(runPath(workflowId, runId, '/pause'));
    expect(again.body).toMatchObject({ status: 'paused', changed: false, message: 'Run is already paused', stepsCompleted: 2 });

    const resumed = await svc.api.post(runPath(workflowId, runId, '/resume'));
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ runId, changed: true });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.status).toBe('completed');
    expect(done.nodeRuns.map((n: any) => [n.nodeName, n.attempt, n.status])).toEqual([
      ['A', 1, 'completed'],
      ['B', 1, 'completed'],
      ['C', 1, 'completed'],
      ['D', 1, 'completed'],
    ]);
    const events = await svc.api.get(runPath(workflowId, runId, '/events?types=directive.received,run.paused,run.resumed'));
    expect(events.body.events.map((e: any) => [e.type, e.payload.directive ?? null])).toEqual([
      ['directive.received', 'pause'],
      ['run.paused', null],
      ['directive.received', 'resume'],
      ['run.resumed', null],
    ]);
  });

  it('pauses a run awaiting approval, accepts the decision while paused, and continues only on resume', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('pause-gate'), canvas: CANVAS, nodes: [gated('A'), echoStep('B')] });
    const parked = await svc.waitForGate(workflowId, runId);
    const paused = await svc.api.post(runPath(workflowId, runId, '/pause'));
    expect(paused.body).toMatchObject({ status: 'paused', changed: true, pendingDirective: null });

    const decided = await svc.approve(workflowId, runId, { stepId: parked.pendingRequirements[0].stepId, resolution: 'confirm' });
    expect(decided.status).toBe(200);
    // The decision woke the engine before it answered; once that wake-up is over, the run is still paused.
    await svc.engine.idle();
    const still = (await svc.api.get(runPath(workflowId, runId))).body;
    expect(still.status).toBe('paused');
    expect(still.nodeRuns.map((n: any) => n.status)).toEqual(['awaiting_approval']);

    expect((await svc.api.post(runPath(workflowId, runId, '/resume'))).status).toBe(200);
    expect((await svc.waitForRun(workflowId, runId)).status).toBe('completed');
  });

  it('a resumed run whose gate is still undecided goes back to awaiting approval', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('pause-undecided'), canvas: CANVAS, nodes: [gated('A')] });
    await svc.waitForGate(workflowId, runId);
    await svc.api.post(runPath(workflowId, runId, '/pause'));
    await svc.api.post(runPath(workflowId, runId, '/resume'));
    const back = await svc.waitForGate(workflowId, runId);
    expect(back.runState.state).toBe('waiting-approval');
  });
});

describe('POST .../cancel', () => {
  it('aborts an in-flight call of the real MCP server and ends the run cancelled at once', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('cancel-mcp'),
      canvas: CANVAS,
      nodes: [{ name: 'long', nodeType: 'step', executorKey: 'long-operation', config: { duration: 120, steps: 4 } }, echoStep('after')],
    });
    await nodeStarted(workflowId, runId, 'long');
    const cancelled = await svc.api.request('POST', runPath(workflowId, runId, '/cancel'), { reason: 'no longer needed' });
    expect(cancelled.status).toBe(200);
    // The answer waited for the abort (a 120 s operation), not for the operation.
    expect(cancelled.body).toMatchObject({ runId, status: 'cancelled', changed: true, pendingDirective: null, stepsCompleted: 0 });
    const run = (await svc.api.get(runPath(workflowId, runId))).body;
    expect(run).toMatchObject({ status: 'cancelled', cancelReason: 'no longer needed', cancelledBy: { userId: 'e2e-client', username: null, via: 'proxy' }, errorSummary: 'Cancelled by e2e-client: no longer needed' });
    expect(run.nodeRuns.map((n: any) => [n.nodeName, n.status])).toEqual([['long', 'cancelled']]);
    expect(run.runState.state).toBe('cancelled');
  });

  it('ends a retry backoff wait at once; while waiting the run shows waiting-timer', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('cancel-backoff'),
      canvas: CANVAS,
      nodes: [{ name: 'flaky', nodeType: 'step', executorKey: 'flaky', stepConfig: { maxRetries: 5, backoffBaseSeconds: 120, backoffMaxSeconds: 120, onError: 'fail' } }],
    });
    let run: any;
    for (let i = 0; i < 500; i++) {
      run = (await svc.api.get(runPath(workflowId, runId))).body;
      if (run.runState.state === 'waiting-timer') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(run.runState).toMatchObject({ state: 'waiting-timer', blocked: { kind: 'timer', nodeId: run.nodeRuns[0].nodeId } });
    expect(Date.parse(run.runState.blocked.wakeAt)).toBeGreaterThan(Date.now() + 30_000);

    const cancelled = await svc.api.post(runPath(workflowId, runId, '/cancel'), undefined);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    const after = await svc.api.get(wf(`/${workflowId}/runs/${runId}/nodes`));
    expect(after.body.nodeRuns).toHaveLength(1);
  });

  it('records who cancelled from the identity headers', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('cancel-who'), canvas: CANVAS, nodes: [gated('A')] });
    await svc.waitForGate(workflowId, runId);
    await svc.share(workflowId, { operators: ['user:u-ada'] });
    const response = await fetch(`${svc.baseUrl}${runPath(workflowId, runId, '/cancel')}`, { method: 'POST', headers: { ...PROXY_HEADERS, 'x-switchyard-user-id': 'u-ada', 'x-switchyard-username': 'ada' } });
    expect(response.status).toBe(200);
    const run = (await svc.api.get(runPath(workflowId, runId))).body;
    expect(run).toMatchObject({ status: 'cancelled', cancelledBy: { userId: 'u-ada', username: 'ada', via: 'proxy' }, cancelReason: null, errorSummary: 'Cancelled by ada' });
    expect(run.requirements[0]).toMatchObject({ decidedBy: 'run_ended' });
  });

  it('20 concurrent cancels of one run: one changes it, every other is a 200 no-op', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('cancel-race'), canvas: CANVAS, nodes: [gated('A')] });
    await svc.waitForGate(workflowId, runId);
    const answers = await Promise.all(Array.from({ length: 20 }, () => svc.api.post(runPath(workflowId, runId, '/cancel'))));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => a.body.changed)).toHaveLength(1);
    const events = await svc.api.get(runPath(workflowId, runId, '/events?types=run.cancelled'));
    expect(events.body.events).toHaveLength(1);
  });
});

describe('directive errors', () => {
  it('409 names the status a directive does not fit; 404 unknown run; 400 malformed id or body', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('directive-errors'), canvas: CANVAS, nodes: [echoStep('A')] });
    expect(run.status).toBe('completed');
    for (const directive of ['pause', 'resume', 'cancel']) {
      const conflict = await svc.api.post(runPath(workflowId, run.id, `/${directive}`));
      expect(conflict.status).toBe(409);
      expect(conflict.body.detail).toMatchObject({ error: 'conflict', message: `Cannot ${directive} a run that is completed`, details: { currentStatus: 'completed' } });
    }
    const missing = await svc.api.post(runPath(workflowId, '0123456789abcdef01234567', '/pause'));
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatchObject({ error: 'resource_not_found', resource: 'run' });
    expect((await svc.api.post(runPath(workflowId, 'nope', '/cancel'))).status).toBe(400);
    const badReason = await svc.api.post(runPath(workflowId, run.id, '/cancel'), { reason: 42 });
    expect(badReason.status).toBe(400);
  });
});

describe('trigger option timeoutSeconds', () => {
  it('fails a run still going at its deadline, saying it timed out', async () => {
    const workflow = await svc.createWorkflow({ name: uniqueName('timeout'), canvas: CANVAS, nodes: [sleepStep('slow', 60_000)] });
    await svc.enable(workflow.id);
    const triggered = await svc.trigger(workflow.id, { timeoutSeconds: 1 });
    expect(triggered.status).toBe(202);
    const run = await svc.waitForRun(workflow.id, triggered.body.runId);
    expect(run).toMatchObject({ status: 'failed', timeoutSeconds: 1, cancelledBy: { userId: null, username: 'timeout', via: 'system' } });
    expect(run.errorSummary).toMatch(/^Run timed out/);
    expect(Date.parse(run.deadlineAt) - Date.parse(run.startedAt)).toBe(1_000);
    expect(run.nodeRuns[0].status).toBe('cancelled');
    expect((await svc.trigger(workflow.id, { timeoutSeconds: 0 })).status).toBe(400);
  });
});
