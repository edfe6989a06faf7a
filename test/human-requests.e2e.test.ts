/**
 * Human requests over real HTTP (issue #8, the MCP bridge's `ask_human`): an agent executing a
 * step asks a person (POST .../human-requests), the request shows in the approvals inbox and the
 * run detail, a person answers it with /approve, and GET .../human-requests/{id} tells the agent
 * the outcome — answered, expired (timeout sweeper) or cancelled (the run ended). The run itself
 * never waits for it, but while it is open it is pending (issue #18 item 7): in the run detail's
 * `pendingRequirements`, and the runState of the (running) run is `waiting-approval` with
 * `blocked.requestId`, on every read surface. The service runs on a manual clock: a request
 * expires when the test moves time past its timeout.
 */
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, PROXY_HEADERS, echoStep, startService, uniqueName, wf, type ApiResponse, type TestService } from './support/service.ts';

let svc: TestService;
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  svc = await startService({ trustProxyIdentity: true, clock });
});
afterAll(async () => {
  await svc?.close();
});

const UNKNOWN_ID = '0123456789abcdef01234567';
const sleepStep = (name: string, ms: number) => ({ name, nodeType: 'step', executorKey: 'sleep', config: { ms } });
const runPath = (workflowId: string, runId: string, suffix = '') => wf(`/${workflowId}/runs/${runId}${suffix}`);
const requestPath = (workflowId: string, runId: string, requestId: string) => runPath(workflowId, runId, `/human-requests/${encodeURIComponent(requestId)}`);

interface Running {
  workflowId: string;
  runId: string;
  /** The id of the sleeping step (the "agent" that asks). */
  nodeId: string;
}

/** Starts a run whose step `Agent` sleeps `ms` and waits until that step executes (the run is `running`). */
async function runningAgent(ms = 60_000): Promise<Running> {
  const { workflowId, runId } = await svc.startRun({ name: uniqueName('ask'), canvas: CANVAS, nodes: [sleepStep('Agent', ms), echoStep('After')] });
  for (let i = 0; i < 500; i++) {
    const nodes = (await svc.api.get(runPath(workflowId, runId, '/nodes'))).body.nodeRuns as Array<{ nodeName: string; nodeId: string; status: string }>;
    const agent = nodes.find((n) => n.nodeName === 'Agent' && n.status === 'running');
    if (agent) return { workflowId, runId, nodeId: agent.nodeId };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('Agent never started');
}

/** Cancels the run (so that no 60 s sleep lingers) and waits until it is cancelled. */
async function cancel({ workflowId, runId }: Running): Promise<void> {
  await svc.api.post(runPath(workflowId, runId, '/cancel'), {});
  await svc.waitForRun(workflowId, runId);
}

function ask(run: Running, body: Record<string, unknown>): Promise<ApiResponse> {
  return svc.api.post(runPath(run.workflowId, run.runId, '/human-requests'), { nodeId: run.nodeId, ...body });
}

async function askOk(run: Running, body: Record<string, unknown>): Promise<any> {
  const created = await ask(run, body);
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function getRequest(run: Running, requestId: string): Promise<any> {
  const response = await svc.api.get(requestPath(run.workflowId, run.runId, requestId));
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** POST .../approve as the person `username` (identity header), or as the test client's proxy user. */
async function approve(run: Running, body: Record<string, unknown>, username?: string): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...PROXY_HEADERS };
  if (username) headers['x-switchyard-username'] = username;
  const response = await fetch(`${svc.baseUrl}${runPath(run.workflowId, run.runId, '/approve')}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, text, headers: response.headers };
}

/** The run as every read surface shows it: its detail (per workflow and global), and its row in both run lists. */
async function readSurfaces({ workflowId, runId }: Running): Promise<Record<'detail' | 'globalDetail' | 'row' | 'globalRow', any>> {
  const detail = await svc.api.get(runPath(workflowId, runId));
  const globalDetail = await svc.api.get(`/api/v1/runs/${runId}`);
  const list = await svc.api.get(wf(`/${workflowId}/runs`));
  const globalList = await svc.api.get(`/api/v1/runs?workflowId=${workflowId}`);
  for (const response of [detail, globalDetail, list, globalList]) expect(response.status, response.text).toBe(200);
  const rowOf = (body: any) => body.runs.find((row: any) => row.id === runId);
  return { detail: detail.body, globalDetail: globalDetail.body, row: rowOf(list.body), globalRow: rowOf(globalList.body) };
}

/** Every read surface shows the (running) run waiting on `request`, and its details list it as pending. */
async function expectWaitingOn(run: Running, request: { requestId: string; requestedAt: string }): Promise<void> {
  const surfaces = await readSurfaces(run);
  for (const [surface, view] of Object.entries(surfaces)) {
    expect(view.status, surface).toBe('running');
    expect(view.runState, surface).toMatchObject({
      state: 'waiting-approval',
      blocked: { kind: 'approval', nodeId: run.nodeId, requestId: request.requestId, requestedAt: request.requestedAt },
    });
  }
  for (const detail of [surfaces.detail, surfaces.globalDetail]) expect(detail.pendingRequirements.map((r: any) => r.stepId)).toEqual([request.requestId]);
}

/** No read surface shows the run waiting on a person any more, and its details list nothing pending. */
async function expectNotWaiting(run: Running, state: string): Promise<void> {
  const surfaces = await readSurfaces(run);
  for (const [surface, view] of Object.entries(surfaces)) {
    expect(view.runState.state, surface).toBe(state);
    expect(view.runState.blocked, surface).toBeUndefined();
  }
  for (const detail of [surfaces.detail, surfaces.globalDetail]) expect(detail.pendingRequirements).toEqual([]);
}

/** Moves the clock past the request's timeout and lets the timeout sweeper decide; the request as the agent then sees it. */
async function expire(run: Running, request: { requestId: string; timeoutAt: string }): Promise<any> {
  await clock.advance(Date.parse(request.timeoutAt) - clock.now().getTime() + 1);
  await svc.sweeper.sweep();
  return getRequest(run, request.requestId);
}

describe('POST .../human-requests and GET .../human-requests/{request_id}', () => {
  it('asks a free-text question that shows in the inbox and the run detail, is answered through /approve, and leaves the run alone', async () => {
    const run = await runningAgent();
    try {
      const created = await askOk(run, { prompt: 'Which region?', context: 'The customer is in the EU.', timeoutSeconds: 3600 });
      expect(created).toMatchObject({
        runId: run.runId,
        workflowId: run.workflowId,
        nodeId: run.nodeId,
        iterationPath: '',
        prompt: 'Which region?',
        context: 'The customer is in the EU.',
        choices: null,
        status: 'pending',
        decision: null,
        response: null,
        answeredBy: null,
        decidedAt: null,
      });
      expect(created.requestId).toMatch(new RegExp(`^${run.nodeId}:ask-[0-9a-f]{12}$`));
      expect(Date.parse(created.timeoutAt) - Date.parse(created.requestedAt)).toBe(3_600_000);
      expect(await getRequest(run, created.requestId)).toEqual(created);

      const inbox = await svc.api.get(`/api/v1/approvals?runId=${run.runId}`);
      expect(inbox.status).toBe(200);
      expect(inbox.body.approvals).toHaveLength(1);
      expect(inbox.body.approvals[0]).toMatchObject({
        runId: run.runId,
        runStatus: 'running',
        nodeId: run.nodeId,
        requestedAt: created.requestedAt,
        requirement: {
          stepId: created.requestId,
          stepName: 'Agent',
          requiresUserInput: true,
          requiresRouteSelection: false,
          userInputMessage: 'Which region?\n\nThe customer is in the EU.',
          userInputSchema: [{ name: 'response', fieldType: 'str', required: false }],
          timeoutAt: created.timeoutAt,
        },
      });

      await expectWaitingOn(run, created);
      const detail = (await svc.api.get(runPath(run.workflowId, run.runId))).body;
      expect(detail.pendingRequirements[0]).toMatchObject({ stepId: created.requestId, stepName: 'Agent', userInputMessage: 'Which region?\n\nThe customer is in the EU.' });
      expect(detail.requirements).toHaveLength(1);
      expect(detail.requirements[0]).toMatchObject({ stepId: created.requestId, nodeId: run.nodeId, iterationPath: '', decidedBy: null, resolution: null });

      const answered = await approve(run, { stepId: created.requestId, resolution: 'user_input', userInput: { response: 'eu-west-1' } }, 'ada');
      expect(answered.status, answered.text).toBe(200);
      expect(answered.body).toMatchObject({ runId: run.runId, status: 'running', resolvedStepId: created.requestId, message: 'Human request answered as user_input' });

      const after = await getRequest(run, created.requestId);
      expect(after).toMatchObject({ status: 'answered', decision: 'approved', response: 'eu-west-1', answeredBy: expect.objectContaining({ username: 'ada' }) });
      expect(after.decidedAt).not.toBeNull();
      await expectNotWaiting(run, 'running');

      const again = await approve(run, { stepId: created.requestId, resolution: 'confirm' });
      expect(again.status).toBe(409);
      expect((await svc.api.get(`/api/v1/approvals?runId=${run.runId}`)).body.approvals).toEqual([]);

      // The run was not woken: its step still sleeps, in its first attempt, and nothing resumed.
      const still = (await svc.api.get(runPath(run.workflowId, run.runId))).body;
      expect(still.status).toBe('running');
      expect(still.nodeRuns.map((n: any) => [n.nodeName, n.status, n.attempt])).toEqual([['Agent', 'running', 1]]);
      expect(still.requirements[0]).toMatchObject({ resolution: 'user_input', decidedBy: 'human', userInput: { response: 'eu-west-1' } });
      const events = await svc.events(run.runId);
      expect(events.map((e) => e.type)).toEqual(['run.started', 'node.started', 'requirement.raised', 'requirement.decided']);
      expect(events[2]?.payload).toEqual({ stepId: created.requestId, nodeId: run.nodeId, phase: 'ask', round: 0 });
      expect(events[3]?.payload).toMatchObject({ stepId: created.requestId, resolution: 'user_input', decidedBy: 'human' });

      // confirm answers without text; without identity headers the answerer is `api`.
      const second = await askOk(run, { prompt: 'Go ahead?' });
      expect(second.requestId).not.toBe(created.requestId);
      expect((await approve(run, { stepId: second.requestId, resolution: 'confirm' })).status).toBe(200);
      expect(await getRequest(run, second.requestId)).toMatchObject({ status: 'answered', decision: 'approved', response: null, answeredBy: expect.objectContaining({ userId: 'e2e-client' }), context: null, timeoutAt: null });
    } finally {
      await cancel(run);
    }
  });

  it('offers choices: one is picked with route_select; confirm and unknown choices are 400; reject blocks with its feedback', async () => {
    const run = await runningAgent();
    try {
      const created = await askOk(run, { prompt: 'Ship it?', choices: ['yes', 'no'] });
      expect(created.choices).toEqual(['yes', 'no']);
      const [gate] = (await svc.api.get(`/api/v1/approvals?runId=${run.runId}`)).body.approvals;
      expect(gate.requirement).toMatchObject({ requiresRouteSelection: true, requiresUserInput: false, availableChoices: ['yes', 'no'], allowMultipleSelections: false });

      for (const wrong of [
        { resolution: 'confirm' },
        { resolution: 'route_select', selectedChoices: ['maybe'] },
        { resolution: 'route_select', selectedChoices: ['yes', 'no'] },
        { resolution: 'user_input', userInput: { response: 'yes' } },
        { resolution: 'edit', editedOutput: 'yes' },
      ]) {
        const response = await approve(run, { stepId: created.requestId, ...wrong });
        expect(response.status, JSON.stringify(wrong)).toBe(400);
      }
      const picked = await approve(run, { stepId: created.requestId, resolution: 'route_select', selectedChoices: ['no'] }, 'grace');
      expect(picked.status, picked.text).toBe(200);
      expect(await getRequest(run, created.requestId)).toMatchObject({ status: 'answered', decision: 'approved', response: 'no', answeredBy: expect.objectContaining({ username: 'grace' }) });

      const refused = await askOk(run, { prompt: 'Delete the backups?', choices: ['all', 'old ones'] });
      expect((await approve(run, { stepId: refused.requestId, resolution: 'reject', feedback: 'never' }, 'grace')).status).toBe(200);
      expect(await getRequest(run, refused.requestId)).toMatchObject({ status: 'answered', decision: 'blocked', response: 'never', answeredBy: expect.objectContaining({ username: 'grace' }) });
      expect((await svc.api.get(runPath(run.workflowId, run.runId))).body.status).toBe('running'); // a rejection does not touch the run
    } finally {
      await cancel(run);
    }
  });

  it('expires a request nobody answered within its timeoutSeconds (the sweeper), and the run goes on', async () => {
    const run = await runningAgent();
    try {
      const created = await askOk(run, { prompt: 'Anyone there?', timeoutSeconds: 1 });
      await expectWaitingOn(run, created);
      const expired = await expire(run, created);
      expect(expired).toMatchObject({ status: 'expired', decision: 'blocked', response: null, answeredBy: null });
      expect(Date.parse(expired.decidedAt)).toBeGreaterThanOrEqual(Date.parse(created.timeoutAt));
      const late = await approve(run, { stepId: created.requestId, resolution: 'confirm' });
      expect(late.status).toBe(409);
      expect(late.body.detail.details).toMatchObject({ decidedBy: 'timeout', resolution: 'cancel' });
      await expectNotWaiting(run, 'running');
      const detail = (await svc.api.get(runPath(run.workflowId, run.runId))).body;
      expect(detail.status).toBe('running');
      expect(detail.nodeRuns.map((n: any) => [n.nodeName, n.status, n.attempt])).toEqual([['Agent', 'running', 1]]);
    } finally {
      await cancel(run);
    }
  });

  it('cancels the pending requests of a run that is cancelled, and refuses new ones (409)', async () => {
    const run = await runningAgent();
    const created = await askOk(run, { prompt: 'Proceed?' });
    await expectWaitingOn(run, created);
    await cancel(run);
    await expectNotWaiting(run, 'cancelled');
    expect(await getRequest(run, created.requestId)).toMatchObject({ status: 'cancelled', decision: 'blocked', response: null, answeredBy: null });
    const detail = (await svc.api.get(runPath(run.workflowId, run.runId))).body;
    expect(detail.requirements[0]).toMatchObject({ stepId: created.requestId, decidedBy: 'run_ended', resolution: 'cancel' });

    const refused = await ask(run, { prompt: 'Too late?' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatchObject({ error: 'conflict', details: { currentStatus: 'cancelled' } });
  });

  it('does not hold up a run that completes: an answered request stays answered, a pending one is cancelled', async () => {
    const run = await runningAgent(1_500);
    const answered = await askOk(run, { prompt: 'Name?' });
    const open = await askOk(run, { prompt: 'Age?' });
    expect((await approve(run, { stepId: answered.requestId, resolution: 'user_input', userInput: { response: 'Ada' } })).status).toBe(200);
    const done = await svc.waitForRun(run.workflowId, run.runId);
    expect(done.status).toBe('completed');
    expect(done.nodeRuns.map((n: any) => [n.nodeName, n.status, n.attempt])).toEqual([
      ['Agent', 'completed', 1],
      ['After', 'completed', 1],
    ]);
    expect(await getRequest(run, answered.requestId)).toMatchObject({ status: 'answered', response: 'Ada' });
    expect(await getRequest(run, open.requestId)).toMatchObject({ status: 'cancelled', decision: 'blocked' });
    // A full retry does not carry the requests over: they belong to the executor call that asked.
    const retry = await svc.api.post(runPath(run.workflowId, run.runId, '/retry'));
    expect(retry.status).toBe(202);
    const child = await svc.waitForRun(run.workflowId, retry.body.runId);
    expect(child.status).toBe('completed');
    expect(child.requirements).toEqual([]);
  });

  it('leaves a run parked at a gate parked when one of its requests is answered (no wake-up)', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('ask-parked'),
      canvas: CANVAS,
      nodes: [echoStep('Gated', {}, { humanReview: { requiresConfirmation: true } })],
    });
    const parked = await svc.waitForGate(workflowId, runId);
    const run: Running = { workflowId, runId, nodeId: parked.definitionSnapshot.nodes[0].id };
    const created = await askOk(run, { prompt: 'While you are here?' });
    const inbox = (await svc.api.get(`/api/v1/approvals?runId=${runId}`)).body.approvals;
    expect(inbox.map((a: any) => a.requirement.stepId)).toEqual([run.nodeId, created.requestId]);
    // Both wait on a person; the run is parked at its gate, which its runState names.
    const waiting = (await svc.api.get(runPath(workflowId, runId))).body;
    expect(waiting.pendingRequirements.map((r: any) => r.stepId)).toEqual([run.nodeId, created.requestId]);
    expect(waiting.runState).toMatchObject({ state: 'waiting-approval', blocked: { kind: 'approval', nodeId: run.nodeId } });
    expect(waiting.runState.blocked.requestId).toBeUndefined();
    expect((await approve(run, { stepId: created.requestId, resolution: 'confirm' })).status).toBe(200);
    // A wake-up would have been handed to the engine before the answer: once the engine is idle, it is over.
    await svc.engine.idle();
    const detail = (await svc.api.get(runPath(workflowId, runId))).body;
    expect(detail.status).toBe('awaiting_approval');
    expect(detail.pendingRequirements.map((r: any) => r.stepId)).toEqual([run.nodeId]);
    expect((await svc.events(runId)).map((e) => e.type)).not.toContain('run.resumed');

    expect((await approve(run, { stepId: run.nodeId, resolution: 'confirm' })).status).toBe(200);
    expect((await svc.waitForRun(workflowId, runId)).status).toBe('completed');
    expect(await getRequest(run, created.requestId)).toMatchObject({ status: 'answered', decision: 'approved' });
  });

  it('addresses a request inside loops by its iteration path (the request id holds it, URL-encoded)', async () => {
    const run = await runningAgent();
    try {
      const created = await askOk(run, { prompt: 'Iteration two?', iterationPath: '2/1' });
      expect(created.requestId).toMatch(new RegExp(`^${run.nodeId}@2/1:ask-[0-9a-f]{12}$`));
      expect(await getRequest(run, created.requestId)).toMatchObject({ iterationPath: '2/1', status: 'pending' });
      expect((await approve(run, { stepId: created.requestId, resolution: 'user_input', userInput: { response: 'ok' } })).status).toBe(200);
      expect(await getRequest(run, created.requestId)).toMatchObject({ status: 'answered', response: 'ok' });
    } finally {
      await cancel(run);
    }
  });

  it('answers 404 for an unknown node, run or request, and 400 for an invalid body', async () => {
    const run = await runningAgent();
    try {
      const unknownNode = await ask(run, { nodeId: 'no-such-node', prompt: 'Hello?' });
      expect(unknownNode.status).toBe(404);
      expect(unknownNode.body.detail).toMatchObject({ error: 'resource_not_found', resource: 'node', details: { nodeId: 'no-such-node' } });

      const unknownRun = await svc.api.post(runPath(run.workflowId, UNKNOWN_ID, '/human-requests'), { nodeId: run.nodeId, prompt: 'Hello?' });
      expect(unknownRun.status).toBe(404);
      expect(unknownRun.body.detail).toMatchObject({ resource: 'run' });

      const unknownRequest = await svc.api.get(requestPath(run.workflowId, run.runId, `${run.nodeId}:ask-000000000000`));
      expect(unknownRequest.status).toBe(404);
      expect(unknownRequest.body.detail).toMatchObject({ error: 'resource_not_found', resource: 'requirement', details: { requestId: `${run.nodeId}:ask-000000000000` } });
      expect((await svc.api.get(requestPath(run.workflowId, UNKNOWN_ID, 'x'))).body.detail).toMatchObject({ resource: 'run' });

      for (const invalid of [
        { prompt: undefined },
        { prompt: '' },
        { prompt: 'x'.repeat(4001) },
        { prompt: 'Hi', context: 'x'.repeat(20_001) },
        { prompt: 'Hi', choices: [] },
        { prompt: 'Hi', choices: Array.from({ length: 51 }, (_, i) => `c${i}`) },
        { prompt: 'Hi', choices: ['a', 'a'] },
        { prompt: 'Hi', timeoutSeconds: 0 },
        { prompt: 'Hi', timeoutSeconds: 604_801 },
        { prompt: 'Hi', iterationPath: 'two' },
        { prompt: 'Hi', nodeId: 'has space' },
      ]) {
        const response = await ask(run, invalid);
        expect(response.status, JSON.stringify(invalid).slice(0, 200)).toBe(400);
        expect(response.body.detail.error).toBe('invalid_request');
      }
      const noNode = await svc.api.post(runPath(run.workflowId, run.runId, '/human-requests'), { prompt: 'Hi' });
      expect(noNode.status).toBe(400);
      expect((await ask(run, { prompt: 'x'.repeat(4000), choices: Array.from({ length: 50 }, (_, i) => `c${i}`), timeoutSeconds: 604_800 })).status).toBe(201);
    } finally {
      await cancel(run);
    }
  });
});
