/**
 * The bridge's `send_event` (issue #21 item 2) against the real API with API keys: a workflow
 * saved with triggers through create_workflow is started by send_event (runs, event id); a repeat
 * of an `id` returns the first answer and starts nothing; a bad name is INVALID_INPUT naming the
 * field; a credential without `events-write` gets FORBIDDEN and starts nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier, Authenticator, newApiKey } from '@switchyard/api';
import { bridgeInProcess, type BridgeClient } from './support/bridge.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

const USER = ['workflows-read', 'workflows-write', 'workflows-control'];
const owner = newApiKey('owner', [...USER, 'workflows-admin']);
const sender = newApiKey('sender', [...USER, 'events-write'], { subject: 'sender' });
const plain = newApiKey('plain', USER, { subject: 'plain' });

let svc: TestService;
let asSender: BridgeClient;
let asPlain: BridgeClient;

beforeAll(async () => {
  svc = await startService({
    edge: { authenticator: Authenticator.withKeys(new ApiKeyVerifier({ keys: [owner.entry, sender.entry, plain.entry] })) },
    apiHeaders: { authorization: `Bearer ${owner.key}` },
  });
  [asSender, asPlain] = await Promise.all([bridgeInProcess(svc.baseUrl, ['--api-token', sender.key]), bridgeInProcess(svc.baseUrl, ['--api-token', plain.key])]);
});
afterAll(async () => {
  await Promise.all([asSender?.close(), asPlain?.close()]);
  await svc?.close();
});

const runCount = async (workflowId: string): Promise<number> => (await svc.api.get(wf(`/${workflowId}/runs`))).body.pagination.total;

describe('bridge: send_event', () => {
  it('starts the runs of matching workflows (saved with triggers by create_workflow), dedupes an id, and needs events-write', async () => {
    const event = `invoice.paid.${Date.now()}`;
    const saved = await asSender.call('create_workflow', {
      definition: {
        name: uniqueName('bridge-events'),
        canvas: CANVAS,
        nodes: [echoStep('A')],
        triggers: [{ event, filterCel: 'event.data.amount >= 100.0', inputCel: "{ 'invoice': event.data.id }" }],
      },
      enable: true,
    });
    expect(saved.ok, JSON.stringify(saved)).toBe(true);
    const workflowId = saved.data.workflowId;
    const got = await asSender.call('get_workflow', { workflowId });
    expect(got.data.workflow.triggers).toEqual([{ event, filterCel: 'event.data.amount >= 100.0', inputCel: "{ 'invoice': event.data.id }" }]);

    const sent = await asSender.call('send_event', { name: event, data: { id: 'inv-1', amount: 250 }, id: 'delivery-1' });
    expect(sent.ok, JSON.stringify(sent)).toBe(true);
    expect(sent.data.runIds).toHaveLength(1);
    const run = await svc.waitForRun(workflowId, sent.data.runIds[0]);
    expect(run).toMatchObject({ triggerSource: 'event', eventId: sent.data.eventId, initialInput: { invoice: 'inv-1' }, triggeredBy: { userId: 'sender' } });

    const again = await asSender.call('send_event', { name: event, data: { id: 'inv-1', amount: 250 }, id: 'delivery-1' });
    expect(again.data).toEqual(sent.data);
    const small = await asSender.call('send_event', { name: event, data: { id: 'inv-2', amount: 5 } });
    expect(small.data.runIds).toEqual([]);
    expect(await runCount(workflowId)).toBe(1);

    const badName = await asSender.call('send_event', { name: 'no spaces allowed' });
    expect(badName).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
    expect(JSON.stringify(badName.error)).toContain('name');

    const refused = await asPlain.call('send_event', { name: event, data: { id: 'inv-3', amount: 500 } });
    expect(refused).toMatchObject({ ok: false, isError: true, error: { code: 'FORBIDDEN' } });
    expect(await runCount(workflowId)).toBe(1);
  });
});
