/**
 * The edges of per-workflow access (issue #18) a hostile caller would try: a run left behind by
 * its deleted workflow, a proxy that appends identity headers instead of replacing them, the
 * reserved `anonymous` id, and four-eyes behind a proxy that names callers by username only.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '@switchyard/api';
import { CANVAS, PROXY_HEADERS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';
import { call, jwtAuthConfig, signToken } from './support/jwt-callers.ts';

/** A raw request whose headers are sent as given: `[name, value]` pairs, repeated names kept. */
function rawGet(baseUrl: string, path: string, headers: Array<[string, string]>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const all: Array<[string, string]> = [['host', new URL(baseUrl).host], ...headers];
    const request = httpRequest(`${baseUrl}${path}`, { method: 'GET', headers: all.flat() }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('behind a trusted proxy', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ trustProxyIdentity: true });
  });
  afterAll(() => svc?.close());

  it('refuses an identity header sent twice (a proxy appending its X-Switchyard-Groups to the client\'s): 401, no group added', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('edges-groups'), canvas: CANVAS, nodes: [echoStep('A')] });
    await svc.share(created.id, { viewers: ['group:readers'] });
    const asReader = (groups: string[]) =>
      rawGet(svc.baseUrl, wf(`/${created.id}`), [
        ['x-switchyard-user-id', 'mallory'],
        ['x-switchyard-scopes', 'workflows-read'],
        ...groups.map((group): [string, string] => ['x-switchyard-groups', group]),
      ]);
    expect((await asReader(['readers'])).status).toBe(200);
    expect((await asReader([])).status).toBe(403);
    const appended = await asReader(['readers', 'staff']);
    expect(appended.status).toBe(401);
    expect(appended.body.detail).toMatchObject({ error: 'authentication_required', message: expect.stringContaining('x-switchyard-groups appears more than once') });
  });

  it('four-eyes holds for callers the proxy names by username only: the trigger may not decide, another person may', async () => {
    const created = await svc.createWorkflow({
      name: uniqueName('edges-username'),
      canvas: CANVAS,
      nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, allowSelfApproval: false } })],
    });
    await svc.enable(created.id);
    await svc.share(created.id, { operators: ['user:pat', 'user:sam'] });
    const as = (username: string) => ({ 'x-switchyard-username': username, 'x-switchyard-scopes': PROXY_HEADERS['x-switchyard-scopes']! });
    const triggered = await call(svc.baseUrl, 'POST', wf(`/${created.id}/runs`), null, {}, as('pat'));
    expect(triggered.status).toBe(202);
    const runId = triggered.body.runId as string;
    const gate = await svc.waitForGate(created.id, runId);
    expect(gate.triggeredBy).toEqual({ userId: 'pat', username: 'pat', via: 'proxy' });
    const stepId = gate.pendingRequirements[0].stepId as string;
    const byPat = await call(svc.baseUrl, 'POST', wf(`/${created.id}/runs/${runId}/approve`), null, { stepId, resolution: 'confirm' }, as('pat'));
    expect(byPat.status).toBe(403);
    expect(byPat.body.detail.error).toBe('self_approval_forbidden');
    expect((await call(svc.baseUrl, 'POST', wf(`/${created.id}/runs/${runId}/approve`), null, { stepId, resolution: 'confirm' }, as('sam'))).status).toBe(200);
  });
});

describe('with JWTs', () => {
  let svc: TestService;
  let admin: string;
  let viewer: string;
  beforeAll(async () => {
    svc = await startService({ edge: { authenticator: await Authenticator.create(jwtAuthConfig()) } });
    admin = await signToken('root', { scopes: ['workflows-read', 'workflows-write', 'workflows-control', 'workflows-admin'] });
    viewer = await signToken('vera');
  });
  afterAll(() => svc?.close());

  it("refuses a token whose sub is 'anonymous' (the owner of what was made without authentication)", async () => {
    const response = await call(svc.baseUrl, 'GET', wf(), await signToken('anonymous'));
    expect(response.status).toBe(401);
    expect(response.body.detail.message).toContain("'anonymous' is reserved");
  });

  it('a run whose workflow is gone is a 404 to everyone but an admin, whatever its gates name', async () => {
    const created = await call(svc.baseUrl, 'POST', wf(), admin, {
      name: uniqueName('edges-orphan'),
      canvas: CANVAS,
      nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, approvers: ['user:vera'] } })],
    });
    const workflowId = created.body.id as string;
    await call(svc.baseUrl, 'POST', wf(`/${workflowId}/toggle`), admin, { enabled: true });
    await call(svc.baseUrl, 'PUT', wf(`/${workflowId}/access`), admin, { owners: ['user:root'], viewers: ['user:vera'] });
    const runId = (await call(svc.baseUrl, 'POST', wf(`/${workflowId}/runs`), admin, {})).body.runId as string;
    let stepId = '';
    for (let i = 0; i < 500 && stepId === ''; i++) {
      const run = await call(svc.baseUrl, 'GET', `/api/v1/runs/${runId}`, viewer);
      stepId = run.body.pendingRequirements?.[0]?.stepId ?? '';
      if (stepId === '') await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(stepId).not.toBe('');

    // The definition goes, the run stays (a delete that raced a trigger, or one interrupted).
    await svc.repos.definitions.delete(workflowId);
    for (const [method, path, body] of [
      ['GET', `/api/v1/runs/${runId}`, undefined],
      ['GET', wf(`/${workflowId}/runs/${runId}`), undefined],
      ['GET', wf(`/${workflowId}/runs/${runId}/events`), undefined],
      ['POST', wf(`/${workflowId}/runs/${runId}/approve`), { stepId, resolution: 'confirm' }],
    ] as const) {
      const response = await call(svc.baseUrl, method, path, viewer, body);
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    expect((await call(svc.baseUrl, 'GET', `/api/v1/runs/${runId}`, admin)).status).toBe(200);
    expect((await svc.repos.runs.get(runId))!.pendingRequirements[0]!.decidedAt).toBeNull();
  });

  it('changing who decides a gate is an owner\'s decision: an editor may change the rest of the definition, not its approvers', async () => {
    const gated = (approvers: string[], message: string) => [
      { id: 'pay', name: 'Pay', nodeType: 'step', executorKey: 'echo', humanReview: { requiresConfirmation: true, confirmationMessage: message, approvers } },
    ];
    const created = await call(svc.baseUrl, 'POST', wf(), admin, { name: uniqueName('edges-approvers'), canvas: CANVAS, nodes: gated(['group:finance'], 'Pay?') });
    const workflowId = created.body.id as string;
    const editor = await signToken('eddie');
    await call(svc.baseUrl, 'PUT', wf(`/${workflowId}/access`), admin, { owners: ['user:root'], editors: ['user:eddie'] });

    const retitled = await call(svc.baseUrl, 'PUT', wf(`/${workflowId}`), editor, { nodes: gated(['group:finance'], 'Pay now?') });
    expect(retitled.status).toBe(200);
    const selfApproving = await call(svc.baseUrl, 'PUT', wf(`/${workflowId}`), editor, { nodes: gated(['user:eddie'], 'Pay now?') });
    expect(selfApproving.status).toBe(403);
    expect(selfApproving.body.detail).toMatchObject({ error: 'permission_denied', details: { requiredRole: 'owner', workflowId } });
    const stored = await call(svc.baseUrl, 'GET', wf(`/${workflowId}`), admin);
    expect(stored.body.nodes[0].humanReview.approvers).toEqual(['group:finance']);

    expect((await call(svc.baseUrl, 'PUT', wf(`/${workflowId}`), admin, { nodes: gated(['group:treasury'], 'Pay now?') })).status).toBe(200);
    const audit = await call(svc.baseUrl, 'GET', wf(`/${workflowId}/audit`), admin);
    expect(audit.body.entries[0]).toMatchObject({ type: 'workflow.updated', actor: { userId: 'root' }, payload: { fields: ['nodes', 'approvers'] } });
  });
});
