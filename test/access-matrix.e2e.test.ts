/**
 * The access matrix of issue #18 ("Done when", first bullet; docs/guide/access-control.md), through
 * the real app over HTTP with HS256 JWTs: every operation of the OpenAPI document × every role
 * (no access, viewer, operator, editor, owner, admin) is allowed or answers 403 `permission_denied`
 * `{ requiredRole, workflowId }`, as the route declares; lists, counts and pages (workflows,
 * `/api/v1/runs`, `/api/v1/approvals`, children, events, SSE) never reveal a workflow or run the
 * caller may not view; the access list itself (GET/PUT …/access, its audit trail); and the default
 * access of workflows stored before access existed.
 *
 * Callers: alice and bob in group `sales`, carol and dave in group `finance`, erin in no group, and
 * `root` with the `workflows-admin` scope. Everyone holds the read, write and control scopes, so only
 * roles decide. On workflow W: alice owns it (its creator, `user:alice`), carol is an editor
 * (`user:carol`; also an operator through finance: the highest role counts), dave an operator
 * (`group:finance`), bob a viewer (`group:sales`), erin has nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, loadConfig, renderOpenApi } from '@switchyard/api';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';
import { USER_SCOPES, call, jwtAuthConfig, signToken, type CallResult } from './support/jwt-callers.ts';

type Who = 'none' | 'viewer' | 'operator' | 'editor' | 'owner' | 'admin';
type Role = 'viewer' | 'operator' | 'editor' | 'owner';

/** The identities of the matrix, weakest first. */
const WHO: readonly Who[] = ['none', 'viewer', 'operator', 'editor', 'owner', 'admin'];
const RANK: Record<Who, number> = { none: 0, viewer: 1, operator: 2, editor: 3, owner: 4, admin: 5 };
/** Who plays which part on W. */
const USER_OF: Record<Who, string> = { none: 'erin', viewer: 'bob', operator: 'dave', editor: 'carol', owner: 'alice', admin: 'root' };

const ROOT = '/api/v1';
const W_ACCESS = { owners: ['user:alice'], editors: ['user:carol'], operators: ['group:finance'], viewers: ['group:sales'] };
const ID_PATTERN = /^[0-9a-f]{24}$/;

let svc: TestService;
const tokens = {} as Record<Who, string>;
/** A token for a user in group `admins` without the admin scope (the legacy default's owner). */
let adminsGroupToken: string;

const as = (who: Who, method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(svc.baseUrl, method, path, tokens[who], body, headers);

function show(response: CallResult): string {
  return `${response.status} ${JSON.stringify(response.body).slice(0, 600)}`;
}

/**
 * Asserts the 403 of a caller lacking `requiredRole` on `workflowId`. A run addressed alone
 * (`/api/v1/runs/{run_id}`, `path`) names the run, never its workflow: a caller without a role is
 * not told which workflow it belongs to.
 */
function expectRoleDenied(response: CallResult, requiredRole: Role, workflowId: string, label: string, path = ''): void {
  expect(response.status, `${label}: ${show(response)}`).toBe(403);
  const runAlone = new RegExp(`^${ROOT}/runs/([0-9a-f]{24})$`).exec(path);
  if (runAlone) {
    expect(response.body.detail.details, label).toEqual({ requiredRole, runId: runAlone[1] });
    expect(JSON.stringify(response.body), label).not.toContain(workflowId);
  } else {
    expect(response.body.detail, label).toMatchObject({ error: 'permission_denied', details: { requiredRole, workflowId } });
  }
  expect(response.body.detail.message, label).toBe(`Caller lacks ${requiredRole.toUpperCase()} permission on the workflow`);
}

/** A gate (confirmation) then one more step: runs park at the gate. */
function gatedNodes(): unknown[] {
  return [echoStep('Gate', { v: 1 }, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Go?' } }), echoStep('After', { v: 2 })];
}

/** Creates (as `who`), enables and gives `access` to a gated workflow; returns its id and Gate node id. */
async function gatedWorkflow(who: Who, access: Record<string, string[]> | null, prefix = 'matrix'): Promise<{ id: string; gateNodeId: string; name: string }> {
  const name = uniqueName(prefix);
  const created = await as(who, 'POST', wf(), { name, canvas: CANVAS, nodes: gatedNodes() });
  expect(created.status, show(created)).toBe(201);
  const id = created.body.id as string;
  const enabled = await as(who, 'POST', wf(`/${id}/toggle`), { enabled: true });
  expect(enabled.status, show(enabled)).toBe(200);
  if (access !== null) {
    const put = await as(who, 'PUT', wf(`/${id}/access`), access);
    expect(put.status, show(put)).toBe(200);
  }
  const gate = (created.body.nodes as Array<{ id: string; name: string }>).find((node) => node.name === 'Gate');
  return { id, gateNodeId: gate!.id, name };
}

/** Triggers a run of `workflowId` as `who`; returns its id. */
async function trigger(workflowId: string, who: Who = 'owner'): Promise<string> {
  const response = await as(who, 'POST', wf(`/${workflowId}/runs`), {});
  expect(response.status, show(response)).toBe(202);
  return response.body.runId as string;
}

/** Polls the run detail (as the admin) until `until` holds; bounded. */
async function waitRun(workflowId: string, runId: string, until: (run: any) => boolean, timeoutMs = 10_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await as('admin', 'GET', wf(`/${workflowId}/runs/${runId}`));
    expect(response.status, show(response)).toBe(200);
    if (until(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not reach the expected state; last ${show(response)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const parked = (run: any) => run.status === 'awaiting_approval' && run.pendingRequirements.length > 0;
const ended = (run: any) => ['completed', 'failed', 'cancelled'].includes(run.status);

/** A run of `workflowId` parked at its gate; returns its id and the gate's stepId. */
async function parkedRun(workflowId: string, who: Who = 'owner'): Promise<{ runId: string; stepId: string }> {
  const runId = await trigger(workflowId, who);
  const run = await waitRun(workflowId, runId, parked);
  return { runId, stepId: run.pendingRequirements[0].stepId as string };
}

/** A run of `workflowId` that completed (its gate confirmed by `who`). */
async function completedRun(workflowId: string, who: Who = 'owner'): Promise<string> {
  const { runId, stepId } = await parkedRun(workflowId, who);
  const approved = await as(who, 'POST', wf(`/${workflowId}/runs/${runId}/approve`), { stepId, resolution: 'confirm' });
  expect(approved.status, show(approved)).toBe(200);
  const run = await waitRun(workflowId, runId, ended);
  expect(run.status).toBe('completed');
  return runId;
}

/** A cancelled run of `workflowId`. */
async function cancelledRun(workflowId: string): Promise<string> {
  const runId = await trigger(workflowId);
  const cancelled = await as('owner', 'POST', wf(`/${workflowId}/runs/${runId}/cancel`), {});
  expect(cancelled.status, show(cancelled)).toBe(200);
  await waitRun(workflowId, runId, ended);
  return runId;
}

/**
 * GET `path` as an event stream: the status, the JSON body of a refusal, and the stream closed
 * at once when it opened (200).
 */
async function openStream(who: Who, path: string): Promise<CallResult> {
  const controller = new AbortController();
  const response = await fetch(`${svc.baseUrl}${path}`, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${tokens[who]}` },
    signal: controller.signal,
  });
  if (response.status === 200) {
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    controller.abort();
    return { status: 200, body: null, headers: response.headers };
  }
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text), headers: response.headers };
}

/** Every page of a list with `perPage`, as `who`: the rows of `key` and each page's `pagination.total`. */
async function allPages(who: Who, path: string, key: string, perPage: number): Promise<{ rows: any[]; totals: number[] }> {
  const rows: any[] = [];
  const totals: number[] = [];
  const separator = path.includes('?') ? '&' : '?';
  for (let page = 1; page <= 200; page++) {
    const response = await as(who, 'GET', `${path}${separator}page=${page}&perPage=${perPage}`);
    expect(response.status, `${who} ${path} page ${page}: ${show(response)}`).toBe(200);
    totals.push(response.body.pagination.total);
    rows.push(...response.body[key]);
    if (response.body[key].length < perPage) break;
  }
  return { rows, totals };
}

// --- Fixtures shared by the matrix -------------------------------------------------------------

/** Workflow W and its runs. */
const W = { id: '', gateNodeId: '', name: '' };
/** W's run parked at its gate (read-only operations, human requests). */
let wParked = { runId: '', stepId: '' };
/** W's run parked at its gate for pause and resume. */
let wPausable = '';
/** A completed run of W (retry, replay, rerun, node runs, events). */
let wCompleted = '';
/** A node run of {@link wCompleted}. */
let wNodeRunId = '';
/** A human request asked on {@link wParked}. */
let wRequestId = '';
/** A schedule of W (paused: only the matrix's requests fire it). */
let wScheduleId = '';

/** Creates a paused hourly schedule of W as the owner; returns its id. */
async function newSchedule(): Promise<string> {
  const created = await as('owner', 'POST', wf(`/${W.id}/schedules`), { name: uniqueName('matrix-schedule'), intervalSeconds: 3600, paused: true });
  expect(created.status, show(created)).toBe(201);
  return created.body.id as string;
}
const schedule = (suffix = '') => wf(`/${W.id}/schedules/${wScheduleId}${suffix}`);

/** The run each caller tried to cancel, and the run whose gate it tried to decide (matrix rows cancel and approve). */
const cancelledBy = {} as Record<Who, string>;
const decidedBy = {} as Record<Who, string>;

/** One request of the matrix. */
interface MatrixRequest {
  method: string;
  path: string;
  body?: unknown;
  /** As an event stream ({@link openStream}). */
  stream?: boolean;
  /** The workflow it addresses, when not W. */
  workflowId?: string;
}

/**
 * One operation of the OpenAPI document:
 * - `need`: the role on the addressed workflow it needs; `'any'`: not workflow-scoped (every
 *   caller with the scope; lists are filtered, checked below); `'admin'`: the `workflows-admin` scope;
 *   `'events-write'`: that scope, which no caller of the matrix has (events: test/event-triggers.e2e.test.ts);
 * - `deniedAs`: the role a refused caller is told it lacks (default `need`);
 * - `request`: the request `who` makes (fresh resources where the operation consumes them);
 * - `ok`: the statuses of an allowed caller.
 */
interface MatrixRow {
  need: Role | 'any' | 'admin' | 'events-write';
  deniedAs?: (who: Who) => Role;
  request: (who: Who) => Promise<MatrixRequest>;
  ok: number[];
}

const runOf = (suffix = '') => wf(`/${W.id}/runs/${wParked.runId}${suffix}`);
const completed = (suffix = '') => wf(`/${W.id}/runs/${wCompleted}${suffix}`);
const fixed = (method: string, path: () => string, body?: () => unknown) => async (): Promise<MatrixRequest> => ({ method, path: path(), body: body?.() });

const MATRIX: Record<string, MatrixRow> = {
  'GET /api/v1/workflows': { need: 'any', request: fixed('GET', () => wf()), ok: [200] },
  'POST /api/v1/workflows': {
    need: 'any',
    request: async () => ({ method: 'POST', path: wf(), body: { name: uniqueName('matrix-created'), canvas: CANVAS, nodes: [echoStep('A')] } }),
    ok: [201],
  },
  'GET /api/v1/workflows/{workflow_id}': { need: 'viewer', request: fixed('GET', () => wf(`/${W.id}`)), ok: [200] },
  'PUT /api/v1/workflows/{workflow_id}': {
    need: 'editor',
    request: async (who) => ({ method: 'PUT', path: wf(`/${W.id}`), body: { description: `edited by ${who}` } }),
    ok: [200],
  },
  'DELETE /api/v1/workflows/{workflow_id}': {
    need: 'editor',
    // Each caller deletes a workflow of its own, shared as W is.
    request: async () => {
      const { id } = await gatedWorkflow('owner', W_ACCESS, 'matrix-delete');
      return { method: 'DELETE', path: wf(`/${id}`), workflowId: id };
    },
    ok: [204],
  },
  'POST /api/v1/workflows/validate': {
    need: 'any',
    request: fixed('POST', () => wf('/validate'), () => ({ name: 'x', canvas: CANVAS, nodes: [echoStep('A')] })),
    ok: [200],
  },
  'POST /api/v1/workflows/{workflow_id}/toggle': { need: 'editor', request: fixed('POST', () => wf(`/${W.id}/toggle`), () => ({ enabled: true })), ok: [200] },
  'GET /api/v1/workflows/{workflow_id}/access': { need: 'viewer', request: fixed('GET', () => wf(`/${W.id}/access`)), ok: [200] },
  'PUT /api/v1/workflows/{workflow_id}/access': { need: 'owner', request: fixed('PUT', () => wf(`/${W.id}/access`), () => W_ACCESS), ok: [200] },
  'POST /api/v1/workflows/{workflow_id}/runs': { need: 'operator', request: fixed('POST', () => wf(`/${W.id}/runs`), () => ({})), ok: [202] },
  'GET /api/v1/workflows/{workflow_id}/runs': { need: 'viewer', request: fixed('GET', () => wf(`/${W.id}/runs`)), ok: [200] },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}': { need: 'viewer', request: fixed('GET', () => runOf()), ok: [200] },
  'DELETE /api/v1/workflows/{workflow_id}/runs/{run_id}': {
    need: 'editor',
    // Each caller deletes an ended run of its own.
    request: async () => ({ method: 'DELETE', path: wf(`/${W.id}/runs/${await cancelledRun(W.id)}`) }),
    ok: [204],
  },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/children': { need: 'viewer', request: fixed('GET', () => completed('/children')), ok: [200] },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/retry': { need: 'operator', request: fixed('POST', () => completed('/retry'), () => ({})), ok: [202] },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/replay': { need: 'operator', request: fixed('POST', () => completed('/replay')), ok: [202] },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes/{node_id}/rerun': {
    need: 'operator',
    request: fixed('POST', () => completed(`/nodes/${W.gateNodeId}/rerun`), () => ({})),
    ok: [202],
  },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes': { need: 'viewer', request: fixed('GET', () => completed('/nodes')), ok: [200] },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes/{node_run_id}': { need: 'viewer', request: fixed('GET', () => completed(`/nodes/${wNodeRunId}`)), ok: [200] },
  // Pause then resume the same parked run: a second pause or resume may be a no-op (200) or a state conflict (409).
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/pause': { need: 'operator', request: fixed('POST', () => wf(`/${W.id}/runs/${wPausable}/pause`), () => ({})), ok: [200, 409] },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/resume': { need: 'operator', request: fixed('POST', () => wf(`/${W.id}/runs/${wPausable}/resume`), () => ({})), ok: [200, 409] },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/cancel': {
    need: 'operator',
    // Each caller cancels a run of its own.
    request: async (who) => {
      const runId = (cancelledBy[who] = await trigger(W.id));
      return { method: 'POST', path: wf(`/${W.id}/runs/${runId}/cancel`), body: { reason: 'matrix' } };
    },
    ok: [200],
  },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/approve': {
    // The route admits viewers (a gate may name them as approvers); W's gate names none, so operators decide.
    need: 'operator',
    deniedAs: (who) => (who === 'none' ? 'viewer' : 'operator'),
    request: async (who) => {
      const { runId, stepId } = await parkedRun(W.id);
      decidedBy[who] = runId;
      return { method: 'POST', path: wf(`/${W.id}/runs/${runId}/approve`), body: { stepId, resolution: 'confirm' } };
    },
    ok: [200],
  },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/human-requests': {
    need: 'operator',
    request: async (who) => ({ method: 'POST', path: runOf('/human-requests'), body: { nodeId: W.gateNodeId, prompt: `asked by ${who}` } }),
    ok: [201],
  },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/human-requests/{request_id}': {
    need: 'viewer',
    request: fixed('GET', () => runOf(`/human-requests/${encodeURIComponent(wRequestId)}`)),
    ok: [200],
  },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/events': { need: 'viewer', request: fixed('GET', () => completed('/events')), ok: [200] },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/events/stream': {
    need: 'viewer',
    // A parked run: the stream stays open until the client closes it.
    request: async () => ({ method: 'GET', path: runOf('/events/stream'), stream: true }),
    ok: [200],
  },
  'GET /api/v1/runs': { need: 'any', request: fixed('GET', () => `${ROOT}/runs`), ok: [200] },
  'GET /api/v1/runs/{run_id}': { need: 'viewer', request: fixed('GET', () => `${ROOT}/runs/${wParked.runId}`), ok: [200] },
  'GET /api/v1/approvals': { need: 'any', request: fixed('GET', () => `${ROOT}/approvals`), ok: [200] },
  'GET /api/v1/executors': { need: 'any', request: fixed('GET', () => `${ROOT}/executors`), ok: [200] },
  'GET /api/v1/workflows/{workflow_id}/audit': { need: 'viewer', request: fixed('GET', () => wf(`/${W.id}/audit`)), ok: [200] },
  'GET /api/v1/audit': { need: 'admin', request: fixed('GET', () => `${ROOT}/audit?workflowId=${W.id}`), ok: [200] },
  'GET /api/v1/schedules': { need: 'any', request: fixed('GET', () => `${ROOT}/schedules`), ok: [200] },
  'GET /api/v1/workflows/{workflow_id}/schedules': { need: 'viewer', request: fixed('GET', () => wf(`/${W.id}/schedules`)), ok: [200] },
  'POST /api/v1/workflows/{workflow_id}/schedules': {
    need: 'editor',
    request: async (who) => ({ method: 'POST', path: wf(`/${W.id}/schedules`), body: { name: `made by ${who}`, intervalSeconds: 3600, paused: true } }),
    ok: [201],
  },
  'GET /api/v1/workflows/{workflow_id}/schedules/{schedule_id}': { need: 'viewer', request: fixed('GET', () => schedule()), ok: [200] },
  'PUT /api/v1/workflows/{workflow_id}/schedules/{schedule_id}': { need: 'editor', request: async (who) => ({ method: 'PUT', path: schedule(), body: { note: `edited by ${who}` } }), ok: [200] },
  'DELETE /api/v1/workflows/{workflow_id}/schedules/{schedule_id}': {
    need: 'editor',
    // Each caller deletes a schedule of its own.
    request: async () => ({ method: 'DELETE', path: wf(`/${W.id}/schedules/${await newSchedule()}`) }),
    ok: [204],
  },
  'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/trigger': { need: 'operator', request: fixed('POST', () => schedule('/trigger')), ok: [200] },
  'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/pause': { need: 'operator', request: fixed('POST', () => schedule('/pause'), () => ({ note: 'matrix' })), ok: [200] },
  'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/resume': { need: 'operator', request: fixed('POST', () => schedule('/resume'), () => ({})), ok: [200] },
  'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/backfill': {
    need: 'operator',
    request: fixed('POST', () => schedule('/backfill'), () => ({ startAt: '2025-01-01T00:00:00Z', endAt: '2025-01-01T01:00:00Z' })),
    ok: [200],
  },
  'POST /api/v1/events': { need: 'events-write', request: fixed('POST', () => `${ROOT}/events`, () => ({ name: 'matrix.event', data: {} })), ok: [202] },
  'GET /api/v1/events': { need: 'any', request: fixed('GET', () => `${ROOT}/events`), ok: [200] },
  'GET /api/v1/events/{event_id}': { need: 'any', request: fixed('GET', () => `${ROOT}/events/0123456789abcdef01234567`), ok: [404] },
  // The public probes (routes/health.ts): every caller, as without a credential.
  'GET /livez': { need: 'any', request: fixed('GET', () => '/livez'), ok: [200] },
  'GET /healthz': { need: 'any', request: fixed('GET', () => '/healthz'), ok: [200] },
  'GET /readyz': { need: 'any', request: fixed('GET', () => '/readyz'), ok: [200] },
};

/** The operations of the OpenAPI document, as `METHOD /path/{param}`. */
async function documentedOperations(): Promise<string[]> {
  const document = JSON.parse(await renderOpenApi()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
}

beforeAll(async () => {
  svc = await startService({ edge: { authenticator: await Authenticator.create(jwtAuthConfig()) } });
  const groups: Record<string, string[] | undefined> = { alice: ['sales'], bob: ['sales'], carol: ['finance'], dave: ['finance'], erin: undefined };
  for (const who of WHO) {
    const user = USER_OF[who];
    tokens[who] = await signToken(user, who === 'admin' ? { scopes: [...USER_SCOPES, 'workflows-admin'] } : { groups: groups[user] });
  }
  adminsGroupToken = await signToken('grace', { groups: ['admins'] });

  Object.assign(W, await gatedWorkflow('owner', W_ACCESS));
  wParked = await parkedRun(W.id);
  wPausable = (await parkedRun(W.id)).runId;
  wCompleted = await completedRun(W.id);
  const nodes = await as('owner', 'GET', completed('/nodes'));
  expect(nodes.status, show(nodes)).toBe(200);
  wNodeRunId = nodes.body.nodeRuns[0].id;
  const asked = await as('owner', 'POST', runOf('/human-requests'), { nodeId: W.gateNodeId, prompt: 'Which region?' });
  expect(asked.status, show(asked)).toBe(201);
  wRequestId = asked.body.requestId;
  wScheduleId = await newSchedule();
}, 30_000);

afterAll(() => svc?.close());

describe('every operation × every role', () => {
  it('the matrix has a row for every operation of the OpenAPI document, and none for an operation that does not exist', async () => {
    const operations = await documentedOperations();
    expect(operations.length).toBeGreaterThan(30);
    expect(operations.filter((operation) => !(operation in MATRIX)), 'operations without a row in MATRIX').toEqual([]);
    expect(Object.keys(MATRIX).filter((operation) => !operations.includes(operation)), 'rows of MATRIX for no operation').toEqual([]);
  });

  it('the roles on W are the ones the matrix assumes (user and group principals, highest role wins)', async () => {
    const expected: Record<Who, string | null> = { none: null, viewer: 'viewer', operator: 'operator', editor: 'editor', owner: 'owner', admin: 'owner' };
    for (const who of WHO) {
      const response = await as(who, 'GET', wf(`/${W.id}/access`));
      if (who === 'none') expectRoleDenied(response, 'viewer', W.id, 'erin reads access');
      else expect(response.body, who).toEqual({ workflowId: W.id, access: W_ACCESS, callerRole: expected[who] });
    }
  });

  for (const [operation, row] of Object.entries(MATRIX)) {
    it(`${operation}: ${row.need === 'any' ? 'every caller' : row.need === 'admin' ? 'admins only' : row.need === 'events-write' ? 'the events-write scope only' : `${row.need} and above`}`, async () => {
      for (const who of WHO) {
        const request = await row.request(who);
        const response = request.stream ? await openStream(who, request.path) : await as(who, request.method, request.path, request.body);
        const label = `${operation} as ${who} (${USER_OF[who]})`;
        const allowed = row.need === 'any' || (row.need === 'events-write' ? false : row.need === 'admin' ? who === 'admin' : RANK[who] >= RANK[row.need]);
        if (allowed) {
          expect(row.ok, `${label}: ${show(response)}`).toContain(response.status);
        } else if (row.need === 'admin' || row.need === 'events-write') {
          expect(response.status, `${label}: ${show(response)}`).toBe(403);
          expect(response.body.detail, label).toMatchObject({ error: 'permission_denied', details: { requiredScope: row.need === 'admin' ? 'workflows-admin' : 'events-write' } });
        } else {
          expectRoleDenied(response, row.deniedAs?.(who) ?? (row.need as Role), request.workflowId ?? W.id, label, request.path);
        }
      }
    });
  }

  it('a refused caller changes nothing: W keeps its definition, access and enabled state, its parked run its gate', async () => {
    const detail = await as('owner', 'GET', wf(`/${W.id}`));
    expect(detail.body).toMatchObject({ enabled: true, description: 'edited by admin' });
    expect((await as('owner', 'GET', wf(`/${W.id}/access`))).body.access).toEqual(W_ACCESS);
    const run = await waitRun(W.id, wParked.runId, () => true);
    expect(run.status).toBe('awaiting_approval');
    expect(run.pendingRequirements.map((r: any) => r.stepId)).toContain(wParked.stepId);
  });

  it('the actor of each allowed act is the caller: triggeredBy, cancelledBy, decidedByUser', async () => {
    const runs = (await allPages('admin', wf(`/${W.id}/runs`), 'runs', 100)).rows;
    const triggerers = new Set(runs.map((run: any) => run.triggeredBy?.userId));
    // Runs triggered by the matrix row of each allowed caller.
    for (const user of ['dave', 'carol', 'alice', 'root']) expect(triggerers, user).toContain(user);
    for (const user of ['erin', 'bob']) expect(triggerers, user).not.toContain(user);
    const dave = runs.find((run: any) => run.triggeredBy?.userId === 'dave');
    expect(dave.triggeredBy).toEqual({ userId: 'dave', username: 'dave-name', via: 'jwt' });
    for (const who of WHO) {
      const allowed = RANK[who] >= RANK.operator;
      const cancelled = await waitRun(W.id, cancelledBy[who], (run) => !allowed || ended(run));
      expect(cancelled.status, `run ${who} cancelled`).toBe(allowed ? 'cancelled' : 'awaiting_approval');
      expect(cancelled.cancelledBy, who).toEqual(allowed ? { userId: USER_OF[who], username: `${USER_OF[who]}-name`, via: 'jwt' } : null);
      const decided = await waitRun(W.id, decidedBy[who], (run) => !allowed || ended(run));
      expect(decided.status, `run ${who} decided`).toBe(allowed ? 'completed' : 'awaiting_approval');
      const gate = decided.requirements.find((requirement: any) => requirement.decidedByUser !== undefined);
      expect(gate?.decidedByUser ?? null, who).toEqual(allowed ? { userId: USER_OF[who], username: `${USER_OF[who]}-name`, via: 'jwt' } : null);
    }
  });
});

describe('lists never reveal what the caller may not view', () => {
  /** Workflow X: erin's alone. */
  const X = { id: '', gateNodeId: '', name: '' };
  let xParked = '';
  let xCompleted = '';
  let xChild = '';
  const xRuns = () => [xParked, xCompleted, xChild];
  /** Who may view X. */
  const seesX = (who: Who) => who === 'none' || who === 'admin';
  /** Who may view W. */
  const seesW = (who: Who) => who !== 'none';

  beforeAll(async () => {
    Object.assign(X, await gatedWorkflow('none', null, 'matrix-x'));
    const access = await as('none', 'GET', wf(`/${X.id}/access`));
    expect(access.body).toMatchObject({ access: { owners: ['user:erin'], editors: [], operators: [], viewers: [] }, callerRole: 'owner' });
    xParked = (await parkedRun(X.id, 'none')).runId;
    xCompleted = await completedRun(X.id, 'none');
    // A replay reuses nothing: the child parks at the gate again.
    const replayed = await as('none', 'POST', wf(`/${X.id}/runs/${xCompleted}/replay`));
    expect(replayed.status, show(replayed)).toBe(202);
    xChild = replayed.body.runId;
    await waitRun(X.id, xChild, parked);
    const asked = await as('none', 'POST', wf(`/${X.id}/runs/${xParked}/human-requests`), { nodeId: X.gateNodeId, prompt: 'Secret question?' });
    expect(asked.status, show(asked)).toBe(201);
  }, 30_000);

  it('GET /workflows: X is on no page and in no total but its owner’s and the admin’s, page after page (perPage=1)', async () => {
    for (const who of WHO) {
      const { rows, totals } = await allPages(who, wf(), 'workflows', 1);
      const ids = rows.map((row) => row.id);
      expect(new Set(totals).size, `${who}: one total on every page`).toBe(1);
      expect(totals[0], `${who}: the total counts exactly the rows paged through`).toBe(ids.length);
      expect(new Set(ids).size, `${who}: no row on two pages`).toBe(ids.length);
      expect(ids.includes(X.id), `${who} sees X`).toBe(seesX(who));
      expect(ids.includes(W.id), `${who} sees W`).toBe(seesW(who));
      // A search for X's exact name finds nothing for the others.
      const search = await as(who, 'GET', wf(`?query=${encodeURIComponent(X.name)}&includeRunning=true`));
      expect(search.body.pagination.total, `${who} searches X`).toBe(seesX(who) ? 1 : 0);
      if (seesX(who)) expect(search.body.workflows[0]).toMatchObject({ id: X.id, runningCount: 2 });
    }
    // Each of the others sees fewer workflows than the admin: X (at least) is missing.
    const adminTotal = (await as('admin', 'GET', wf())).body.pagination.total;
    expect((await as('viewer', 'GET', wf())).body.pagination.total).toBeLessThan(adminTotal);
  });

  it('GET /api/v1/runs: no run of X in any page or total; ?workflowId=X is an empty page (200, total 0), not a 403', async () => {
    for (const who of WHO) {
      const { rows, totals } = await allPages(who, `${ROOT}/runs?includeNodeRuns=false`, 'runs', 7);
      const ids = rows.map((row) => row.runId ?? row.id);
      expect(ids.every((id) => ID_PATTERN.test(id)), `${who}: run ids`).toBe(true);
      expect(new Set(totals).size, `${who}: one total on every page`).toBe(1);
      expect(totals[0], `${who}: the total counts exactly the rows paged through`).toBe(ids.length);
      for (const runId of xRuns()) expect(ids.includes(runId), `${who} sees run ${runId} of X`).toBe(seesX(who));
      expect(ids.includes(wParked.runId), `${who} sees W's run`).toBe(seesW(who));
      expect(rows.every((row) => row.workflowDefinitionId !== X.id || seesX(who)), who).toBe(true);

      const filtered = await as(who, 'GET', `${ROOT}/runs?workflowId=${X.id}`);
      expect(filtered.status, `${who}: ${show(filtered)}`).toBe(200);
      expect(filtered.body.pagination.total, who).toBe(seesX(who) ? 3 : 0);
      expect(filtered.body.runs.map((row: any) => row.runId ?? row.id).sort(), who).toEqual(seesX(who) ? [...xRuns()].sort() : []);
    }
  });

  it('GET /api/v1/approvals: no gate of X in rows, totals or ?mine=true; canDecide follows the role on W', async () => {
    for (const who of WHO) {
      const { rows, totals } = await allPages(who, `${ROOT}/approvals`, 'approvals', 5);
      expect(new Set(totals).size, `${who}: one total on every page`).toBe(1);
      expect(totals[0], `${who}: the total counts exactly the rows paged through`).toBe(rows.length);
      const runIds = new Set(rows.map((row) => row.runId));
      expect(runIds.has(xParked), `${who} sees X's gate`).toBe(seesX(who));
      expect(runIds.has(xChild), `${who} sees X's replayed gate`).toBe(seesX(who));
      expect(rows.some((row) => row.workflowId === X.id), who).toBe(seesX(who));
      expect(runIds.has(wParked.runId), `${who} sees W's gate`).toBe(seesW(who));
      // W's gates name no approvers: operators and above decide them, a viewer only sees them.
      for (const row of rows.filter((r) => r.workflowId === W.id)) {
        expect(row.approvers, who).toBeNull();
        expect(row.canDecide, `${who} on W`).toBe(RANK[who] >= RANK.operator);
      }
      for (const row of rows.filter((r) => r.workflowId === X.id)) expect(row.canDecide, `${who} on X`).toBe(true);

      const mine = await allPages(who, `${ROOT}/approvals?mine=true`, 'approvals', 100);
      expect(mine.totals[0], who).toBe(mine.rows.length);
      expect(mine.rows.every((row) => row.canDecide), who).toBe(true);
      expect(mine.rows.some((row) => row.workflowId === X.id), `${who} mine on X`).toBe(seesX(who));
      expect(mine.rows.some((row) => row.workflowId === W.id), `${who} mine on W`).toBe(RANK[who] >= RANK.operator && seesW(who));

      for (const query of [`workflowId=${X.id}`, `runId=${xParked}`]) {
        const filtered = await as(who, 'GET', `${ROOT}/approvals?${query}`);
        expect(filtered.status, `${who} ${query}`).toBe(200);
        expect(filtered.body.pagination.total, `${who} ${query}`).toBe(seesX(who) ? (query.startsWith('runId') ? 2 : 3) : 0);
      }
    }
  });

  it('X, its runs, children, node runs, events, stream, human requests and audit trail: 403 (not 404) for every caller without a role on it', async () => {
    const reads = [
      wf(`/${X.id}`),
      wf(`/${X.id}/access`),
      wf(`/${X.id}/audit`),
      wf(`/${X.id}/runs`),
      wf(`/${X.id}/runs/${xParked}`),
      wf(`/${X.id}/runs/${xCompleted}/children`),
      wf(`/${X.id}/runs/${xCompleted}/nodes`),
      wf(`/${X.id}/runs/${xCompleted}/events`),
      wf(`/${X.id}/runs/${xParked}/human-requests/unknown-request`),
      `${ROOT}/runs/${xParked}`,
      `${ROOT}/runs/${xChild}`,
    ];
    for (const who of WHO) {
      for (const path of reads) {
        const response = await as(who, 'GET', path);
        if (seesX(who)) expect([200, 404], `${who} ${path}: ${show(response)}`).toContain(response.status);
        else expectRoleDenied(response, 'viewer', X.id, `${who} GET ${path}`, path);
      }
      const stream = await openStream(who, wf(`/${X.id}/runs/${xParked}/events/stream`));
      if (seesX(who)) expect(stream.status, who).toBe(200);
      else expectRoleDenied(stream, 'viewer', X.id, `${who} stream of X`);
      // Children of X's completed run, as its owner sees them.
      if (who === 'none') {
        const children = await as(who, 'GET', wf(`/${X.id}/runs/${xCompleted}/children`));
        expect(children.body.runs.map((row: any) => row.runId ?? row.id)).toEqual([xChild]);
        expect(children.body.pagination.total).toBe(1);
      }
    }
  });

  it('a run of X addressed under W is a 404 for W’s viewers and operators: a role on W opens nothing of X', async () => {
    for (const who of ['viewer', 'operator', 'editor', 'owner'] as const) {
      for (const [method, suffix, body, role] of [
        ['GET', '', undefined, 'viewer'],
        ['GET', '/children', undefined, 'viewer'],
        ['GET', '/nodes', undefined, 'viewer'],
        ['GET', '/events', undefined, 'viewer'],
        ['POST', '/cancel', {}, 'operator'],
        ['POST', '/replay', undefined, 'operator'],
        ['POST', '/approve', { stepId: 'x', resolution: 'confirm' }, 'viewer'],
        ['DELETE', '', undefined, 'editor'],
      ] as const) {
        const response = await as(who, method, wf(`/${W.id}/runs/${xParked}${suffix}`), body);
        const label = `${who} ${method} W/runs/xParked${suffix}`;
        // The role on W is checked first (a 403 about W); with it, the run is not W's: 404.
        if (RANK[who] >= RANK[role]) expect(response.status, `${label}: ${show(response)}`).toBe(404);
        else expectRoleDenied(response, role, W.id, label);
        expect(JSON.stringify(response.body), label).not.toContain(X.id);
      }
      const stream = await openStream(who, wf(`/${W.id}/runs/${xParked}/events/stream`));
      expect(stream.status, `${who} stream of X's run under W`).toBe(404);
    }
    // X's parked run is untouched.
    const run = await waitRun(X.id, xParked, () => true);
    expect(run.status).toBe('awaiting_approval');
    expect(run.cancelledBy ?? null).toBeNull();
  });

  it('the admin sees and may act on X; erin may not act on W', async () => {
    const admin = await as('admin', 'GET', wf(`/${X.id}`));
    expect(admin.body).toMatchObject({ id: X.id, name: X.name });
    const access = await as('admin', 'GET', wf(`/${X.id}/access`));
    expect(access.body.callerRole).toBe('owner');
    expectRoleDenied(await as('none', 'POST', wf(`/${W.id}/runs`), {}), 'operator', W.id, 'erin triggers W');
  });
});

describe('the access list: GET/PUT …/access', () => {
  it('only owners and admins replace it; an empty owners list is a 400; each change lands in the audit trail', async () => {
    const { id } = await gatedWorkflow('owner', W_ACCESS, 'matrix-access');
    // Editors, operators and viewers may not.
    for (const who of ['none', 'viewer', 'operator', 'editor'] as const) {
      const put = await as(who, 'PUT', wf(`/${id}/access`), { owners: [`user:${USER_OF[who]}`] });
      expectRoleDenied(put, 'owner', id, `${who} replaces access`);
    }
    // A workflow always keeps an owner.
    const empty = await as('owner', 'PUT', wf(`/${id}/access`), { owners: [], viewers: ['*'] });
    expect(empty.status, show(empty)).toBe(400);
    expect(empty.body.detail.error).toBe('invalid_request');
    expect((await as('owner', 'GET', wf(`/${id}/access`))).body.access).toEqual(W_ACCESS);

    // The admin opens it to erin as a viewer: she sees it at once, in the list too; bob (sales) loses his view.
    const after = { owners: ['user:alice'], editors: [], operators: ['user:erin', 'user:erin'], viewers: [] };
    const put = await as('admin', 'PUT', wf(`/${id}/access`), after);
    expect(put.status, show(put)).toBe(200);
    expect(put.body).toEqual({ workflowId: id, access: { ...after, operators: ['user:erin'] }, callerRole: 'owner' });
    expect((await as('none', 'GET', wf(`/${id}/access`))).body.callerRole).toBe('operator');
    expect((await allPages('none', wf(), 'workflows', 100)).rows.map((row) => row.id)).toContain(id);
    expectRoleDenied(await as('viewer', 'GET', wf(`/${id}`)), 'viewer', id, 'bob after the change');
    expect((await allPages('viewer', wf(), 'workflows', 100)).rows.map((row) => row.id)).not.toContain(id);
    // carol, editor before, now nothing: she may no longer delete it.
    expectRoleDenied(await as('editor', 'DELETE', wf(`/${id}`)), 'editor', id, 'carol deletes after the change');

    // The trail: who changed what, newest first; the viewer-level trail and the admin's agree.
    const trail = await as('none', 'GET', wf(`/${id}/audit`));
    expect(trail.status, show(trail)).toBe(200);
    const changes = trail.body.entries.filter((entry: any) => entry.type === 'access.changed');
    expect(changes).toHaveLength(2);
    expect(changes[0]).toMatchObject({
      workflowId: id,
      actor: { userId: 'root', username: 'root-name', via: 'jwt' },
      payload: { before: W_ACCESS, after: { ...after, operators: ['user:erin'] } },
    });
    expect(changes[1]).toMatchObject({ actor: { userId: 'alice', via: 'jwt' }, payload: { after: W_ACCESS } });
    const adminTrail = await as('admin', 'GET', `${ROOT}/audit?workflowId=${id}`);
    expect(adminTrail.body.entries).toEqual(trail.body.entries);
    const denied = await as('owner', 'GET', `${ROOT}/audit?workflowId=${id}`);
    expect(denied.status).toBe(403);
  });
});

describe('workflows stored before access existed', () => {
  it('get SWITCHYARD_DEFAULT_ACCESS: every authenticated caller views and triggers, group:admins owns, the creator is unknown', async () => {
    const L = await gatedWorkflow('owner', null, 'matrix-legacy');
    const definitions = svc.store.collection('workflow_definitions');
    const stored = await definitions.findOne({ name: L.name });
    await definitions.updateOne({ _id: stored!['_id'] }, { $unset: { access: '', access_principals: '' } });
    expect(await definitions.findOne({ _id: stored!['_id'] })).not.toHaveProperty('access');
    // Stored without access, nobody but the admin lists it.
    expect((await allPages('owner', wf(), 'workflows', 100)).rows.map((row) => row.id)).not.toContain(L.id);
    expect((await allPages('admin', wf(), 'workflows', 100)).rows.map((row) => row.id)).toContain(L.id);

    // What the service does at start-up, with the configuration's default.
    const config = loadConfig({ DATA_DIR: svc.storeDir ?? '/tmp' });
    expect(config.defaultAccess).toEqual({ owners: ['group:admins'], editors: [], operators: ['*'], viewers: ['*'] });
    expect(await svc.repos.definitions.applyDefaultAccess(config.defaultAccess)).toBe(1);
    expect(await svc.repos.definitions.applyDefaultAccess(config.defaultAccess)).toBe(0);

    for (const who of ['none', 'viewer', 'owner'] as const) {
      const label = `${who} on the legacy workflow`;
      expect((await as(who, 'GET', wf(`/${L.id}/access`))).body.callerRole, label).toBe('operator');
      expect((await allPages(who, wf(), 'workflows', 100)).rows.map((row) => row.id), label).toContain(L.id);
      const triggered = await as(who, 'POST', wf(`/${L.id}/runs`), {});
      expect(triggered.status, `${label}: ${show(triggered)}`).toBe(202);
      expectRoleDenied(await as(who, 'PUT', wf(`/${L.id}`), { description: 'mine' }), 'editor', L.id, label);
      expectRoleDenied(await as(who, 'PUT', wf(`/${L.id}/access`), { owners: [`user:${USER_OF[who]}`] }), 'owner', L.id, label);
    }
    // A member of group admins owns it (without the admin scope).
    const grace = await call(svc.baseUrl, 'PUT', wf(`/${L.id}/access`), adminsGroupToken, { owners: ['group:admins', 'user:alice'], viewers: ['*'] });
    expect(grace.status, show(grace)).toBe(200);
    expect(grace.body.callerRole).toBe('owner');
    expect((await as('owner', 'GET', wf(`/${L.id}/access`))).body.callerRole).toBe('owner');
    // Operators no longer include everyone: erin may view, not trigger.
    expectRoleDenied(await as('none', 'POST', wf(`/${L.id}/runs`), {}), 'operator', L.id, 'erin triggers after the change');
  });
});
