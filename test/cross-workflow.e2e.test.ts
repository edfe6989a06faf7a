/**
 * Runs and approvals without their workflow (`/api/v1/runs`, `/api/v1/runs/{run_id}`,
 * `/api/v1/approvals`) and the child runs of a run.
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

const gated = (name: string, extra: Record<string, unknown> = {}) => ({ ...echoStep(name), humanReview: { requiresConfirmation: true }, ...extra });

describe('GET /api/v1/runs', () => {
  it('lists runs across workflows, newest first, with workflow names and filters', async () => {
    const a = await svc.runWorkflow({ name: uniqueName('all runs A'), canvas: CANVAS, nodes: [echoStep('A')] });
    const b = await svc.runWorkflow({ name: uniqueName('all runs B'), canvas: CANVAS, nodes: [{ ...echoStep('B'), executorKey: 'flaky' }] });
    const all = await svc.api.get('/api/v1/runs?perPage=100');
    expect(all.status).toBe(200);
    const ids = all.body.runs.map((r: any) => r.id);
    expect(ids.indexOf(b.run.id)).toBeLessThan(ids.indexOf(a.run.id));
    const rowA = all.body.runs.find((r: any) => r.id === a.run.id);
    expect(rowA).toMatchObject({ workflowDefinitionId: a.workflowId, status: 'completed', nodeRunCount: 1 });
    expect(rowA.workflowName).toMatch(/^all runs A /);

    const ofB = await svc.api.get(`/api/v1/runs?workflowId=${b.workflowId}`);
    expect(ofB.body.runs.map((r: any) => r.id)).toEqual([b.run.id]);
    expect(ofB.body.pagination).toEqual({ total: 1, page: 1, perPage: 20, totalPages: 1 });
    // Rows without their node runs, for long lists: the counts stay.
    const lean = await svc.api.get(`/api/v1/runs?workflowId=${b.workflowId}&includeNodeRuns=false`);
    expect(lean.body.runs[0]).toMatchObject({ id: b.run.id, nodeRuns: [], nodeRunCount: 1, nodeStatusCounts: { failed: 1 } });
    const leanOfWorkflow = await svc.api.get(`/api/v1/workflows/${a.workflowId}/runs?includeNodeRuns=false`);
    expect(leanOfWorkflow.body.runs[0]).toMatchObject({ id: a.run.id, nodeRuns: [], nodeRunCount: 1, nodeStatusCounts: { completed: 1 } });
    const failed = await svc.api.get(`/api/v1/runs?status=failed&perPage=100`);
    expect(failed.body.runs.every((r: any) => r.status === 'failed')).toBe(true);
    expect(failed.body.runs.map((r: any) => r.id)).toContain(b.run.id);
    expect((await svc.api.get(`/api/v1/runs?triggerSource=nothing-like-this`)).body.runs).toEqual([]);
    expect((await svc.api.get(`/api/v1/runs?workflowId=nope`)).status).toBe(400);
  });

  it('returns one run by id alone, with its workflow name', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('by id'), canvas: CANVAS, nodes: [echoStep('A')] });
    const detail = await svc.api.get(`/api/v1/runs/${run.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id: run.id, workflowDefinitionId: workflowId, status: 'completed', runState: { state: 'succeeded' } });
    expect(detail.body.workflowName).toMatch(/^by id /);
    expect(detail.body.definitionSnapshot.nodes).toHaveLength(1);
    const missing = await svc.api.get(`/api/v1/runs/${'0'.repeat(24)}`);
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toEqual({ error: 'resource_not_found', message: 'Run not found', resource: 'run' });
    expect((await svc.api.get('/api/v1/runs/nope')).body.detail.message).toMatch(/Invalid run ID/);
  });
});

describe('GET /api/v1/approvals', () => {
  it('lists undecided gates across runs, oldest first, with filters, and drops decided ones', async () => {
    const first = await svc.startRun({ name: uniqueName('inbox one'), canvas: CANVAS, nodes: [{ ...gated('Confirm'), id: 'confirm' }] });
    await svc.waitForGate(first.workflowId, first.runId);
    const second = await svc.startRun({
      name: uniqueName('inbox two'),
      canvas: CANVAS,
      nodes: [{ ...echoStep('Review', { note: 'look at me' }), id: 'review', humanReview: { requiresOutputReview: true } }],
    });
    await svc.waitForGate(second.workflowId, second.runId);

    const listed = (await svc.api.get(`/api/v1/runs?workflowId=${first.workflowId}`)).body.runs[0];
    expect(listed.runState).toMatchObject({ state: 'waiting-approval', blocked: { kind: 'approval', nodeId: 'confirm' } });
    const inbox = await svc.api.get('/api/v1/approvals?perPage=100');
    expect(inbox.status).toBe(200);
    const mine = inbox.body.approvals.filter((a: any) => [first.runId, second.runId].includes(a.runId));
    expect(mine.map((a: any) => a.requirement.stepId)).toEqual(['confirm', 'review:review']);
    expect(mine[0]).toMatchObject({ runId: first.runId, workflowId: first.workflowId, runStatus: 'awaiting_approval', nodeId: 'confirm', iterationPath: '', phase: 'pre' });
    expect(mine[0].workflowName).toMatch(/^inbox one /);
    expect(mine[1].requirement).toMatchObject({ isPostExecution: true, stepOutput: { arguments: { note: 'look at me' } } });

    expect((await svc.api.get(`/api/v1/approvals?runId=${second.runId}`)).body.approvals.map((a: any) => a.runId)).toEqual([second.runId]);
    expect((await svc.api.get(`/api/v1/approvals?workflowId=${first.workflowId}`)).body.approvals).toHaveLength(1);
    expect((await svc.api.get(`/api/v1/approvals?nodeId=review&runId=${first.runId}`)).body.approvals).toEqual([]);

    expect((await svc.approve(first.workflowId, first.runId, { stepId: 'confirm', resolution: 'confirm' })).status).toBe(200);
    await svc.waitForRun(first.workflowId, first.runId);
    expect((await svc.api.get(`/api/v1/approvals?runId=${first.runId}`)).body.approvals).toEqual([]);
  });
});

describe('GET .../runs/{run_id}/children', () => {
  it('lists the runs started from a run, newest first', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('parent'), canvas: CANVAS, nodes: [{ ...echoStep('A'), id: 'a' }] });
    const children: string[] = [];
    for (let i = 0; i < 2; i++) {
      const child = await svc.trigger(workflowId, { parentRunId: run.id, resolvedDependencies: [{ nodeId: 'a', resolution: 'rerun' }] });
      expect(child.status).toBe(202);
      children.push(child.body.runId);
      await svc.waitForRun(workflowId, child.body.runId);
    }
    const listed = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/children`));
    expect(listed.status).toBe(200);
    expect(listed.body.runs.map((r: any) => r.id)).toEqual([...children].reverse());
    expect(listed.body.runs.every((r: any) => r.parentRunId === run.id)).toBe(true);
    expect(listed.body.pagination.total).toBe(2);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${children[0]}/children`))).body.runs).toEqual([]);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${'0'.repeat(24)}/children`))).status).toBe(404);
  });
});
