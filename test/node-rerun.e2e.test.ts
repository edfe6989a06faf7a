/**
 * POST .../runs/{run_id}/nodes/{node_id}/rerun over real HTTP (issue "Run control" item 3; spec
 * endpoint 13, extended to nested nodes): what is reused, what executes afresh, where the child
 * run stops, and the errors.
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

const step = (id: string, config: Record<string, unknown> = {}) => ({ ...echoStep(id.toUpperCase(), config), id });
const rerunPath = (workflowId: string, runId: string, nodeId: string) => wf(`/${workflowId}/runs/${runId}/nodes/${nodeId}/rerun`);

/** Reruns `nodeId` of the run and waits for the child run to end; returns it with its node runs by `nodeId@iterationPath`. */
async function rerun(workflowId: string, runId: string, nodeId: string, body?: Record<string, unknown>) {
  const response = await svc.api.post(rerunPath(workflowId, runId, nodeId), body);
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  expect(response.body).toMatchObject({ parentRunId: runId, status: 'pending', triggerSource: 'node_rerun', message: `Node '${nodeId}' rerun queued as run ${response.body.runId}` });
  expect(response.body.run_id).toBe(response.body.runId);
  const child = await svc.waitForRun(workflowId, response.body.runId);
  const nodeRuns = await svc.repos.nodeRuns.listByRun(child.id);
  const byKey = Object.fromEntries(nodeRuns.map((n) => [`${n.nodeId}@${n.iterationPath}`, n]));
  return { child, byKey };
}

describe('rerun of a top-level step', () => {
  it('reuses the steps before it, executes it afresh, and ends right after it', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('rerun'), canvas: CANVAS, nodes: [step('a', { n: 1 }), step('b', { n: { $cel: 'input.n' } }), step('c')] }, { n: 5 });
    expect(run.status).toBe('completed');
    const source = Object.fromEntries(run.nodeRuns.map((n: any) => [n.nodeId, n]));

    const { child, byKey } = await rerun(workflowId, run.id, 'b');
    expect(child).toMatchObject({ status: 'completed', parentRunId: run.id, triggerSource: 'node_rerun', initialInput: { n: 5 } });
    expect(Object.keys(byKey).sort()).toEqual(['a@', 'b@']);
    expect(byKey['a@']!.reusedFromNodeRunId).toBe(source.a.id);
    expect(byKey['b@']).toMatchObject({ reusedFromNodeRunId: null, attempt: 1, status: 'completed' });
    expect(byKey['b@']!.id).not.toBe(source.b.id);
    expect(child.finalOutput).toEqual(byKey['b@']!.outputSnapshot);
    expect(child.finalOutput.arguments).toEqual({ n: 5 });

    const children = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/children`));
    expect(children.body.runs.map((r: any) => r.id)).toContain(child.id);
  });
});

describe('rerun of nested nodes', () => {
  it('in a parallel: siblings reused, the parallel re-entered, nothing after it runs', async () => {
    const { workflowId, run } = await svc.runWorkflow({
      name: uniqueName('rerun-parallel'),
      canvas: CANVAS,
      nodes: [step('a'), { id: 'p', name: 'P', nodeType: 'parallel', children: [step('x'), step('y', { v: { $cel: 'input.v' } })] }, step('z')],
    }, { v: 'y-input' });
    expect(run.status).toBe('completed');
    const { child, byKey } = await rerun(workflowId, run.id, 'y');
    expect(child.status).toBe('completed');
    expect(byKey['a@']!.reusedFromNodeRunId).not.toBeNull();
    expect(byKey['x@']!.reusedFromNodeRunId).not.toBeNull();
    expect(byKey['y@']).toMatchObject({ reusedFromNodeRunId: null, status: 'completed' });
    expect(byKey['z@']).toBeUndefined();
    // The parallel around the target never finished in the child run: it is closed, not left running.
    expect(byKey['p@']).toMatchObject({ status: 'cancelled', error: 'not finished: the node rerun ended after its target' });
    expect(child.finalOutput.arguments).toEqual({ v: 'y-input' });
  });

  it('in a loop: the named iteration (default the last) executes afresh, earlier ones are reused', async () => {
    const { workflowId, run } = await svc.runWorkflow({
      name: uniqueName('rerun-loop'),
      canvas: CANVAS,
      nodes: [{ id: 'l', name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 3 }, children: [step('s', { i: { $cel: 'loop_state.iteration' } })] }, step('after')],
    });
    expect(run.status).toBe('completed');

    const second = await rerun(workflowId, run.id, 's', { iterationPath: '2' });
    expect(second.child.status).toBe('completed');
    expect(second.byKey['s@1']!.reusedFromNodeRunId).not.toBeNull();
    expect(second.byKey['s@2']).toMatchObject({ reusedFromNodeRunId: null, inputSnapshot: { i: 2 } });
    expect(second.byKey['s@3']).toBeUndefined();
    expect(second.byKey['after@']).toBeUndefined();
    expect(second.child.finalOutput.arguments).toEqual({ i: 2 });

    const last = await rerun(workflowId, run.id, 's');
    expect(last.byKey['s@3']).toMatchObject({ reusedFromNodeRunId: null, inputSnapshot: { i: 3 } });
    expect(['s@1', 's@2'].every((key) => last.byKey[key]!.reusedFromNodeRunId !== null)).toBe(true);
  });

  it('in a router a person routed: the recorded route is replayed, not asked again', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('rerun-router'),
      canvas: CANVAS,
      nodes: [
        {
          id: 'r',
          name: 'R',
          nodeType: 'router',
          conditionCel: "'left'",
          choices: [
            { name: 'left', steps: [step('left')] },
            { name: 'right', steps: [step('right', { side: 'right' })] },
          ],
          humanReview: { requiresUserInput: true },
        },
      ],
    });
    const parked = await svc.waitForGate(workflowId, runId);
    await svc.approve(workflowId, runId, { stepId: parked.pendingRequirements[0].stepId, resolution: 'route_select', selectedChoices: ['right'] });
    expect((await svc.waitForRun(workflowId, runId)).status).toBe('completed');

    const { child, byKey } = await rerun(workflowId, runId, 'right');
    expect(child.status).toBe('completed');
    expect(byKey['left@']).toBeUndefined();
    expect(byKey['right@']).toMatchObject({ reusedFromNodeRunId: null, status: 'completed' });
    expect(child.finalOutput.arguments).toEqual({ side: 'right' });
  });
});

describe('rerun errors', () => {
  it('404 unknown node, 400 malformed node id, unknown iteration, source not ended, disabled workflow', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('rerun-errors'), canvas: CANVAS, nodes: [step('a')] });
    const unknown = await svc.api.post(rerunPath(workflowId, run.id, 'nope'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatchObject({ error: 'resource_not_found', resource: 'node', message: 'Node not found' });
    expect((await svc.api.post(rerunPath(workflowId, run.id, 'bad%20id'))).status).toBe(400);
    const badPath = await svc.api.post(rerunPath(workflowId, run.id, 'a'), { iterationPath: '9' });
    expect(badPath.status).toBe(400);
    expect(badPath.body.detail.message).toMatch(/has no node run at iterationPath '9'/);
    const noRun = await svc.api.post(rerunPath(workflowId, '0123456789abcdef01234567', 'a'));
    expect(noRun.body.detail).toMatchObject({ resource: 'run' });

    const { workflowId: gatedId, runId } = await svc.startRun({ name: uniqueName('rerun-open'), canvas: CANVAS, nodes: [{ ...step('g'), humanReview: { requiresConfirmation: true } }] });
    await svc.waitForGate(gatedId, runId);
    const open = await svc.api.post(rerunPath(gatedId, runId, 'g'));
    expect(open.status).toBe(400);
    expect(open.body.detail.message).toMatch(/^Run is awaiting_approval: only an ended run/);

    await svc.api.post(wf(`/${workflowId}/toggle`), { enabled: false });
    const disabled = await svc.api.post(rerunPath(workflowId, run.id, 'a'));
    expect(disabled.status).toBe(400);
  });
});
