/**
 * The MCP bridge passes per-workflow access through (issue #18 item 8), against the real API:
 * `list_pending_approvals` with `mine`, a refused `resolve_approval` as `FORBIDDEN` with the API's
 * reason, and who decided in the decision and in `get_run`. Each bridge acts with its own API key,
 * as an agent's service account would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier, Authenticator, newApiKey } from '@switchyard/api';
import { bridgeInProcess, type BridgeClient } from './support/bridge.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

const SCOPES = ['workflows-read', 'workflows-write', 'workflows-control'];
const owner = newApiKey('owner', SCOPES);
const bob = newApiKey('bob', SCOPES, { subject: 'bob' });
const carol = newApiKey('carol', SCOPES, { subject: 'carol', groups: ['finance'] });

let svc: TestService;
let asBob: BridgeClient;
let asCarol: BridgeClient;

beforeAll(async () => {
  svc = await startService({
    edge: { authenticator: Authenticator.withKeys(new ApiKeyVerifier({ keys: [owner.entry, bob.entry, carol.entry] })) },
    apiHeaders: { authorization: `Bearer ${owner.key}` },
  });
  [asBob, asCarol] = await Promise.all([bridgeInProcess(svc.baseUrl, ['--api-token', bob.key]), bridgeInProcess(svc.baseUrl, ['--api-token', carol.key])]);
});
afterAll(async () => {
  await Promise.all([asBob?.close(), asCarol?.close()]);
  await svc?.close();
});

/** A run of a new workflow parked at a gate only finance may decide; bob operates it, carol views it. */
async function financeGate(): Promise<{ workflowId: string; runId: string; stepId: string }> {
  const created = await svc.createWorkflow({
    name: uniqueName('finance-gate'),
    canvas: CANVAS,
    nodes: [echoStep('Pay', { amount: 10 }, { humanReview: { requiresConfirmation: true, approvers: ['group:finance'] } })],
  });
  await svc.enable(created.id);
  await svc.share(created.id, { operators: ['user:bob'], viewers: ['group:finance'] });
  const triggered = await svc.trigger(created.id, {});
  expect(triggered.status).toBe(202);
  const gate = await svc.waitForGate(created.id, triggered.body.runId);
  return { workflowId: created.id, runId: triggered.body.runId, stepId: gate.pendingRequirements[0].stepId };
}

describe('the bridge with per-workflow access', () => {
  it('lists what each credential may decide (mine), refuses a non-approver with FORBIDDEN and its reason, and shows who decided', async () => {
    const { workflowId, runId, stepId } = await financeGate();

    const bobsInbox = await asBob.call('list_pending_approvals', { runId });
    expect(bobsInbox.ok).toBe(true);
    expect(bobsInbox.data.approvals).toEqual([expect.objectContaining({ stepId, approvers: ['group:finance'], canDecide: false })]);
    expect((await asBob.call('list_pending_approvals', { runId, mine: true })).data).toMatchObject({ approvals: [], total: 0 });

    const refused = await asBob.call('resolve_approval', { runId, stepId, resolution: 'confirm' });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'not_an_approver', approvers: ['group:finance'] } });
    expect((await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body.pendingRequirements).toHaveLength(1);

    const carolsInbox = await asCarol.call('list_pending_approvals', { runId, mine: true });
    expect(carolsInbox.data.approvals).toEqual([expect.objectContaining({ stepId, canDecide: true })]);
    const decided = await asCarol.call('resolve_approval', { runId, stepId, resolution: 'confirm' });
    expect(decided.ok, JSON.stringify(decided.error)).toBe(true);
    expect(JSON.stringify(decided.data)).toContain('"userId":"carol"');

    await svc.waitForRun(workflowId, runId, { until: ['completed'] });
    const run = await asCarol.call('get_run', { runId });
    expect(run.ok).toBe(true);
    expect(JSON.stringify(run.data)).toContain('"decidedByUser":{"userId":"carol","username":"carol","via":"api-key"}');
    expect(JSON.stringify(run.data)).toContain('"triggeredBy":{"userId":"api-key:owner","username":"owner","via":"api-key"}');
  });

  it('answers FORBIDDEN (permission_denied, requiredRole) for a workflow the credential may not view', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('private'), canvas: CANVAS, nodes: [echoStep('A')] });
    await svc.enable(created.id);
    const triggered = await svc.trigger(created.id, {});
    const read = await asBob.call('get_run', { runId: triggered.body.runId });
    expect(read.ok).toBe(false);
    expect(read.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'permission_denied', requiredRole: 'viewer', runId: triggered.body.runId } });
    // The run was addressed alone: a caller without a role is not told its workflow.
    expect(JSON.stringify(read.error)).not.toContain(created.id);
  });

  it('ask_human with approvers: only the named person may answer; the tool returns who did', async () => {
    const created = await svc.createWorkflow({
      name: uniqueName('ask-approvers'),
      canvas: CANVAS,
      nodes: [{ id: 'agent', name: 'Agent', nodeType: 'step', executorKey: 'sleep', config: { ms: 60_000 } }],
    });
    await svc.enable(created.id);
    await svc.share(created.id, { operators: ['user:bob'], viewers: ['group:finance'] });
    const runId = (await svc.trigger(created.id, {})).body.runId as string;
    await svc.waitForRun(created.id, runId, { until: ['running'] });
    const asking = asBob.call('ask_human', { runId, nodeId: 'agent', prompt: 'Refund 500 EUR?', approvers: ['user:carol'], pollSeconds: 0.2 });

    let requestId = '';
    for (let i = 0; i < 500 && requestId === ''; i++) {
      const pending = (await svc.api.get(wf(`/${created.id}/runs/${runId}`))).body.pendingRequirements as Array<{ stepId: string; approvers: string[] | null }>;
      if (pending.length > 0) {
        expect(pending[0]!.approvers).toEqual(['user:carol']);
        requestId = pending[0]!.stepId;
      } else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const approve = (key: string) =>
      fetch(`${svc.baseUrl}${wf(`/${created.id}/runs/${runId}/approve`)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ stepId: requestId, resolution: 'user_input', userInput: { response: 'yes' } }),
      });
    const refused = await approve(bob.key);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: { error: string } }).detail.error).toBe('not_an_approver');
    expect((await approve(carol.key)).status).toBe(200);
    expect((await asking).data).toMatchObject({ status: 'answered', response: 'yes', answeredBy: 'carol', answeredByUser: { userId: 'carol', username: 'carol', via: 'api-key' } });
    await svc.api.post(wf(`/${created.id}/runs/${runId}/cancel`), {});
  });
});
