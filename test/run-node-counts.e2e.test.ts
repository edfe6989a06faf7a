/**
 * `nodeStatusCounts` and `activeNodeIds` on every run row and run detail: computed over all node
 * runs of a run (not only the first 100 shown), for each kind of run list.
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

const ZERO = { pending: 0, running: 0, awaiting_approval: 0, completed: 0, failed: 0, skipped: 0, cancelled: 0 };

describe('nodeStatusCounts and activeNodeIds', () => {
  it('count every node run of a run with more than 100, in the detail and in every run list', async () => {
    const { workflowId, run } = await svc.runWorkflow({
      name: uniqueName('counted loop'),
      canvas: CANVAS,
      nodes: [{ name: 'Loop', id: 'loop', nodeType: 'loop', loopConfig: { maxIterations: 120 }, children: [echoStep('Tick', { n: 1 }, { id: 'tick' })] }],
    });
    expect(run.status, run.errorSummary).toBe('completed');
    const expected = { nodeRunCount: 121, nodeStatusCounts: { ...ZERO, completed: 121 }, activeNodeIds: [] };
    expect(run.nodeRuns).toHaveLength(100);
    expect(run).toMatchObject(expected);

    const byId = await svc.api.get(`/api/v1/runs/${run.id}`);
    expect(byId.body).toMatchObject(expected);
    const ofWorkflow = await svc.api.get(wf(`/${workflowId}/runs`));
    expect(ofWorkflow.body.runs).toEqual([expect.objectContaining({ id: run.id, ...expected })]);
    const across = await svc.api.get(`/api/v1/runs?workflowId=${workflowId}`);
    expect(across.body.runs).toEqual([expect.objectContaining({ id: run.id, ...expected })]);

    // A full retry reuses (copies) every node run: its row in the children list counts them all.
    const retried = await svc.api.post(wf(`/${workflowId}/runs/${run.id}/retry`));
    expect(retried.status, retried.text).toBe(202);
    const child = await svc.waitForRun(workflowId, retried.body.runId);
    expect(child).toMatchObject({ status: 'completed', ...expected });
    const children = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/children`));
    expect(children.body.runs).toEqual([expect.objectContaining({ id: child.id, ...expected })]);
  });

  it('name the nodes running or held at a gate, and count a page of runs each on its own', async () => {
    const body = {
      name: uniqueName('held'),
      canvas: CANVAS,
      nodes: [
        echoStep('First', {}, { id: 'first' }),
        {
          name: 'Outer',
          id: 'outer',
          nodeType: 'loop',
          loopConfig: { maxIterations: 1 },
          children: [{ ...echoStep('Gate', {}, { id: 'gate' }), humanReview: { requiresConfirmation: true } }],
        },
        echoStep('Never', {}, { id: 'never' }),
      ],
    };
    const created = await svc.createWorkflow(body);
    await svc.enable(created.id);
    const held = (await svc.trigger(created.id)).body.runId as string;
    const parked = await svc.waitForGate(created.id, held);
    const heldView = { nodeRunCount: 3, nodeStatusCounts: { ...ZERO, completed: 1, running: 1, awaiting_approval: 1 }, activeNodeIds: ['gate', 'outer'] };
    expect(parked.nodeRuns.map((n: any) => [n.nodeId, n.status])).toEqual([
      ['first', 'completed'],
      ['outer', 'running'],
      ['gate', 'awaiting_approval'],
    ]);
    expect(parked).toMatchObject(heldView);

    // A second run of the same workflow, cancelled at the gate: the page's rows are counted each on its own.
    const stopped = (await svc.trigger(created.id)).body.runId as string;
    await svc.waitForGate(created.id, stopped);
    expect((await svc.api.post(wf(`/${created.id}/runs/${stopped}/cancel`))).status).toBe(200);
    const stoppedView = { nodeRunCount: 3, nodeStatusCounts: { ...ZERO, completed: 1, cancelled: 2 }, activeNodeIds: [] };
    expect(await svc.waitForRun(created.id, stopped)).toMatchObject({ status: 'cancelled', ...stoppedView });
    const rows = (await svc.api.get(wf(`/${created.id}/runs`))).body.runs;
    expect(rows).toEqual([expect.objectContaining({ id: stopped, ...stoppedView }), expect.objectContaining({ id: held, ...heldView })]);
    const acrossRows = (await svc.api.get(`/api/v1/runs?workflowId=${created.id}&status=awaiting_approval`)).body.runs;
    expect(acrossRows).toEqual([expect.objectContaining({ id: held, ...heldView })]);

    // Decided: the run goes on and ends, nothing active any more.
    expect((await svc.approve(created.id, held, { stepId: 'gate@1', resolution: 'confirm' })).status).toBe(200);
    const finished = await svc.waitForRun(created.id, held);
    expect(finished).toMatchObject({ status: 'completed', nodeRunCount: 4, nodeStatusCounts: { ...ZERO, completed: 4 }, activeNodeIds: [] });
  });

  it('lists at most 20 active node ids, sorted, but counts every node run', async () => {
    const children = Array.from({ length: 25 }, (_, i) => ({
      ...echoStep(`Ask ${i}`, {}, { id: `ask-${String(i).padStart(2, '0')}` }),
      humanReview: { requiresConfirmation: true },
    }));
    const created = await svc.createWorkflow({ name: uniqueName('wide'), canvas: CANVAS, nodes: [{ name: 'Fan', id: 'fan', nodeType: 'parallel', children }] });
    await svc.enable(created.id);
    const runId = (await svc.trigger(created.id, { parallelLimit: 100 })).body.runId as string;
    const parked = await svc.waitForGate(created.id, runId, { until: (pending) => pending.length === 25 });
    expect(parked.nodeStatusCounts).toEqual({ ...ZERO, running: 1, awaiting_approval: 25 });
    expect(parked.activeNodeIds).toEqual(Array.from({ length: 20 }, (_, i) => `ask-${String(i).padStart(2, '0')}`));
    await svc.api.post(wf(`/${created.id}/runs/${runId}/cancel`));
  });
});
