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
  it('is captured from the proxy headers onto the run document; the API shows who (triggeredBy), never the scopes', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('identity'), canvas: CANVAS, nodes: [{ name: 'A', nodeType: 'step', executorKey: 'echo' }] });
    await svc.enable(created.id);
    await svc.share(created.id, { operators: ['user:u-42'] });
    const response = await fetch(`${svc.baseUrl}/api/v1/workflows/${created.id}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-switchyard-user-id': 'u-42', 'x-switchyard-username': 'ada', 'x-switchyard-scopes': 'workflows-read, workflows-control' },
      body: '{}',
    });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    const detail = await svc.waitForRun(created.id, runId, { until: ['completed'] });
    // Who triggered is shown (issue #18), as an actor; the stored field names and the scopes are not.
    expect(detail.triggeredBy).toEqual({ userId: 'u-42', username: 'ada', via: 'proxy' });
    expect(JSON.stringify(detail)).not.toMatch(/triggering|workflows-control/);
    const doc = (await svc.store.collection('workflow_runs').find({})).find((d) => String(d._id) === runId);
    expect(doc).toMatchObject({ triggering_user_id: 'u-42', triggering_username: 'ada', triggering_scopes: ['workflows-read', 'workflows-control'] });
  });
});
