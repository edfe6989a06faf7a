/**
 * The bridge passes per-workflow access through (issue #18 item 8), against a stub API over real
 * HTTP: list_pending_approvals forwards `mine` as `?mine=true` and shows each gate's `approvers`
 * and `canDecide`; a 403 of the API, whatever the tool, is FORBIDDEN with the API's reason code
 * and details; get_run shows who decided each requirement and who started and cancelled the run.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bridgeInProcess, type BridgeClient } from '@switchyard/mcp-bridge/testing/bridge-clients';

const WORKFLOW_ID = 'bbbbbbbbbbbbbbbbbbbbbbbb';
const RUN_ID = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const HIDDEN_RUN_ID = 'cccccccccccccccccccccccc';
const ADA = { userId: 'u-ada', username: 'ada', via: 'api_key' };

const requirement = {
  stepId: 'ship',
  stepName: 'Ship',
  stepType: 'step',
  requiresConfirmation: true,
  requiresUserInput: false,
  requiresOutputReview: false,
  requiresRouteSelection: false,
  confirmationMessage: 'Ship it?',
  allowMultipleSelections: false,
  isPostExecution: false,
  retryCount: 0,
  maxRetries: null,
  timeoutAt: null,
  onTimeout: 'cancel',
  onReject: 'cancel',
};

const approvalRow = {
  runId: RUN_ID,
  workflowId: WORKFLOW_ID,
  workflowName: 'Release',
  runStatus: 'awaiting_approval',
  nodeId: 'ship',
  iterationPath: '',
  phase: 'pre',
  requestedAt: '2026-11-28T10:00:00.000Z',
  requirement,
  approvers: ['user:ada', 'group:release-managers'],
  canDecide: false,
};

const runDetail = {
  id: RUN_ID,
  workflowDefinitionId: WORKFLOW_ID,
  workflowName: 'Release',
  status: 'cancelled',
  triggerSource: 'api',
  triggeredBy: { userId: 'u-grace', username: 'grace', via: 'jwt' },
  cancelledBy: ADA,
  startedAt: '2026-11-28T10:00:00.000Z',
  finishedAt: '2026-11-28T10:05:00.000Z',
  parentRunId: null,
  errorSummary: null,
  runState: { runId: RUN_ID, state: 'cancelled', computedAt: '2026-11-28T10:06:00.000Z' },
  nodeRuns: [],
  nodeRunCount: 0,
  nodeStatusCounts: {},
  activeNodeIds: [],
  initialInput: {},
  finalOutput: null,
  pendingRequirements: [],
  requirements: [{ ...requirement, nodeId: 'ship', iterationPath: '', round: 0, requestedAt: '2026-11-28T10:00:00.000Z', resolution: 'confirm', decidedBy: 'human', decidedByUser: ADA, decidedAt: '2026-11-28T10:01:00.000Z' }],
};

/** The 403 bodies the API answers with (domain access.ts), by reason. */
const REFUSALS = {
  not_an_approver: { error: 'not_an_approver', message: "Only the gate's approvers may decide step 'ship'", details: { stepId: 'ship', approvers: approvalRow.approvers } },
  self_approval_forbidden: { error: 'self_approval_forbidden', message: "Step 'ship' needs a second person: whoever triggered the run may not decide its gates (allowSelfApproval: false)", details: { stepId: 'ship' } },
  permission_denied: { error: 'permission_denied', message: 'Caller lacks OPERATOR permission on the workflow', details: { requiredRole: 'operator', workflowId: WORKFLOW_ID } },
} as const;

let refusal: keyof typeof REFUSALS = 'not_an_approver';
/** The URLs (path and query) of the inbox reads the stub saw. */
let inboxReads: URL[] = [];

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function stubApi(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://stub');
  if (request.method === 'GET' && url.pathname === '/api/v1/approvals') {
    inboxReads.push(url);
    return send(response, 200, { approvals: [approvalRow], pagination: { page: 1, perPage: 100, total: 1, totalPages: 1 } });
  }
  if (request.method === 'GET' && url.pathname === `/api/v1/runs/${RUN_ID}`) return send(response, 200, runDetail);
  if (request.method === 'GET' && url.pathname === `/api/v1/runs/${HIDDEN_RUN_ID}`) return send(response, 403, { detail: REFUSALS.permission_denied });
  if (request.method === 'POST' && url.pathname === `/api/v1/workflows/${WORKFLOW_ID}/runs/${RUN_ID}/approve`) return send(response, 403, { detail: REFUSALS[refusal] });
  send(response, 404, { detail: { error: 'resource_not_found', message: 'Not Found', resource: 'route' } });
}

let server: Server;
let bridge: BridgeClient;
beforeAll(async () => {
  server = createServer(stubApi);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bridge = await bridgeInProcess(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await bridge?.close();
  await new Promise((resolve) => server?.close(resolve));
});
beforeEach(() => {
  inboxReads = [];
});

describe('list_pending_approvals', () => {
  it('forwards mine: true as ?mine=true, and leaves it out otherwise', async () => {
    expect((await bridge.call('list_pending_approvals', { mine: true })).ok).toBe(true);
    expect(inboxReads.map((url) => url.searchParams.get('mine'))).toEqual(['true']);
    inboxReads = [];
    await bridge.call('list_pending_approvals', { mine: false });
    await bridge.call('list_pending_approvals', {});
    expect(inboxReads.map((url) => url.searchParams.has('mine'))).toEqual([false, false]);
  });

  it("shows each gate's approvers and whether the caller may decide it", async () => {
    const listed = await bridge.call('list_pending_approvals', { mine: true });
    expect(listed.data.approvals).toEqual([expect.objectContaining({ stepId: 'ship', approvers: ['user:ada', 'group:release-managers'], canDecide: false })]);
  });
});

describe('403 from the API', () => {
  it.each(Object.keys(REFUSALS) as Array<keyof typeof REFUSALS>)('resolve_approval refused with %s is FORBIDDEN with the reason and its details', async (reason) => {
    refusal = reason;
    const refused = await bridge.call('resolve_approval', { runId: RUN_ID, stepId: 'ship', action: 'approve' });
    expect(refused.ok).toBe(false);
    expect(refused.error).toEqual({
      code: 'FORBIDDEN',
      message: `${REFUSALS[reason].message} (${reason})`,
      details: { status: 403, apiError: reason, reason, ...REFUSALS[reason].details },
    });
  });

  it('is FORBIDDEN for a read too (get_run of a workflow the caller may not view), naming the role it lacks', async () => {
    const refused = await bridge.call('get_run', { runId: HIDDEN_RUN_ID });
    expect(refused.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'permission_denied', requiredRole: 'operator', workflowId: WORKFLOW_ID } });
    expect(refused.error?.message).toContain('(permission_denied)');
  });
});

describe('get_run', () => {
  it('shows who decided each requirement, who started the run and who cancelled it', async () => {
    const run = await bridge.call('get_run', { runId: RUN_ID });
    expect(run.data.requirements).toEqual([expect.objectContaining({ stepId: 'ship', decidedBy: 'human', decidedByUser: ADA })]);
    expect(run.data.triggeredBy).toEqual({ userId: 'u-grace', username: 'grace', via: 'jwt' });
    expect(run.data.cancelledBy).toEqual(ADA);
  });
});
