/**
 * An `http` executor over the API (issue 9 items 3 and 4): the example registry's `notify` entry
 * pointed at a webhook started in-test (through `SWITCHYARD_EXAMPLE_WEBHOOK_URL`, read when the
 * service loads the registry), a run whose step posts its config there, and
 * `stepConfig.timeoutSeconds` as the API takes it and enforces it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookServer, hang, json } from '../packages/runner/src/testing/webhook-server.ts';
import { CANVAS, startService, uniqueName, wf, type TestService } from './support/service.ts';

let webhook: WebhookServer;
let svc: TestService;

beforeAll(async () => {
  webhook = await WebhookServer.start();
  // Read by examples/executors.json (`notify`) when the service loads it; this file's process only.
  process.env['SWITCHYARD_EXAMPLE_WEBHOOK_URL'] = webhook.url('/hook');
  svc = await startService();
});

afterAll(async () => {
  await svc?.close();
  await webhook?.close();
  delete process.env['SWITCHYARD_EXAMPLE_WEBHOOK_URL'];
});

const notify = (extra: Record<string, unknown> = {}) => ({
  name: 'Notify',
  nodeType: 'step',
  executorKey: 'notify',
  config: { orderId: { $cel: 'input.orderId' }, event: 'order.paid' },
  ...extra,
});

describe('http executors over the API', () => {
  it('posts the evaluated config to the webhook and stores its JSON answer', async () => {
    webhook.respond(json(200, { accepted: true, ticket: 'T-1' }));
    const { run } = await svc.runWorkflow({ name: uniqueName('webhook'), canvas: CANVAS, nodes: [notify()] }, { orderId: 42 });
    expect(run.status).toBe('completed');
    expect(run.nodeRuns[0]).toMatchObject({ status: 'completed', outputSnapshot: { accepted: true, ticket: 'T-1' } });
    expect(webhook.requests.at(-1)).toMatchObject({ method: 'POST', url: '/hook' });
    expect(JSON.parse(webhook.requests.at(-1)!.body)).toEqual({ orderId: 42, event: 'order.paid' });
  });

  it('takes stepConfig.timeoutSeconds in 1..86400 and fails a call that hangs longer', async () => {
    for (const timeoutSeconds of [0, 86_401, 'soon']) {
      const response = await svc.api.post(wf(), { name: uniqueName('timeout'), canvas: CANVAS, nodes: [notify({ stepConfig: { timeoutSeconds } })] });
      expect(response.status).toBe(400);
    }
    webhook.respond(hang);
    const before = webhook.requests.length;
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('timeout'), canvas: CANVAS, nodes: [notify({ stepConfig: { timeoutSeconds: 1 } })] }, { orderId: 7 });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe(`Node 'Notify' failed: executor "notify" timed out after 1 s`);
    await webhook.requests[before]!.abandoned;
    const definition = await svc.api.get(wf(`/${workflowId}`));
    expect(definition.body.nodes[0].stepConfig).toMatchObject({ timeoutSeconds: 1, maxRetries: 0 });
  });
});
