/**
 * The bridge's ask_human (issue #8): an agent working in a run step asks a person, the question
 * shows in the approvals inbox, a person answers through /approve (or it expires, or the run ends),
 * and the tool returns the answer. The step context comes from arguments or from the call's
 * `_meta`, as Switchyard's MCP executor sends it. While the tool waits, the request is pending on
 * the run (issue #18 item 7): in `pendingRequirements`, and in the runState (`waiting-approval`).
 */
import { describe, expect, it } from 'vitest';
import { ApiKeyVerifier, Authenticator, SCOPES, newApiKey } from '@switchyard/api';
import { bridgeOverStdio, type BridgeClient } from './support/bridge.ts';
import { useServiceAndBridge } from './support/bridge-hooks.ts';
import { CANVAS, uniqueName, wf, type TestService } from './support/service.ts';

// With API keys: the bridge (an agent's service account) asks, and grace answers with her own key,
// so `answeredBy` is grace from her credential.
const agentKey = newApiKey('agent', SCOPES);
const graceKey = newApiKey('grace', SCOPES);
const authenticator = Authenticator.withKeys(new ApiKeyVerifier({ keys: [agentKey.entry, graceKey.entry] }));

let svc: TestService;
let bridge: BridgeClient;
useServiceAndBridge((service, client) => ([svc, bridge] = [service, client]), ['--api-token', agentKey.key], {
  edge: { authenticator },
  apiHeaders: { authorization: `Bearer ${agentKey.key}` },
});

/** A run busy in a long step `agent` (so it stays running while the agent asks). */
async function busyRun(): Promise<{ workflowId: string; runId: string }> {
  const started = await svc.startRun({ name: uniqueName('ask'), canvas: CANVAS, nodes: [{ id: 'agent', name: 'Agent', nodeType: 'step', executorKey: 'sleep', config: { ms: 60_000 } }] });
  for (let i = 0; i < 200; i++) {
    const run = (await svc.api.get(wf(`/${started.workflowId}/runs/${started.runId}`))).body;
    if (run.nodeRuns.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return started;
}

/** Waits until the run has an undecided ask request; returns its stepId. */
async function pendingRequest(runId: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const inbox = (await svc.api.get(`/api/v1/approvals?runId=${runId}`)).body.approvals as any[];
    if (inbox.length > 0) return inbox[0].requirement.stepId;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the request never reached the inbox');
}

describe('ask_human', () => {
  it('asks with explicit runId/nodeId, appears in the inbox, and returns the answer a person gave', async () => {
    const { workflowId, runId } = await busyRun();
    const asking = bridge.call('ask_human', { runId, nodeId: 'agent', prompt: 'Deploy to production?', context: 'all checks green', pollSeconds: 0.2 });
    const stepId = await pendingRequest(runId);
    const listed = await bridge.call('list_pending_approvals', { runId });
    if (listed.ok) expect(JSON.stringify(listed.data)).toContain(stepId);
    const answer = await fetch(`${svc.baseUrl}${wf(`/${workflowId}/runs/${runId}/approve`)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${graceKey.key}` },
      body: JSON.stringify({ stepId, resolution: 'user_input', userInput: { response: 'yes, after 5pm' } }),
    });
    expect(answer.status).toBe(200);
    const result = await asking;
    expect(result.data).toEqual({ requestId: stepId, runId, nodeId: 'agent', iteration: '', status: 'answered', decision: 'approved', response: 'yes, after 5pm', answeredBy: 'grace', answeredByUser: { userId: 'api-key:grace', username: 'grace', via: 'api-key' } });
    // The run went on executing all along.
    expect((await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body.status).toBe('running');
    await svc.api.post(wf(`/${workflowId}/runs/${runId}/cancel`));
  });

  it('over stdio: is pending while it waits (run detail, runState waiting-approval with the requestId), /approve answers it, the tool returns the answer', async () => {
    const stdio = await bridgeOverStdio(svc.baseUrl, ['--api-token', agentKey.key]);
    const { workflowId, runId } = await busyRun();
    const asking = stdio.call('ask_human', { runId, nodeId: 'agent', prompt: 'Roll back?', pollSeconds: 0.2 }).finally(() => stdio.close());
    const stepId = await pendingRequest(runId);
    for (const path of [wf(`/${workflowId}/runs/${runId}`), `/api/v1/runs/${runId}`]) {
      const detail = (await svc.api.get(path)).body;
      expect(detail.status, path).toBe('running');
      expect(detail.pendingRequirements.map((r: any) => r.stepId), path).toEqual([stepId]);
      expect(detail.runState, path).toMatchObject({ state: 'waiting-approval', blocked: { kind: 'approval', nodeId: 'agent', requestId: stepId } });
    }
    const row = (await svc.api.get(wf(`/${workflowId}/runs`))).body.runs.find((r: any) => r.id === runId);
    expect(row.runState.blocked).toMatchObject({ requestId: stepId });
    // The bridge's reads say the same: get_run, and explain_run names the request and how to answer it.
    const seen = await bridge.call('get_run', { runId });
    expect(seen.data.run.runState).toMatchObject({ state: 'waiting-approval', blocked: { requestId: stepId } });
    expect(seen.data.pendingRequirements.map((r: any) => r.stepId)).toEqual([stepId]);
    const explained = await bridge.call('explain_run', { runId });
    expect(explained.data.diagnosis).toMatchObject({ state: 'waiting-approval', currentNodeId: 'agent', blockers: [{ kind: 'approval', nodeId: 'agent', stepId }] });
    const answer = await fetch(`${svc.baseUrl}${wf(`/${workflowId}/runs/${runId}/approve`)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${graceKey.key}` },
      body: JSON.stringify({ stepId, resolution: 'confirm' }),
    });
    expect(answer.status).toBe(200);
    expect((await asking).data).toMatchObject({ requestId: stepId, status: 'answered', decision: 'approved', answeredBy: 'grace' });
    const after = (await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body;
    expect(after.pendingRequirements).toEqual([]);
    expect(after.runState.state).toBe('running');
    await svc.api.post(wf(`/${workflowId}/runs/${runId}/cancel`));
  });

  it('takes the step from the call _meta (as Switchyard calls it), and a rejection is blocked with the feedback', async () => {
    const { workflowId, runId } = await busyRun();
    const asking = bridge.client.callTool({
      name: 'ask_human',
      arguments: { prompt: 'Which region?', choices: ['eu', 'us'], pollSeconds: 0.2 },
      _meta: { 'io.switchyard/run-id': runId, 'io.switchyard/node-id': 'agent', 'io.switchyard/iteration-path': '' },
    });
    const stepId = await pendingRequest(runId);
    await svc.approve(workflowId, runId, { stepId, resolution: 'reject', feedback: 'neither, ask again tomorrow' });
    const result = (await asking) as any;
    expect(result.structuredContent).toMatchObject({ ok: true, data: { runId, nodeId: 'agent', status: 'answered', decision: 'blocked', response: 'neither, ask again tomorrow' } });
    await svc.api.post(wf(`/${workflowId}/runs/${runId}/cancel`));
  });

  it('returns cancelled when the run ends first, and expired after timeoutSeconds', async () => {
    const { workflowId, runId } = await busyRun();
    const asking = bridge.call('ask_human', { runId, nodeId: 'agent', prompt: 'Still there?', pollSeconds: 0.2 });
    await pendingRequest(runId);
    await svc.api.post(wf(`/${workflowId}/runs/${runId}/cancel`));
    expect((await asking).data).toMatchObject({ status: 'cancelled', decision: 'blocked', response: null });

    const second = await busyRun();
    const expiring = await bridge.call('ask_human', { runId: second.runId, nodeId: 'agent', prompt: 'Quick!', timeoutSeconds: 1, pollSeconds: 0.2 });
    expect(expiring.data).toMatchObject({ status: 'expired', decision: 'blocked' });
    await svc.api.post(wf(`/${second.workflowId}/runs/${second.runId}/cancel`));
  });

  it('errors: no step to attach to, unknown run, unknown node', async () => {
    const none = await bridge.call('ask_human', { prompt: 'hello?' });
    expect(none.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['runId', 'nodeId'] } });
    const unknownRun = await bridge.call('ask_human', { runId: '0123456789abcdef01234567', nodeId: 'agent', prompt: 'hello?' });
    expect(unknownRun.error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    const { workflowId, runId } = await busyRun();
    const unknownNode = await bridge.call('ask_human', { runId, nodeId: 'ghost', prompt: 'hello?' });
    expect(unknownNode.error).toMatchObject({ code: 'NODE_NOT_FOUND' });
    await svc.api.post(wf(`/${workflowId}/runs/${runId}/cancel`));
    const tools = await bridge.tools();
    expect(tools.get('ask_human').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
  });
});
