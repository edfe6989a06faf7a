import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, startService, uniqueName, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ trustProxyIdentity: true });
});
afterAll(async () => {
  await svc.close();
});

describe('triggering identity (spec "Internal WorkflowRun Fields")', () => {
  it('is captured from the proxy headers onto the run document, and never exposed by the API', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('identity'), canvas: CANVAS, nodes: [{ name: 'A', nodeType: 'step', executorKey: 'echo' }] });
    await svc.enable(created.id);
    const response = await fetch(`${svc.baseUrl}/api/v1/workflows/${created.id}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-switchyard-user-id': 'u-42', 'x-switchyard-username': 'ada', 'x-switchyard-scopes': 'workflows-read, workflows-control' },
      body: '{}',
    });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    const detail = await svc.waitForRun(created.id, runId, { until: ['completed'] });
    // Neither the field names nor the values (as whole JSON strings) show up anywhere in the answer.
    expect(JSON.stringify(detail)).not.toMatch(/triggering|"u-42"|"ada"/);
    const doc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === runId);
    expect(doc).toMatchObject({ triggering_user_id: 'u-42', triggering_username: 'ada', triggering_scopes: ['workflows-read', 'workflows-control'] });
  });
});
