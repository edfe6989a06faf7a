/**
 * Event-triggered workflows (issue #21 item 2, docs/guide/event-triggers.md): `POST /api/v1/events`
 * starts one run of every enabled workflow whose trigger matches (filter, input from inputCel or
 * the data, declared inputs), records what went wrong on the event instead of failing, dedupes a
 * repeated `id` (also concurrent posts), and is bounded in size, fan-out and scope; `GET
 * /api/v1/events` lists events by name, paginated, within the caller's visibility.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '@switchyard/api';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';
import { USER_SCOPES, call, jwtAuthConfig, signToken } from './support/jwt-callers.ts';
import { hashBody } from '../apps/api/src/services/idempotency.ts';

const EVENTS = '/api/v1/events';

/** A fresh event name, so that tests sharing a service do not see each other's workflows. */
const eventName = (prefix = 'order.created'): string => `${prefix}.${randomBytes(4).toString('hex')}`;

describe('event triggers (no authentication)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.close();
  });

  /** Creates (and by default enables) a workflow with `triggers`; returns its detail. */
  async function triggered(triggers: unknown[], extra: Record<string, unknown> = {}, enable = true): Promise<any> {
    const created = await svc.createWorkflow({ name: uniqueName('events'), canvas: CANVAS, nodes: [echoStep('A')], triggers, ...extra });
    if (enable) await svc.enable(created.id);
    return created;
  }
  const post = (body: unknown) => svc.api.post(EVENTS, body);
  const runsOf = async (workflowId: string): Promise<any[]> => (await svc.api.get(wf(`/${workflowId}/runs?perPage=100`))).body.runs;
  const listed = async (name: string, query = ''): Promise<any> => (await svc.api.get(`${EVENTS}?name=${encodeURIComponent(name)}${query}`)).body;

  it('starts a run when the filter holds, none when it does not; the run carries the event and its data as input', async () => {
    const name = eventName();
    const workflow = await triggered([{ event: name, filterCel: 'event.data.total > 100' }]);
    expect(workflow.triggers).toEqual([{ event: name, filterCel: 'event.data.total > 100', inputCel: null }]);

    const big = await post({ name, data: { id: 'o-1', total: 150 } });
    expect(big.status).toBe(202);
    expect(big.body.runIds).toHaveLength(1);
    const run = await svc.waitForRun(workflow.id, big.body.runIds[0]);
    expect(run).toMatchObject({ status: 'completed', triggerSource: 'event', eventId: big.body.eventId, initialInput: { id: 'o-1', total: 150 } });

    const small = await post({ name, data: { id: 'o-2', total: 50 } });
    expect(small.status).toBe(202);
    expect(small.body.runIds).toEqual([]);
    // Another name starts nothing either.
    expect((await post({ name: `${name}.other`, data: { total: 500 } })).body.runIds).toEqual([]);
    expect(await runsOf(workflow.id)).toHaveLength(1);
  });

  it('one event starts every enabled matching workflow, input from inputCel or the data; a disabled one is not started', async () => {
    const name = eventName();
    const plain = await triggered([{ event: name }]);
    const mapped = await triggered([{ event: 'something.else' }, { event: name, inputCel: "{ 'orderId': event.data.id, 'event': event.name }" }]);
    const disabled = await triggered([{ event: name }], {}, false);

    const answer = await post({ name, data: { id: 'o-7', total: 3 } });
    expect(answer.status).toBe(202);
    expect(answer.body.runIds).toHaveLength(2);
    const [plainRun] = await runsOf(plain.id);
    const [mappedRun] = await runsOf(mapped.id);
    expect(answer.body.runIds.sort()).toEqual([plainRun.id, mappedRun.id].sort());
    expect((await svc.waitForRun(plain.id, plainRun.id)).initialInput).toEqual({ id: 'o-7', total: 3 });
    expect((await svc.waitForRun(mapped.id, mappedRun.id)).initialInput).toEqual({ orderId: 'o-7', event: name });
    expect(await runsOf(disabled.id)).toEqual([]);

    const [event] = (await listed(name)).events;
    expect(event).toMatchObject({ eventId: answer.body.eventId, name, data: { id: 'o-7', total: 3 }, state: 'done', problems: [] });
    expect(event.runs).toEqual(
      expect.arrayContaining([
        { workflowId: plain.id, runId: plainRun.id },
        { workflowId: mapped.id, runId: mappedRun.id },
      ]),
    );
  });

  it('dedupes a repeated id: the same answer and no new run, also for concurrent posts', async () => {
    const name = eventName();
    const workflow = await triggered([{ event: name }]);
    const first = await post({ name, id: 'delivery-1', data: { n: 1 } });
    const again = await post({ name, id: 'delivery-1', data: { n: 1 } });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);

    const racing = await Promise.all(Array.from({ length: 20 }, () => post({ name, id: 'delivery-2', data: { n: 2 } })));
    expect(racing.map((answer) => answer.status)).toEqual(Array(20).fill(202));
    expect(new Set(racing.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect(racing[0]!.body.runIds).toHaveLength(1);

    expect(await runsOf(workflow.id)).toHaveLength(2);
    const events = (await listed(name)).events;
    expect(events.map((event: any) => event.id).sort()).toEqual(['delivery-1', 'delivery-2']);
  });

  it('refuses a repeated id with another name or data (409 conflict) and stores nothing for it; key order does not matter', async () => {
    const name = eventName();
    const workflow = await triggered([{ event: name }, { event: `${name}.other` }]);
    const first = await post({ name, id: 'delivery-x', data: { a: 1, b: 2 } });
    expect(first.status).toBe(202);
    for (const body of [{ name, id: 'delivery-x', data: { a: 1, b: 3 } }, { name: `${name}.other`, id: 'delivery-x', data: { a: 1, b: 2 } }, { name, id: 'delivery-x' }]) {
      const other = await post(body);
      expect(other.status, JSON.stringify(body)).toBe(409);
      expect(other.body.detail).toMatchObject({ error: 'conflict', message: "Event id 'delivery-x' was already used with a different name or data" });
    }
    const same = await post({ name, id: 'delivery-x', data: { b: 2, a: 1 } });
    expect(same.status).toBe(202);
    expect(same.body).toEqual(first.body);
    expect(await runsOf(workflow.id)).toHaveLength(1);
    expect((await listed(`${name}.other`)).pagination.total).toBe(0);
  });

  it('refuses data nested deeper than 32 levels with 400 naming the bound, and stores nothing; 32 levels are accepted', async () => {
    const name = eventName();
    await triggered([{ event: name }]);
    const nested = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = {};
      for (let level = 1; level < levels; level++) value = { a: value };
      return value;
    };
    for (const levels of [33, 120]) {
      const deep = await post({ name, id: `deep-${levels}`, data: nested(levels) });
      expect(deep.status, String(levels)).toBe(400);
      expect(deep.body.detail).toMatchObject({ error: 'invalid_request', message: 'data nests deeper than 32 levels' });
    }
    expect((await listed(name)).pagination.total).toBe(0);
    const ok = await post({ name, data: nested(32) });
    expect(ok.status).toBe(202);
    expect(ok.body.runIds).toHaveLength(1);
  });

  it('a repeat takes over an event whose starter stalled, and starts its runs once', async () => {
    const name = eventName();
    const workflow = await triggered([{ event: name }]);
    // A starter that stored the event a minute ago and died before starting anything.
    const stalled = await svc.repos.inboundEvents.receive({
      name,
      data: { n: 1 },
      sourceId: 'stalled-1',
      senderId: 'user:anonymous',
      bodyHash: hashBody({ name, data: { n: 1 } }),
      now: new Date(Date.now() - 60_000),
      retentionMs: 86_400_000,
      dedupeMs: 86_400_000,
    });
    expect(stalled.won).toBe(true);
    const answers = await Promise.all(Array.from({ length: 5 }, () => post({ name, id: 'stalled-1', data: { n: 1 } })));
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect(answers[0]!.body).toMatchObject({ eventId: stalled.won ? stalled.event.id : '', runIds: [expect.any(String)] });
    expect(await runsOf(workflow.id)).toHaveLength(1);
  });

  it('records a failing filter, a non-map inputCel and an input that does not match the inputSchema on the event: 202, no 500', async () => {
    const name = eventName();
    // The first trigger's filter fails (no such key); the second one, without a filter, starts the run.
    const failing = await triggered([{ event: name, filterCel: 'event.data.missing.deep > 1' }, { event: name }]);
    const notMap = await triggered([{ event: name, inputCel: 'event.data.total' }]);
    const declared = await triggered([{ event: name }], { inputSchema: { type: 'object', required: ['customerId'], properties: { customerId: { type: 'string' } } } });

    const answer = await post({ name, data: { total: 5 } });
    expect(answer.status).toBe(202);
    expect(answer.body.runIds).toHaveLength(1);
    expect((await runsOf(failing.id))[0].id).toBe(answer.body.runIds[0]);
    expect(await runsOf(notMap.id)).toEqual([]);
    expect(await runsOf(declared.id)).toEqual([]);

    const [event] = (await listed(name)).events;
    const problem = (workflowId: string) => event.problems.find((p: any) => p.workflowId === workflowId);
    expect(problem(failing.id)).toMatchObject({ trigger: 0 });
    expect(problem(failing.id).error).toMatch(/^filterCel: CEL expression `event.data.missing.deep > 1` failed/);
    expect(problem(notMap.id)).toEqual({ workflowId: notMap.id, trigger: 0, error: 'inputCel: must give a map, got number' });
    expect(problem(declared.id).error).toBe("initialInput does not match the workflow's inputSchema: /customerId: is required");
  });

  it('bounds the fan-out: 100 runs per event, the further matching workflow is recorded', async () => {
    const name = eventName('fanout');
    const workflows = await Promise.all(Array.from({ length: 101 }, () => triggered([{ event: name }])));
    const answer = await post({ name, data: {} });
    expect(answer.status).toBe(202);
    expect(answer.body.runIds).toHaveLength(100);
    const [event] = (await listed(name)).events;
    expect(event.runs).toHaveLength(100);
    expect(event.problems).toEqual([{ workflowId: expect.any(String), trigger: 0, error: 'not started: one event starts at most 100 runs' }]);
    // The one left out is the last by id (workflows are looked at in id order).
    expect(event.problems[0].workflowId).toBe(workflows.map((w) => w.id).sort().at(-1));
  }, 60_000);

  it('refuses a body over 256 KiB with 413 and stores nothing; just below is accepted', async () => {
    const name = eventName();
    const over = await post({ name, data: { blob: 'x'.repeat(256 * 1024) } });
    expect(over.status).toBe(413);
    expect(over.body.detail.error).toBe('request_too_large');
    const under = await post({ name, data: { blob: 'x'.repeat(250 * 1024) } });
    expect(under.status).toBe(202);
    const page = await listed(name);
    expect(page.pagination.total).toBe(1);
    expect(page.events[0].dataBytes).toBeGreaterThan(250 * 1024);
    // Too big to inline in a list: the event itself has it.
    expect(page.events[0].data).toBeNull();
    expect((await svc.api.get(`${EVENTS}/${page.events[0].eventId}`)).body.data.blob).toHaveLength(250 * 1024);
  });

  it('refuses malformed events with 400: a bad name, an unknown field, data that is no object', async () => {
    for (const body of [{ name: '.starts-with-dot' }, { name: 'a'.repeat(201) }, { name: 'ok', extra: 1 }, { name: 'ok', data: [1] }, { name: 'ok', id: '' }, {}]) {
      const answer = await post(body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    expect((await svc.api.get(`${EVENTS}/0123456789abcdef01234567`)).status).toBe(404);
  });

  it('lists events newest first by name, with pagination', async () => {
    const name = eventName();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await post({ name, data: { i } })).body.eventId);
    await post({ name: `${name}.x`, data: {} });
    const first = await listed(name, '&perPage=2');
    expect(first.pagination).toEqual({ total: 3, page: 1, perPage: 2, totalPages: 2 });
    expect(first.events.map((event: any) => event.eventId)).toEqual([ids[2], ids[1]]);
    const second = await listed(name, '&perPage=2&page=2');
    expect(second.events.map((event: any) => event.eventId)).toEqual([ids[0]]);
    expect((await svc.api.get(`${EVENTS}?perPage=101`)).status).toBe(400);
  });

  it('checks triggers on save: 400 naming the trigger, bounds on number and names; a change bumps the version and is audited', async () => {
    const create = (triggers: unknown) => svc.api.post(wf(), { name: uniqueName('bad'), canvas: CANVAS, nodes: [echoStep('A')], triggers });
    const syntax = await create([{ event: 'a' }, { event: 'b', filterCel: 'event.data.total >' }]);
    expect(syntax.status).toBe(400);
    expect(syntax.body.detail.problems).toHaveLength(1);
    expect(syntax.body.detail.problems[0]).toMatch(/^triggers\[1\]\.filterCel: /);
    const variable = await create([{ event: 'a', inputCel: '{ "x": input.x }' }]);
    expect(variable.body.detail.problems[0]).toMatch(/^triggers\[0\]\.inputCel: .*input/);
    expect((await create(Array.from({ length: 21 }, () => ({ event: 'a' })))).status).toBe(400);
    expect((await create([{ event: 'bad name' }])).status).toBe(400);
    expect((await create([{ event: 'a', filterCel: 'x'.repeat(4097) }])).status).toBe(400);
    expect((await create([{ event: 'a', other: 1 }])).status).toBe(400);

    const yaml = await svc.api.request('POST', wf(), undefined, {
      contentType: 'application/yaml',
      raw: `name: ${uniqueName('yaml')}\ncanvas: { viewport: { x: 0, y: 0, zoom: 1 } }\nnodes:\n  - { name: A, nodeType: step, executorKey: echo }\ntriggers:\n  - event: order.created\n    filterCel: event.data.total > 100.0\n`,
    });
    expect(yaml.status, yaml.text).toBe(201);
    expect(yaml.body.triggers).toEqual([{ event: 'order.created', filterCel: 'event.data.total > 100.0', inputCel: null }]);

    const workflow = await triggered([{ event: 'a' }]);
    const updated = await svc.api.put(wf(`/${workflow.id}`), { triggers: [{ event: 'b', filterCel: 'event.data.ok' }] });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, triggers: [{ event: 'b', filterCel: 'event.data.ok', inputCel: null }] });
    expect((await svc.api.put(wf(`/${workflow.id}`), { triggers: [{ event: 'b', filterCel: 'nope(' }] })).status).toBe(400);
    const audit = await svc.api.get(wf(`/${workflow.id}/audit`));
    expect(audit.body.entries[0]).toMatchObject({ type: 'workflow.updated', payload: { fromVersion: 1, toVersion: 2, fields: ['triggers'] } });
  });
});

describe('event triggers with authentication: scope and visibility', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ edge: { authenticator: await Authenticator.create(jwtAuthConfig()) } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('POST needs events-write (403 without, whatever else); runs record the sender; GET shows each caller only its workflows', async () => {
    const [alice, bob, carl, sender, admin] = await Promise.all([
      signToken('alice'),
      signToken('bob'),
      signToken('carl'),
      signToken('sender', { scopes: ['events-write'] }),
      signToken('root', { scopes: [...USER_SCOPES, 'workflows-admin'] }),
    ]);
    const name = eventName();
    const create = async (token: string) => {
      const created = await call(svc.baseUrl, 'POST', wf(), token, { name: uniqueName('events'), canvas: CANVAS, nodes: [echoStep('A')], triggers: [{ event: name }] });
      expect(created.status).toBe(201);
      expect((await call(svc.baseUrl, 'POST', wf(`/${created.body.id}/toggle`), token, { enabled: true })).status).toBe(200);
      return created.body.id as string;
    };
    const aliceWorkflow = await create(alice);
    const bobWorkflow = await create(bob);

    const denied = await call(svc.baseUrl, 'POST', EVENTS, admin, { name, data: {} });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatchObject({ error: 'permission_denied', details: { requiredScope: 'events-write' } });
    expect((await call(svc.baseUrl, 'POST', EVENTS, null, { name, data: {} })).status).toBe(401);

    const sent = await call(svc.baseUrl, 'POST', EVENTS, sender, { name, data: { k: 1 } });
    expect(sent.status).toBe(202);
    expect(sent.body.runIds).toHaveLength(2);
    // The sender may not read what it started (no workflows-read); the owner sees who started it.
    expect((await call(svc.baseUrl, 'GET', EVENTS, sender)).status).toBe(403);
    const aliceRuns = (await call(svc.baseUrl, 'GET', wf(`/${aliceWorkflow}/runs`), alice)).body.runs;
    const aliceRun = (await call(svc.baseUrl, 'GET', wf(`/${aliceWorkflow}/runs/${aliceRuns[0].id}`), alice)).body;
    expect(aliceRun).toMatchObject({ triggerSource: 'event', eventId: sent.body.eventId, triggeredBy: { userId: 'sender' } });

    const seen = async (token: string) => (await call(svc.baseUrl, 'GET', `${EVENTS}?name=${name}`, token)).body;
    const byAlice = await seen(alice);
    expect(byAlice.pagination.total).toBe(1);
    expect(byAlice.events[0].runs).toEqual([{ workflowId: aliceWorkflow, runId: aliceRuns[0].id }]);
    expect((await seen(bob)).events[0].runs.map((run: any) => run.workflowId)).toEqual([bobWorkflow]);
    expect(await seen(carl)).toMatchObject({ events: [], pagination: { total: 0 } });
    expect((await seen(admin)).events[0].runs).toHaveLength(2);
    expect((await call(svc.baseUrl, 'GET', `${EVENTS}/${sent.body.eventId}`, carl)).status).toBe(404);
    expect((await call(svc.baseUrl, 'GET', `${EVENTS}/${sent.body.eventId}`, bob)).body.runs).toHaveLength(1);
  });

  it("an event id is the sender's own: another sender's same id is its own event, and cannot read, replay or take over the first", async () => {
    const [billing, shop, owner] = await Promise.all([
      signToken('billing', { scopes: ['events-write'] }),
      signToken('shop', { scopes: ['events-write'] }),
      signToken('owner'),
    ]);
    const [paid, created] = [eventName('order.paid'), eventName('user.created')];
    const workflowOn = async (event: string) => {
      const made = await call(svc.baseUrl, 'POST', wf(), owner, { name: uniqueName('events'), canvas: CANVAS, nodes: [echoStep('A')], triggers: [{ event }] });
      expect((await call(svc.baseUrl, 'POST', wf(`/${made.body.id}/toggle`), owner, { enabled: true })).status).toBe(200);
      return made.body.id as string;
    };
    const [paidWorkflow, createdWorkflow] = [await workflowOn(paid), await workflowOn(created)];

    const first = await call(svc.baseUrl, 'POST', EVENTS, billing, { name: paid, id: '1', data: { order: 7 } });
    expect(first.status).toBe(202);
    const second = await call(svc.baseUrl, 'POST', EVENTS, shop, { name: created, id: '1', data: { user: 'u' } });
    expect(second.status).toBe(202);
    expect(second.body.eventId).not.toBe(first.body.eventId);
    expect(second.body.runIds).toHaveLength(1);
    expect(second.body.runIds).not.toEqual(first.body.runIds);
    const createdRuns = (await call(svc.baseUrl, 'GET', wf(`/${createdWorkflow}/runs`), owner)).body.runs;
    expect(createdRuns.map((run: any) => run.id)).toEqual(second.body.runIds);
    // The same body under another sender is another event too; each sender's repeat gets its own answer.
    const copy = await call(svc.baseUrl, 'POST', EVENTS, shop, { name: paid, id: '2', data: { order: 7 } });
    expect((await call(svc.baseUrl, 'POST', EVENTS, billing, { name: paid, id: '1', data: { order: 7 } })).body).toEqual(first.body);
    expect((await call(svc.baseUrl, 'POST', EVENTS, shop, { name: created, id: '1', data: { user: 'u' } })).body).toEqual(second.body);
    expect((await call(svc.baseUrl, 'GET', wf(`/${paidWorkflow}/runs`), owner)).body.runs).toHaveLength(2);
    expect(copy.body.eventId).not.toBe(first.body.eventId);

    // A stalled event of billing: shop's post of its id makes shop's own event and leaves billing's to billing.
    const stalled = await svc.repos.inboundEvents.receive({
      name: paid,
      data: { order: 8 },
      sourceId: 'stalled-9',
      senderId: 'user:billing',
      bodyHash: hashBody({ name: paid, data: { order: 8 } }),
      now: new Date(Date.now() - 60_000),
      retentionMs: 86_400_000,
      dedupeMs: 86_400_000,
    });
    if (!stalled.won) throw new Error('stalled event not stored');
    const byShop = await call(svc.baseUrl, 'POST', EVENTS, shop, { name: paid, id: 'stalled-9', data: { order: 8 } });
    expect(byShop.status).toBe(202);
    expect(byShop.body.eventId).not.toBe(stalled.event.id);
    expect((await svc.repos.inboundEvents.get(stalled.event.id))?.state).toBe('starting');
    const byBilling = await call(svc.baseUrl, 'POST', EVENTS, billing, { name: paid, id: 'stalled-9', data: { order: 8 } });
    expect(byBilling.body).toMatchObject({ eventId: stalled.event.id, runIds: [expect.any(String)] });
    const started = (await call(svc.baseUrl, 'GET', wf(`/${paidWorkflow}/runs/${byBilling.body.runIds[0]}`), owner)).body;
    expect(started.triggeredBy).toMatchObject({ userId: 'billing' });
  });
});
