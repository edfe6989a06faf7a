/**
 * Retry and replay of ended runs (issue "Run control" items 2, 4, 5; spec 3.2 and endpoint 14).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

/** A run whose second step fails unless the input has `ready`. */
const twoSteps = () => ({
  name: uniqueName('retry'),
  canvas: CANVAS,
  nodes: [{ ...echoStep('A', { n: 1 }), id: 'a' }, { ...echoStep('B', { ready: { $cel: 'input.ready' } }), id: 'b' }],
});

async function reusedFrom(runId: string): Promise<Record<string, string | null>> {
  const nodeRuns = await svc.repos.nodeRuns.listByRun(runId);
  return Object.fromEntries(nodeRuns.map((n) => [n.nodeId, n.reusedFromNodeRunId ?? null]));
}

describe('POST .../runs/{run_id}/retry', () => {
  it('with a body, reuses what resolvedDependencies name, on the source definition, with the new input', async () => {
    const { workflowId, run } = await svc.runWorkflow(twoSteps(), {});
    expect(run.status).toBe('failed');
    const sourceA = run.nodeRuns.find((n: any) => n.nodeId === 'a');

    const retried = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/retry`), {
      initialInput: { ready: true },
      resolvedDependencies: [{ nodeId: 'a', resolution: 'reuse_previous_output', sourceNodeRunId: sourceA.id }],
    });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ parentRunId: run.id, status: 'pending', triggerSource: 'retry' });
    expect(retried.body.run_id).toBe(retried.body.runId);
    const child = await svc.waitForRun(workflowId, retried.body.runId);
    expect(child.status, child.errorSummary).toBe('completed');
    expect(child.parentRunId).toBe(run.id);
    expect(await reusedFrom(child.id)).toEqual({ a: sourceA.id, b: null });
    expect(child.finalOutput).toMatchObject({ arguments: { ready: true } });

    // A new input alone reuses nothing: outputs computed from the old input would not fit it.
    const fresh = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/retry`), { initialInput: { ready: 'again' } });
    const freshChild = await svc.waitForRun(workflowId, fresh.body.runId);
    expect(freshChild.status).toBe('completed');
    expect(await reusedFrom(freshChild.id)).toEqual({ a: null, b: null });
  });

  it('without a body keeps the input and reuses every completed node run', async () => {
    const { workflowId, run } = await svc.runWorkflow(twoSteps(), { ready: 'yes' });
    expect(run.status).toBe('completed');
    const retried = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/retry`));
    const child = await svc.waitForRun(workflowId, retried.body.runId);
    expect(child.status).toBe('completed');
    expect(child.initialInput).toEqual({ ready: 'yes' });
    expect(Object.values(await reusedFrom(child.id)).every((id) => id !== null)).toBe(true);
    expect(child.resolvedDependencies).toEqual([]);
  });

  it('without a body replays the source\'s human decisions, so no gate on the path is asked again', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('retry decisions'),
      canvas: CANVAS,
      nodes: [
        {
          id: 'loop',
          name: 'Loop',
          nodeType: 'loop',
          loopConfig: { maxIterations: 3 },
          humanReview: { requiresIterationReview: true, onReject: 'retry', maxRetries: 2 },
          children: [{ ...echoStep('Work', { v: { $cel: 'loop_state.iteration < 3.0 ? 1.0 : input.missing' } }), id: 'work' }],
        },
      ],
    });
    const decide = async (stepId: string, resolution: string) => {
      await svc.waitForGate(workflowId, runId, { until: (pending) => pending.some((p: any) => p.stepId === stepId) });
      expect((await svc.approve(workflowId, runId, { stepId, resolution })).status).toBe(200);
    };
    await decide('loop:iteration-1', 'reject');
    await decide('loop:iteration-1:retry-1', 'confirm');
    await decide('loop:iteration-2', 'confirm');
    const source = await svc.waitForRun(workflowId, runId);
    expect(source.status).toBe('failed');

    const retried = await svc.api.post(wf(`/${workflowId}/runs/${runId}/retry`));
    const child = await svc.waitForRun(workflowId, retried.body.runId);
    expect(child.status).toBe('failed'); // the same input fails at the same place ...
    const events = (await svc.events(child.id)).map((e) => e.type);
    expect(events).not.toContain('requirement.raised'); // ... without asking anyone again
    expect(events).not.toContain('run.awaiting_approval');
    const reused = await svc.repos.nodeRuns.listByRun(child.id);
    expect(reused.filter((n) => n.nodeId === 'work' && n.reusedFromNodeRunId).map((n) => n.iterationPath).sort()).toEqual(['1', '1r1', '2']);
    expect(child.requirements.map((r: any) => [r.stepId, r.resolution])).toEqual([
      ['loop:iteration-1', 'reject'],
      ['loop:iteration-1:retry-1', 'confirm'],
      ['loop:iteration-2', 'confirm'],
    ]);
  });

  it('refuses a run that has not ended, a disabled workflow, unknown runs and bad dependencies', async () => {
    const gated = await svc.startRun({ name: uniqueName('retry gated'), canvas: CANVAS, nodes: [{ ...echoStep('G'), id: 'g', humanReview: { requiresConfirmation: true } }] });
    await svc.waitForGate(gated.workflowId, gated.runId);
    const notEnded = await svc.api.post(wf(`/${gated.workflowId}/runs/${gated.runId}/retry`));
    expect(notEnded.status).toBe(400);
    expect(notEnded.body.detail.message).toBe('Run is awaiting_approval: only an ended run (completed, failed or cancelled) can be retried');

    const { workflowId, run } = await svc.runWorkflow(twoSteps(), {});
    const badDependency = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/retry`), { resolvedDependencies: [{ nodeId: 'a', resolution: 'reuse_previous_output' }] });
    expect(badDependency.status).toBe(400);
    expect(badDependency.body.detail.message).toMatch(/sourceNodeRunId is required/);
    expect((await svc.api.post(wf(`/${workflowId}/runs/${'0'.repeat(24)}/retry`))).status).toBe(404);
    await svc.api.post(wf(`/${workflowId}/toggle`), { enabled: false });
    const disabled = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/retry`));
    expect(disabled.status).toBe(400);
    expect(disabled.body.detail.message).toBe('Workflow is disabled. Please enable the workflow before triggering a run.');
  });
});

describe('POST .../runs/{run_id}/replay', () => {
  it('runs the current definition with the source input, reusing nothing, as a child of the source', async () => {
    const { workflowId, run } = await svc.runWorkflow(twoSteps(), { ready: 1 });
    expect(run.status).toBe('completed');
    const current = (await svc.api.get(wf(`/${workflowId}`))).body;
    expect((await svc.api.put(wf(`/${workflowId}`), { nodes: [...current.nodes, { ...echoStep('C'), id: 'c' }] })).status).toBe(200);

    const replayed = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/replay`));
    expect(replayed.status).toBe(202);
    expect(replayed.body).toMatchObject({ parentRunId: run.id, triggerSource: 'replay', message: `Replay queued as run ${replayed.body.runId}` });
    const child = await svc.waitForRun(workflowId, replayed.body.runId);
    expect(child.status).toBe('completed');
    expect(child.initialInput).toEqual({ ready: 1 });
    expect(child.workflowVersion).toBe(2);
    expect(child.nodeRuns.map((n: any) => n.nodeId)).toEqual(['a', 'b', 'c']);
    expect(Object.values(await reusedFrom(child.id))).toEqual([null, null, null]);

    const children = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/children`));
    expect(children.body.runs.map((r: any) => [r.id, r.triggerSource])).toEqual([[child.id, 'replay']]);
  });

  it('replays a run that is still running (nothing of it is reused)', async () => {
    const gated = await svc.startRun({ name: uniqueName('replay gated'), canvas: CANVAS, nodes: [{ ...echoStep('G'), id: 'g', humanReview: { requiresConfirmation: true } }] });
    await svc.waitForGate(gated.workflowId, gated.runId);
    const replayed = await svc.api.post(wf(`/${gated.workflowId}/runs/${gated.runId}/replay`));
    expect(replayed.status).toBe(202);
    await svc.waitForGate(gated.workflowId, replayed.body.runId);
  });
});

describe('a child run that cannot be prepared', () => {
  it('leaves neither the run nor any copied node run behind when copying the reused outputs fails', async () => {
    const { workflowId, run } = await svc.runWorkflow(twoSteps(), { ready: 'yes' });
    expect(run.status).toBe('completed');
    const nodeRuns = svc.repos.nodeRuns;
    const copyToRun = nodeRuns.copyToRun.bind(nodeRuns);
    const childIds = new Set<string>();
    nodeRuns.copyToRun = async (source, runId, now) => {
      childIds.add(runId);
      if (childIds.size > 0 && (await nodeRuns.countByRun(runId)) === 1) throw new Error('store went away');
      return copyToRun(source, runId, now);
    };
    try {
      const retried = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/retry`));
      expect(retried.status).toBe(500);
    } finally {
      nodeRuns.copyToRun = copyToRun;
    }
    const [childId] = [...childIds];
    expect(childIds.size).toBe(1);
    expect(await svc.repos.runs.get(childId!)).toBeNull();
    expect(await nodeRuns.countByRun(childId!)).toBe(0);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${run.id}/children`))).body.runs).toEqual([]);
  });
});
