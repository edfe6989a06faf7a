/**
 * DELETE /api/v1/workflows/{workflow_id}/runs/{run_id} (issue "Reliability" item 7): an ended run
 * goes with its node runs and events; a run that has not ended is a 409 naming its status.
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

describe('DELETE a run', () => {
  it('deletes an ended run with its node runs and events', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('delete me'), canvas: CANVAS, nodes: [echoStep('A'), echoStep('B')] });
    expect(run.status).toBe('completed');
    expect((await svc.events(run.id)).length).toBeGreaterThan(0);
    const deleted = await svc.api.delete(wf(`/${workflowId}/runs/${run.id}`));
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await svc.api.get(wf(`/${workflowId}/runs/${run.id}`))).status).toBe(404);
    expect((await svc.api.get(wf(`/${workflowId}/runs`))).body.runs).toEqual([]);
    expect(await svc.repos.nodeRuns.listByRun(run.id)).toEqual([]);
    expect(await svc.events(run.id)).toEqual([]);
    const again = await svc.api.delete(wf(`/${workflowId}/runs/${run.id}`));
    expect(again.status).toBe(404);
    expect(again.body.detail).toEqual({ error: 'resource_not_found', message: 'Run not found', resource: 'run' });
  });

  it('refuses a run that has not ended with a 409 naming its status, and keeps it', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('gated'),
      canvas: CANVAS,
      nodes: [{ ...echoStep('G'), humanReview: { requiresConfirmation: true } }],
    });
    await svc.waitForGate(workflowId, runId);
    const refused = await svc.api.delete(wf(`/${workflowId}/runs/${runId}`));
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatchObject({ error: 'conflict', details: { currentStatus: 'awaiting_approval' } });
    expect(refused.body.detail.message).toMatch(/^Run is awaiting_approval: only an ended run/);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body.status).toBe('awaiting_approval');
  });

  it('answers 404 for an unknown workflow or run and 400 for a malformed id', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('ids'), canvas: CANVAS, nodes: [echoStep('A')] });
    const unknownRun = await svc.api.delete(wf(`/${created.id}/runs/${'0'.repeat(24)}`));
    expect(unknownRun.status).toBe(404);
    const unknownWorkflow = await svc.api.delete(wf(`/${'f'.repeat(24)}/runs/${'0'.repeat(24)}`));
    expect(unknownWorkflow.body.detail.message).toBe('Workflow not found');
    const malformed = await svc.api.delete(wf(`/${created.id}/runs/nope`));
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail.message).toMatch(/Invalid run ID/);
  });
});
