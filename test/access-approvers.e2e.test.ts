/**
 * Gate approvers, four-eyes and who-did-what (issue #18 "Done when", bullets 2 and 3;
 * docs/guide/access-control.md "Gate approvers and four-eyes" and "Who did what") through the real
 * app over HTTP with JWT authentication: named and group approvers, operators deciding gates that
 * name nobody, `allowSelfApproval: false` (also on a retry's child run), 100 racers of whom only the
 * approvers may win, the approvals inbox's `approvers`/`canDecide`/`?mine=true`, human requests
 * with approvers, two people sharing a display name, and no raw token anywhere in the data directory.
 *
 * One service (persistent embedded store) serves every test of the file, so that the last test can
 * scan the data directory for every token the others used. Each test leaves no gate undecided (it
 * decides or cancels what it parks), so the inbox test sees only its own runs.
 */
import { dirname } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, SCOPES } from '@switchyard/api';
import { storedFiles } from './support/data-dir-scan.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type ApiResponse, type TestService } from './support/service.ts';

const SECRET = 'approvers-test-secret-of-32-bytes-or-more!';
const AUDIENCE = 'switchyard-api';
/** Read and control: enough to read runs and decide gates; roles on each workflow decide the rest. */
const PERSON_SCOPES = ['workflows-read', 'workflows-control'];
/** Every token minted in this file, for the final scan of the data directory. */
const minted = new Set<string>();

interface Person {
  sub: string;
  token: string;
}

/** An HS256 token for `sub` (display name `<sub>-name` unless `claims` says otherwise) in `groups`. */
async function person(sub: string, groups: string[] = [], claims: Record<string, unknown> = {}, scopes: readonly string[] = PERSON_SCOPES): Promise<Person> {
  const token = await new SignJWT({ aud: AUDIENCE, scope: scopes.join(' '), preferred_username: `${sub}-name`, groups, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
  minted.add(token);
  return { sub, token };
}

/** A JSON request as `who`. */
async function as(who: Person, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  const response = await fetch(`${svc.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${who.token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text), text, headers: response.headers };
}

let svc: TestService;
let alice: Person; // owner of every workflow of this file (creates them through svc.api)
let admin: Person; // workflows-admin, never named as an approver
let carol: Person; // finance
let dave: Person; // finance
let bob: Person; // no group
let erin: Person; // no group

beforeAll(async () => {
  alice = await person('alice', [], {}, ['workflows-read', 'workflows-write', 'workflows-control']);
  admin = await person('root', [], {}, [...SCOPES]);
  carol = await person('carol', ['finance']);
  dave = await person('dave', ['finance', 'audit']);
  bob = await person('bob');
  erin = await person('erin');
  const authenticator = await Authenticator.create({ modes: ['jwt'], jwt: { secret: SECRET, audience: AUDIENCE }, trustProxyIdentity: false });
  svc = await startService({ edge: { authenticator }, apiHeaders: { authorization: `Bearer ${alice.token}` }, persistentStore: true });
});
afterAll(async () => {
  await svc?.close();
});

/** Runs parked by {@link parkedRun}; cancelled after each test unless they ended, so a failing test leaves no gate in later inboxes. */
const parked: Array<{ workflowId: string; runId: string }> = [];
afterEach(async () => {
  for (const { workflowId, runId } of parked.splice(0)) {
    const run = await svc.api.get(runPath(workflowId, runId));
    if (run.status === 200 && !['completed', 'failed', 'cancelled'].includes(run.body.status)) {
      await svc.api.post(runPath(workflowId, runId, '/cancel'), {});
      await svc.waitForRun(workflowId, runId);
    }
  }
});

const runPath = (workflowId: string, runId: string, suffix = '') => wf(`/${workflowId}/runs/${runId}${suffix}`);

/** A workflow Before → Gate (with `humanReview` extras) → `after` (default an echo step After), created and enabled by alice, shared as `roles` says. */
async function gatedWorkflow(review: Record<string, unknown>, roles: { operators?: string[]; viewers?: string[] }, after: Record<string, unknown> = echoStep('After')): Promise<string> {
  const created = await svc.createWorkflow({
    name: uniqueName('approvers'),
    canvas: CANVAS,
    nodes: [echoStep('Before'), echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Go?', ...review } }), after],
  });
  await svc.enable(created.id);
  await svc.share(created.id, roles);
  return created.id as string;
}

/**
 * A run carol triggered of a one-step workflow whose step is gated (finance approves, four-eyes)
 * and then fails: dave approved it, so it ended failed after his decision. `operators` may trigger.
 */
async function failedAfterDavesApproval(operators: string[]): Promise<{ workflowId: string; parent: { runId: string; stepId: string } }> {
  const created = await svc.createWorkflow({
    name: uniqueName('approvers-replay'),
    canvas: CANVAS,
    nodes: [
      {
        name: 'Pay',
        nodeType: 'step',
        executorKey: 'flaky',
        stepConfig: { maxRetries: 0 },
        humanReview: { requiresConfirmation: true, approvers: ['group:finance'], allowSelfApproval: false },
      },
    ],
  });
  const workflowId = created.id as string;
  await svc.enable(workflowId);
  await svc.share(workflowId, { operators, viewers: ['group:finance'] });
  const parent = await parkedRun(workflowId, carol);
  expect((await decide(dave, workflowId, parent.runId, parent.stepId)).status).toBe(200);
  expect((await svc.waitForRun(workflowId, parent.runId)).status).toBe('failed');
  return { workflowId, parent };
}

/** Triggers a run as `who` (202 expected) and waits until it is parked at the gate; returns its runId and the gate's stepId. */
async function parkedRun(workflowId: string, who: Person = alice): Promise<{ runId: string; stepId: string }> {
  const triggered = await as(who, 'POST', wf(`/${workflowId}/runs`), {});
  expect(triggered.status, triggered.text).toBe(202);
  const runId = triggered.body.runId as string;
  parked.push({ workflowId, runId });
  const run = await svc.waitForGate(workflowId, runId);
  return { runId, stepId: run.pendingRequirements[0].stepId as string };
}

function decide(who: Person, workflowId: string, runId: string, stepId: string, resolution = 'confirm'): Promise<ApiResponse> {
  return as(who, 'POST', runPath(workflowId, runId, '/approve'), { stepId, resolution });
}

async function detail(workflowId: string, runId: string): Promise<any> {
  const response = await svc.api.get(runPath(workflowId, runId));
  expect(response.status, response.text).toBe(200);
  return response.body;
}

async function eventTypes(runId: string): Promise<string[]> {
  return (await svc.events(runId)).map((e) => e.type);
}

async function runDoc(runId: string): Promise<any> {
  return (await svc.store.collection('workflow_runs').find({})).find((d: any) => String(d._id) === runId);
}

/** Asserts the gate of the run is still undecided and untouched: pending, no decider, no decision event. */
async function expectUntouched(workflowId: string, runId: string, stepId: string): Promise<void> {
  const run = await detail(workflowId, runId);
  expect(run.status).toBe('awaiting_approval');
  expect(run.pendingRequirements.map((r: any) => r.stepId)).toEqual([stepId]);
  const requirement = run.requirements.find((r: any) => r.stepId === stepId);
  expect(requirement).toMatchObject({ resolution: null, decidedBy: null, decidedByUser: null });
  expect(await eventTypes(runId)).not.toContain('requirement.decided');
}

function expectRefusal(response: ApiResponse, error: string, details?: Record<string, unknown>): void {
  expect(response.status, response.text).toBe(403);
  expect(response.body.detail.error).toBe(error);
  if (details) expect(response.body.detail.details).toMatchObject(details);
}

describe('named approvers', () => {
  it('only user:carol decides: carol (a viewer) confirms and the run goes on; an unnamed operator and an admin get 403 not_an_approver and leave the gate alone', async () => {
    const workflowId = await gatedWorkflow({ approvers: ['user:carol'] }, { operators: ['user:bob'], viewers: ['user:carol'] });
    const { runId, stepId } = await parkedRun(workflowId);

    const gate = (await detail(workflowId, runId)).pendingRequirements[0];
    expect(gate.approvers).toEqual(['user:carol']);

    expectRefusal(await decide(bob, workflowId, runId, stepId), 'not_an_approver', { approvers: ['user:carol'] });
    await expectUntouched(workflowId, runId, stepId);
    expectRefusal(await decide(admin, workflowId, runId, stepId), 'not_an_approver', { approvers: ['user:carol'] });
    await expectUntouched(workflowId, runId, stepId);

    const confirmed = await decide(carol, workflowId, runId, stepId);
    expect(confirmed.status, confirmed.text).toBe(200);
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('completed');
    expect(run.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Before', 'Gate', 'After']);
    expect(run.requirements.find((r: any) => r.stepId === stepId).decidedByUser).toEqual({ userId: 'carol', username: 'carol-name', via: 'jwt' });
    expect((await eventTypes(runId)).filter((t) => t === 'requirement.decided')).toHaveLength(1);
  });
});

describe('group approvers', () => {
  it('group:finance decides: dave (finance) confirms; erin (no group) gets 403 not_an_approver', async () => {
    const workflowId = await gatedWorkflow({ approvers: ['group:finance'] }, { operators: ['user:erin'], viewers: ['group:finance'] });
    const { runId, stepId } = await parkedRun(workflowId);

    expectRefusal(await decide(erin, workflowId, runId, stepId), 'not_an_approver', { approvers: ['group:finance'] });
    await expectUntouched(workflowId, runId, stepId);

    const decided = await decide(dave, workflowId, runId, stepId, 'reject');
    expect(decided.status, decided.text).toBe(200);
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.requirements.find((r: any) => r.stepId === stepId)).toMatchObject({ resolution: 'reject', decidedByUser: { userId: 'dave', username: 'dave-name', via: 'jwt' } });
  });
});

describe('gates without approvers', () => {
  it('a viewer gets 403 permission_denied (requiredRole operator); an operator decides', async () => {
    const workflowId = await gatedWorkflow({}, { operators: ['user:bob'], viewers: ['user:erin'] });
    const { runId, stepId } = await parkedRun(workflowId);

    expectRefusal(await decide(erin, workflowId, runId, stepId), 'permission_denied', { requiredRole: 'operator', workflowId });
    await expectUntouched(workflowId, runId, stepId);

    const confirmed = await decide(bob, workflowId, runId, stepId);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await svc.waitForRun(workflowId, runId)).status).toBe('completed');
  });
});

describe('four-eyes (allowSelfApproval: false)', () => {
  it('the trigger may not decide its own run, even as a named approver; another approver may', async () => {
    const workflowId = await gatedWorkflow({ approvers: ['group:finance'], allowSelfApproval: false }, { operators: ['user:carol'], viewers: ['group:finance'] });
    const { runId, stepId } = await parkedRun(workflowId, carol);
    expect((await detail(workflowId, runId)).triggeredBy).toEqual({ userId: 'carol', username: 'carol-name', via: 'jwt' });

    expectRefusal(await decide(carol, workflowId, runId, stepId), 'self_approval_forbidden', { stepId });
    await expectUntouched(workflowId, runId, stepId);

    const confirmed = await decide(dave, workflowId, runId, stepId);
    expect(confirmed.status, confirmed.text).toBe(200);
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('completed');
    expect(run.requirements.find((r: any) => r.stepId === stepId).decidedByUser).toMatchObject({ userId: 'dave' });
  });

  it("in a retry's child run the retrier and the source's trigger are both triggers: neither decides, a third approver does", async () => {
    const workflowId = await gatedWorkflow({ approvers: ['group:finance'], allowSelfApproval: false }, { operators: ['user:carol', 'user:dave'], viewers: ['group:finance'] });
    const parent = await parkedRun(workflowId, carol);
    expect((await as(alice, 'POST', runPath(workflowId, parent.runId, '/cancel'), { reason: 'retry it' })).status).toBe(200);
    expect((await svc.waitForRun(workflowId, parent.runId)).status).toBe('cancelled');

    const retried = await as(dave, 'POST', runPath(workflowId, parent.runId, '/retry'));
    expect(retried.status, retried.text).toBe(202);
    const childId = retried.body.runId as string;
    parked.push({ workflowId, runId: childId });
    const child = await svc.waitForGate(workflowId, childId);
    expect(child.parentRunId).toBe(parent.runId);
    expect(child.triggeredBy).toEqual({ userId: 'dave', username: 'dave-name', via: 'jwt' });
    const stepId = child.pendingRequirements[0].stepId as string;

    // dave made the child; carol wrote its input (the retry keeps the source's): a second person means someone else.
    expectRefusal(await decide(dave, workflowId, childId, stepId), 'self_approval_forbidden');
    expectRefusal(await decide(carol, workflowId, childId, stepId), 'self_approval_forbidden');
    await expectUntouched(workflowId, childId, stepId);
    const frank = await person('frank', ['finance']);
    const confirmed = await decide(frank, workflowId, childId, stepId);
    expect(confirmed.status, confirmed.text).toBe(200);
    const done = await svc.waitForRun(workflowId, childId);
    expect(done.status).toBe('completed');
    expect(done.requirements.find((r: any) => r.stepId === stepId).decidedByUser).toMatchObject({ userId: 'frank' });
  });

  it('a full retry does not replay a four-eyes decision into a run its decider now triggered: the gate is asked again', async () => {
    // The gated step fails after dave approved it (carol triggered): a full retry replays the
    // decisions of steps that did not complete — but not dave's into dave's own retry.
    const { workflowId, parent } = await failedAfterDavesApproval(['user:carol', 'user:dave']);

    const retried = await as(dave, 'POST', runPath(workflowId, parent.runId, '/retry'));
    expect(retried.status, retried.text).toBe(202);
    const childId = retried.body.runId as string;
    parked.push({ workflowId, runId: childId });
    const child = await svc.waitForGate(workflowId, childId);
    expect(child.pendingRequirements).toHaveLength(1);
    expect(child.requirements.some((r: any) => r.decidedByUser?.userId === 'dave')).toBe(false);
    const stepId = child.pendingRequirements[0].stepId as string;
    expectRefusal(await decide(dave, workflowId, childId, stepId), 'self_approval_forbidden');
    expectRefusal(await decide(carol, workflowId, childId, stepId), 'self_approval_forbidden');
  });

  it('a full retry by someone outside the lineage replays the earlier four-eyes decision: nothing is asked again', async () => {
    const { workflowId, parent } = await failedAfterDavesApproval(['user:carol', 'user:bob']);

    const retried = await as(bob, 'POST', runPath(workflowId, parent.runId, '/retry'));
    expect(retried.status, retried.text).toBe(202);
    const done = await svc.waitForRun(workflowId, retried.body.runId as string);
    expect(done.status).toBe('failed'); // the step ran again (and failed again) without a new question
    expect(done.requirements).toEqual([expect.objectContaining({ decidedByUser: expect.objectContaining({ userId: 'dave' }) })]);
  });
});

describe('100 racers on one gate with approvers [group:finance]', () => {
  it('exactly one finance member wins (200), the other 49 get 409, all 50 non-members 403; the stored decider is the winner', async () => {
    // The step after the gate sleeps, so the run is still going while late racers arrive: each
    // hears about the gate (409 already decided, or 403), never "the run has ended".
    const after = { name: 'After', nodeType: 'step', executorKey: 'sleep', config: { ms: 60_000 } };
    const workflowId = await gatedWorkflow({ approvers: ['group:finance'] }, { viewers: ['group:finance', 'group:sales'] }, after);
    const { runId, stepId } = await parkedRun(workflowId);
    try {
      const members = await Promise.all(Array.from({ length: 50 }, (_, i) => person(`fin-${i}`, ['finance'])));
      const outsiders = await Promise.all(Array.from({ length: 50 }, (_, i) => person(`out-${i}`, ['sales'])));
      // Interleaved, so that non-members are in flight throughout the race.
      const racers = members.flatMap((member, i) => [member, outsiders[i]!]);

      const responses = await Promise.all(racers.map((racer) => decide(racer, workflowId, runId, stepId)));

      const byRacer = new Map(racers.map((racer, i) => [racer.sub, responses[i]!]));
      const memberStatuses = members.map((m) => byRacer.get(m.sub)!.status);
      expect(memberStatuses.filter((s) => s === 200)).toHaveLength(1);
      expect(memberStatuses.filter((s) => s === 409)).toHaveLength(49);
      for (const outsider of outsiders) expectRefusal(byRacer.get(outsider.sub)!, 'not_an_approver', { approvers: ['group:finance'] });
      const winner = members.find((m) => byRacer.get(m.sub)!.status === 200)!;

      // The run goes on once: After starts.
      let run: any;
      for (let i = 0; i < 500; i++) {
        run = await detail(workflowId, runId);
        if (run.nodeRuns.some((n: any) => n.nodeName === 'After' && n.status === 'running')) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(run.nodeRuns.map((n: any) => [n.nodeName, n.status])).toEqual([['Before', 'completed'], ['Gate', 'completed'], ['After', 'running']]);
      const requirement = run.requirements.find((r: any) => r.stepId === stepId);
      expect(requirement).toMatchObject({ resolution: 'confirm', decidedByUser: { userId: winner.sub, username: `${winner.sub}-name`, via: 'jwt' } });
      expect((await runDoc(runId)).pending_requirements.find((r: any) => r.step_id === stepId).decided_by_user).toEqual({ user_id: winner.sub, username: `${winner.sub}-name`, via: 'jwt' });
      const events = await svc.events(runId);
      expect(events.filter((e) => e.type === 'requirement.decided')).toHaveLength(1);
      // No trace of a non-member anywhere in the run's record or events.
      const everything = JSON.stringify([run, await runDoc(runId), events]);
      for (const outsider of outsiders) expect(everything).not.toContain(`"${outsider.sub}"`);
    } finally {
      await svc.api.post(runPath(workflowId, runId, '/cancel'), {});
      await svc.waitForRun(workflowId, runId);
    }
  });
});

describe('the approvals inbox', () => {
  it('shows approvers and canDecide per caller; ?mine=true lists exactly the rows the caller may decide, paginated; four-eyes hides the trigger\u2019s own run', async () => {
    const named = await gatedWorkflow({ approvers: ['user:carol'] }, { operators: ['user:bob'], viewers: ['user:carol', 'user:erin'] });
    const group = await gatedWorkflow({ approvers: ['group:finance'] }, { operators: ['user:bob'], viewers: ['group:finance', 'user:erin'] });
    const none = await gatedWorkflow({}, { operators: ['user:bob'], viewers: ['user:carol', 'user:erin'] });
    const fourEyes = await gatedWorkflow({ approvers: ['group:finance'], allowSelfApproval: false }, { operators: ['user:carol', 'user:bob'], viewers: ['group:finance', 'user:erin'] });
    const runs = {
      named: (await parkedRun(named)).runId,
      group: (await parkedRun(group)).runId,
      none: (await parkedRun(none)).runId,
      fourEyes: (await parkedRun(fourEyes, carol)).runId,
    };
    const workflows: Record<keyof typeof runs, string> = { named, group, none, fourEyes };
    const approvers = { named: ['user:carol'], group: ['group:finance'], none: null, fourEyes: ['group:finance'] };
    const expected: Record<string, Record<keyof typeof runs, boolean>> = {
      carol: { named: true, group: true, none: false, fourEyes: false },
      bob: { named: false, group: false, none: true, fourEyes: false },
      erin: { named: false, group: false, none: false, fourEyes: false },
      dave: { named: false, group: true, none: false, fourEyes: true },
    };
    const kindOf = new Map(Object.entries(runs).map(([kind, runId]) => [runId, kind as keyof typeof runs]));
    try {
      for (const [name, who] of Object.entries({ carol, bob, erin, dave })) {
        const inbox = await as(who, 'GET', '/api/v1/approvals?perPage=100');
        expect(inbox.status, inbox.text).toBe(200);
        const visible = Object.keys(runs).filter((kind) => name !== 'dave' || kind !== 'named' && kind !== 'none') as Array<keyof typeof runs>;
        expect(inbox.body.approvals.map((row: any) => kindOf.get(row.runId)).sort(), `${name}'s inbox`).toEqual([...visible].sort());
        for (const row of inbox.body.approvals) {
          const kind = kindOf.get(row.runId)!;
          expect(row, `${name} on ${kind}`).toMatchObject({ workflowId: workflows[kind], approvers: approvers[kind], canDecide: expected[name]![kind] });
        }
        const decidable = visible.filter((kind) => expected[name]![kind]);
        const mine = await as(who, 'GET', '/api/v1/approvals?mine=true&perPage=100');
        expect(mine.status).toBe(200);
        expect(mine.body.approvals.map((row: any) => kindOf.get(row.runId)).sort(), `${name}'s mine=true`).toEqual([...decidable].sort());
        expect(mine.body.approvals.every((row: any) => row.canDecide === true)).toBe(true);
        expect(mine.body.pagination).toMatchObject({ total: decidable.length, page: 1, perPage: 100, totalPages: decidable.length === 0 ? 0 : 1 });
        // One row a page: the totals count only decidable rows, and the pages hold each once.
        const paged: string[] = [];
        for (let page = 1; page <= decidable.length; page++) {
          const onePage = await as(who, 'GET', `/api/v1/approvals?mine=true&perPage=1&page=${page}`);
          expect(onePage.body.pagination).toEqual({ total: decidable.length, page, perPage: 1, totalPages: decidable.length });
          expect(onePage.body.approvals).toHaveLength(1);
          paged.push(kindOf.get(onePage.body.approvals[0].runId)!);
        }
        expect(paged.sort()).toEqual([...decidable].sort());
      }
      // What the inbox says is what /approve does: carol's own four-eyes run refuses her.
      const own = (await detail(fourEyes, runs.fourEyes)).pendingRequirements[0].stepId as string;
      expectRefusal(await decide(carol, fourEyes, runs.fourEyes, own), 'self_approval_forbidden');
      expectRefusal(await decide(bob, group, runs.group, (await detail(group, runs.group)).pendingRequirements[0].stepId), 'not_an_approver');
    } finally {
      for (const [kind, runId] of Object.entries(runs)) {
        await svc.api.post(runPath(workflows[kind as keyof typeof runs], runId, '/cancel'), {});
        await svc.waitForRun(workflows[kind as keyof typeof runs], runId);
      }
    }
  });
});

describe('human requests with approvers', () => {
  it('only the named approver answers: bob 403 not_an_approver, carol 200, and the request shows answeredBy carol and its approvers', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('ask'), canvas: CANVAS, nodes: [{ name: 'Agent', nodeType: 'step', executorKey: 'sleep', config: { ms: 60_000 } }] });
    const workflowId = created.id as string;
    await svc.enable(workflowId);
    await svc.share(workflowId, { operators: ['user:bob'], viewers: ['user:carol'] });
    const triggered = await as(alice, 'POST', wf(`/${workflowId}/runs`), {});
    expect(triggered.status).toBe(202);
    const runId = triggered.body.runId as string;
    try {
      let nodeId: string | undefined;
      for (let i = 0; i < 500 && nodeId === undefined; i++) {
        const nodes = (await svc.api.get(runPath(workflowId, runId, '/nodes'))).body.nodeRuns as Array<{ nodeName: string; nodeId: string; status: string }>;
        nodeId = nodes.find((n) => n.nodeName === 'Agent' && n.status === 'running')?.nodeId;
        if (nodeId === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(nodeId, 'the Agent step runs').toBeDefined();

      const asked = await as(bob, 'POST', runPath(workflowId, runId, '/human-requests'), { nodeId, prompt: 'Which region?', approvers: ['user:carol'] });
      expect(asked.status, asked.text).toBe(201);
      expect(asked.body.approvers).toEqual(['user:carol']);
      const requestId = asked.body.requestId as string;
      const requestPath = runPath(workflowId, runId, `/human-requests/${encodeURIComponent(requestId)}`);

      const inbox = await as(carol, 'GET', `/api/v1/approvals?runId=${runId}`);
      expect(inbox.body.approvals).toHaveLength(1);
      expect(inbox.body.approvals[0]).toMatchObject({ approvers: ['user:carol'], canDecide: true });
      expect((await as(bob, 'GET', `/api/v1/approvals?runId=${runId}`)).body.approvals[0]).toMatchObject({ canDecide: false });

      const answer = { stepId: requestId, resolution: 'user_input', userInput: { response: 'eu-west-1' } };
      expectRefusal(await as(bob, 'POST', runPath(workflowId, runId, '/approve'), answer), 'not_an_approver', { approvers: ['user:carol'] });
      expect((await as(bob, 'GET', requestPath)).body).toMatchObject({ status: 'pending', answeredBy: null, response: null });

      const answered = await as(carol, 'POST', runPath(workflowId, runId, '/approve'), answer);
      expect(answered.status, answered.text).toBe(200);
      const after = await as(carol, 'GET', requestPath);
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ status: 'answered', response: 'eu-west-1', approvers: ['user:carol'], answeredBy: { userId: 'carol', username: 'carol-name', via: 'jwt' } });
    } finally {
      await svc.api.post(runPath(workflowId, runId, '/cancel'), {});
      await svc.waitForRun(workflowId, runId);
    }
  });
});

describe('two people with one display name', () => {
  it('u-sam-1 and u-sam-2 (both "sam") are told apart on triggers, decisions and cancels, in the API and the store, and by four-eyes', async () => {
    const sam1 = await person('u-sam-1', [], { preferred_username: 'sam' });
    const sam2 = await person('u-sam-2', [], { preferred_username: 'sam' });
    const workflowId = await gatedWorkflow({ allowSelfApproval: false }, { operators: ['user:u-sam-1', 'user:u-sam-2'] });
    const sam = (sub: string) => ({ userId: sub, username: 'sam', via: 'jwt' });
    const samDoc = (sub: string) => ({ user_id: sub, username: 'sam', via: 'jwt' });

    // Run A: sam-1 triggers; sam-1 may not decide it, sam-2 may.
    const a = await parkedRun(workflowId, sam1);
    expectRefusal(await decide(sam1, workflowId, a.runId, a.stepId), 'self_approval_forbidden');
    await expectUntouched(workflowId, a.runId, a.stepId);
    expect((await decide(sam2, workflowId, a.runId, a.stepId)).status).toBe(200);
    // Run B: sam-2 triggers, sam-1 decides.
    const b = await parkedRun(workflowId, sam2);
    expectRefusal(await decide(sam2, workflowId, b.runId, b.stepId), 'self_approval_forbidden');
    expect((await decide(sam1, workflowId, b.runId, b.stepId)).status).toBe(200);
    // Runs C and D: each cancels the other's run.
    const c = await parkedRun(workflowId, sam2);
    const d = await parkedRun(workflowId, sam1);
    expect((await as(sam1, 'POST', runPath(workflowId, c.runId, '/cancel'), { reason: 'sam-1 cancels' })).status).toBe(200);
    expect((await as(sam2, 'POST', runPath(workflowId, d.runId, '/cancel'), { reason: 'sam-2 cancels' })).status).toBe(200);

    const [runA, runB, runC, runD] = await Promise.all([a, b, c, d].map(({ runId }) => svc.waitForRun(workflowId, runId)));
    expect(runA).toMatchObject({ status: 'completed', triggeredBy: sam('u-sam-1') });
    expect(runA.requirements[0].decidedByUser).toEqual(sam('u-sam-2'));
    expect(runB).toMatchObject({ status: 'completed', triggeredBy: sam('u-sam-2') });
    expect(runB.requirements[0].decidedByUser).toEqual(sam('u-sam-1'));
    expect(runC).toMatchObject({ status: 'cancelled', triggeredBy: sam('u-sam-2'), cancelledBy: sam('u-sam-1') });
    expect(runD).toMatchObject({ status: 'cancelled', triggeredBy: sam('u-sam-1'), cancelledBy: sam('u-sam-2') });

    // The run list shows the same.
    const list = (await svc.api.get(wf(`/${workflowId}/runs?perPage=10`))).body;
    const rows = new Map<string, any>((list.runs ?? list.items ?? []).map((row: any) => [row.id, row]));
    expect(rows.get(c.runId)).toMatchObject({ triggeredBy: sam('u-sam-2'), cancelledBy: sam('u-sam-1') });
    expect(rows.get(d.runId)).toMatchObject({ triggeredBy: sam('u-sam-1'), cancelledBy: sam('u-sam-2') });

    const [docA, docB, docC, docD] = await Promise.all([a, b, c, d].map(({ runId }) => runDoc(runId)));
    expect(docA).toMatchObject({ triggering_user_id: 'u-sam-1', triggering_username: 'sam', triggering_via: 'jwt' });
    expect(docA.pending_requirements[0].decided_by_user).toEqual(samDoc('u-sam-2'));
    expect(docB).toMatchObject({ triggering_user_id: 'u-sam-2', triggering_username: 'sam', triggering_via: 'jwt' });
    expect(docB.pending_requirements[0].decided_by_user).toEqual(samDoc('u-sam-1'));
    expect(docC).toMatchObject({ triggering_user_id: 'u-sam-2', cancelled_by: samDoc('u-sam-1') });
    expect(docD).toMatchObject({ triggering_user_id: 'u-sam-1', cancelled_by: samDoc('u-sam-2') });
  });
});

describe('no credential is stored', () => {
  it('no token of this file (nor its signature) is in any file of the data directory', async () => {
    const dataDir = dirname(svc.filesDir);
    expect(svc.storeDir).toBe(`${dataDir}/store`);
    const files = await storedFiles(dataDir);
    expect(files.some((file) => file.path.startsWith(svc.storeDir!))).toBe(true);
    const haystacks = files.flatMap((file) => [file.content.toString('utf8'), file.content.toString('latin1'), ...file.payloads]);
    // The scan sees what the tests stored (it would see a token if one were there).
    for (const stored of ['u-sam-2', 'carol-name', 'eu-west-1']) expect(haystacks.some((text) => text.includes(stored)), stored).toBe(true);
    expect(minted.size).toBeGreaterThan(100);
    const found: string[] = [];
    for (const token of minted) {
      const [, payload, signature] = token.split('.') as [string, string, string];
      for (const [part, value] of Object.entries({ token, payload, signature })) {
        if (haystacks.some((text) => text.includes(value))) found.push(`${part} of ${token.slice(0, 24)}…`);
      }
    }
    expect(found).toEqual([]);
  });
});
