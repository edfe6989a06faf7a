/**
 * Idempotent run starts (issue "Run control" item 10, issue #21 "Shape"): `Idempotency-Key` on
 * POST .../runs, and on retry, replay and node rerun, starts a run at most once per workflow and
 * key, even under concurrent retries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

async function enabledWorkflow(): Promise<string> {
  const created = await svc.createWorkflow({ name: uniqueName('idempotent'), canvas: CANVAS, nodes: [echoStep('A')] });
  await svc.enable(created.id);
  return created.id;
}

function trigger(workflowId: string, key: string | undefined, body: Record<string, unknown>, path = `/${workflowId}/runs`) {
  return fetch(`${svc.baseUrl}${wf(path)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: JSON.stringify(body),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
}

describe('Idempotency-Key', () => {
  it('starts one run for 20 concurrent identical requests, and returns it to every one', async () => {
    const workflowId = await enabledWorkflow();
    const body = { initialInput: { order: 42, items: ['a', 'b'] } };
    const responses = await Promise.all(Array.from({ length: 20 }, () => trigger(workflowId, 'order-42', body)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(202));
    const runIds = new Set(responses.map((r) => r.body.runId));
    expect(runIds.size).toBe(1);
    const [runId] = [...runIds];
    await svc.waitForRun(workflowId, runId!);
    expect((await svc.api.get(wf(`/${workflowId}/runs`))).body.pagination.total).toBe(1);

    // Later, a repeat with the same body in another key order gets the same run.
    const again = await trigger(workflowId, 'order-42', { initialInput: { items: ['a', 'b'], order: 42 } });
    expect(again).toMatchObject({ status: 202, body: { runId, status: 'completed' } });
  });

  it('lets at most 64 requests wait on one key while its run is being created; one more gets a 409 at once', async () => {
    const workflowId = await enabledWorkflow();
    const body = { initialInput: { slow: true } };
    // Hold the winner's run creation until every other request has answered or is waiting.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const runs = svc.repos.runs as unknown as { create: (...args: unknown[]) => Promise<unknown> };
    const create = runs.create;
    runs.create = async (...args: unknown[]) => {
      await held;
      return create.apply(svc.repos.runs, args);
    };
    try {
      const pending = Array.from({ length: 70 }, () => trigger(workflowId, 'slow-key', body));
      // 1 winner (held) + 64 waiters; the other 5 are refused without waiting for the winner.
      const early: Array<{ status: number; body: any }> = [];
      for (const p of pending) void p.then((r) => early.push(r));
      await expect.poll(() => early.length, { timeout: 10_000 }).toBe(5);
      expect(early.map((r) => r.status)).toEqual(Array(5).fill(409));
      expect(early[0]!.body.detail.message).toMatch(/still starting its run and 64 more wait for it; retry in a moment/);
      release();
      const answers = await Promise.all(pending);
      const accepted = answers.filter((r) => r.status === 202);
      expect(accepted).toHaveLength(65);
      expect(new Set(accepted.map((r) => r.body.runId)).size).toBe(1);
    } finally {
      runs.create = create;
      release();
    }
  });

  it('refuses the same key with another body (409), and keys are per workflow', async () => {
    const workflowId = await enabledWorkflow();
    const first = await trigger(workflowId, 'k-1', { initialInput: { n: 1 } });
    expect(first.status).toBe(202);
    const other = await trigger(workflowId, 'k-1', { initialInput: { n: 2 } });
    expect(other.status).toBe(409);
    expect(other.body.detail).toEqual({ error: 'conflict', message: "Idempotency-Key 'k-1' was already used with a different request body for this workflow" });
    const elsewhere = await trigger(await enabledWorkflow(), 'k-1', { initialInput: { n: 2 } });
    expect(elsewhere.status).toBe(202);
    expect(elsewhere.body.runId).not.toBe(first.body.runId);
    const without = await Promise.all([trigger(workflowId, undefined, {}), trigger(workflowId, undefined, {})]);
    expect(new Set(without.map((r) => r.body.runId)).size).toBe(2);
  });

  it('forgets a key whose request failed, so a corrected request can use it; rejects malformed keys', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('idempotent disabled'), canvas: CANVAS, nodes: [echoStep('A')] });
    const refused = await trigger(created.id, 'retry-me', {});
    expect(refused.status).toBe(400);
    await svc.enable(created.id);
    expect((await trigger(created.id, 'retry-me', {})).status).toBe(202);
    const tooLong = await trigger(created.id, 'x'.repeat(256), {});
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.detail.error).toBe('invalid_request');
    // The service's own keys (a schedule's tick, an event) are out of a client's reach.
    for (const key of ['schedule:0123456789abcdef01234567:2026-01-01T00:00:00.000Z', 'Event:x:0']) {
      const reserved = await trigger(created.id, key, {});
      expect(reserved.status, key).toBe(400);
      expect(reserved.body.detail.message).toMatch(/may not start with/);
    }
  });

  it('retry, replay and node rerun start their child run once per key; the same key for another start is a 409', async () => {
    const workflowId = await enabledWorkflow();
    const source = (await trigger(workflowId, undefined, { initialInput: { n: 1 } })).body.runId as string;
    await svc.waitForRun(workflowId, source);
    const nodeId = (await svc.api.get(wf(`/${workflowId}`))).body.nodes[0].id as string;
    for (const [what, path, body] of [
      ['retry', `/${workflowId}/runs/${source}/retry`, {}],
      ['replay', `/${workflowId}/runs/${source}/replay`, {}],
      ['rerun', `/${workflowId}/runs/${source}/nodes/${nodeId}/rerun`, {}],
    ] as const) {
      const answers = await Promise.all(Array.from({ length: 5 }, () => trigger(workflowId, `${what}-key`, body, path)));
      expect(answers.map((answer) => answer.status), what).toEqual(Array(5).fill(202));
      expect(new Set(answers.map((answer) => answer.body.runId)).size, what).toBe(1);
      await svc.waitForRun(workflowId, answers[0]!.body.runId);
    }
    // One child run per operation, however many requests.
    const children = (await svc.api.get(wf(`/${workflowId}/runs?perPage=100`))).body.runs.filter((run: any) => run.parentRunId === source);
    expect(children.map((run: any) => run.triggerSource).sort()).toEqual(['node_rerun', 'replay', 'retry']);
    // A key that started a retry cannot start a replay, or a trigger.
    expect((await trigger(workflowId, 'retry-key', {}, `/${workflowId}/runs/${source}/replay`)).status).toBe(409);
    expect((await trigger(workflowId, 'retry-key', {})).status).toBe(409);
  });
});
