/**
 * Input a fuzzing pass found to break the service, kept as regressions: each is a clear 400 (or a
 * node failure the user caused), never a 500, and nothing stored becomes unreadable.
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

/** `[[[...0...]]]` nested `depth` levels. */
function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

const workflow = (nodes: unknown[]) => ({ name: uniqueName('hostile'), canvas: CANVAS, nodes });

function expectClear400(response: { status: number; body: any }, message: RegExp): void {
  expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(400);
  expect(response.body.detail.error).toBe('invalid_request');
  expect(response.body.detail.message).toMatch(message);
}

describe('nesting and size', () => {
  it.each([40, 3_000])('initialInput nested %i levels is a 400', async (depth) => {
    const created = await svc.createWorkflow(workflow([echoStep('A')]));
    await svc.enable(created.id);
    expectClear400(await svc.trigger(created.id, { initialInput: { x: nested(depth) } }), /nests deeper than/);
  });

  it('a body nested 100,000 levels (sent as raw text) is a 400', async () => {
    const created = await svc.createWorkflow(workflow([echoStep('A')]));
    await svc.enable(created.id);
    const raw = `{"initialInput":{"x":${'['.repeat(100_000)}0${']'.repeat(100_000)}}}`;
    const response = await svc.api.request('POST', wf(`/${created.id}/runs`), undefined, { raw, contentType: 'application/json' });
    expect(response.status).toBe(400);
    expect(response.body.detail.error).toBe('invalid_request');
  });

  it('a node tree nested hundreds of levels is a 400 before schema validation', async () => {
    let node: Record<string, unknown> = echoStep('leaf');
    for (let i = 0; i < 400; i++) node = { name: `c${i}`, nodeType: 'condition', conditionCel: 'true', trueSteps: [node] };
    expectClear400(await svc.api.post(wf(), workflow([node])), /nests deeper than 128 levels/);
  });

  it('a very wide array is measured without overflowing (no 500)', async () => {
    const created = await svc.createWorkflow(workflow([echoStep('A')]));
    await svc.enable(created.id);
    const response = await svc.trigger(created.id, { initialInput: { x: new Array(150_000).fill(0) } });
    expect(response.status).toBe(202);
  });

  it('an edited output nested thousands of levels is a 400 and the run stays readable', async () => {
    const { workflowId, runId } = await svc.startRun(workflow([{ ...echoStep('G'), id: 'g', humanReview: { requiresOutputReview: true } }]));
    await svc.waitForGate(workflowId, runId);
    expectClear400(await svc.approve(workflowId, runId, { stepId: 'g:review', resolution: 'edit', editedOutput: nested(3_000) }), /nests deeper than/);
    expectClear400(await svc.approve(workflowId, runId, { stepId: 'g:review', resolution: 'edit', editedOutput: nested(40) }), /editedOutput nests deeper than 32/);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).status).toBe(200);
    expect((await svc.approve(workflowId, runId, { stepId: 'g:review', resolution: 'edit', editedOutput: { ok: true } })).status).toBe(200);
    expect((await svc.waitForRun(workflowId, runId)).finalOutput).toEqual({ ok: true });
  });

  it('an output too large to store fails its node with a clear reason, executing once', async () => {
    const big = 'x'.repeat(900_000);
    const { run } = await svc.runWorkflow(workflow([echoStep('Blow up', { v: { $cel: '[input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s, input.s]' } })]), { s: big });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toMatch(/^Node 'Blow up' failed: output too large to store/);
    expect(run.nodeRuns[0]).toMatchObject({ status: 'failed', attempt: 1 });
  });
});

describe('odd keys and text', () => {
  it('unknown keys in stepConfig and resolvedDependencies are ignored, even a NUL key', async () => {
    const created = await svc.createWorkflow(workflow([{ ...echoStep('A'), stepConfig: { maxRetries: 1, '\u0000': 1, foo_bar: 2 } }]));
    expect(created.nodes[0].stepConfig).toEqual({ maxRetries: 1, onError: 'fail', backoffBaseSeconds: 1, backoffMaxSeconds: 60 });
    const put = await svc.api.put(wf(`/${created.id}`), { nodes: created.nodes });
    expect(put.body.version).toBe(1);
    await svc.enable(created.id);
    const parent = await svc.trigger(created.id, {});
    await svc.waitForRun(created.id, parent.body.runId);
    const retry = await svc.trigger(created.id, { parentRunId: parent.body.runId, resolvedDependencies: [{ nodeId: created.nodes[0].id, resolution: 'rerun', '\u0000': 1 }] });
    expect(retry.status).toBe(202);
  });

  it('a lone UTF-16 surrogate is a 400 instead of being changed silently', async () => {
    expectClear400(await svc.api.post(wf(), workflow([echoStep('A', { '\ud800': 1 })])), /well-formed Unicode/);
    expectClear400(await svc.api.post(wf(), { ...workflow([echoStep('A')]), name: 'wf-\udfff' }), /well-formed Unicode/);
  });

  it('a node named __proto__ keeps its output', async () => {
    const { run } = await svc.runWorkflow(
      workflow([{ name: 'P', nodeType: 'parallel', children: [echoStep('__proto__', { a: 1 }), echoStep('other', { b: 2 })] }, echoStep('Next', { seen: { $cel: "previous_step_content['__proto__'].arguments.a" } })]),
    );
    expect(run.status, run.errorSummary).toBe('completed');
    expect(run.finalOutput.arguments).toEqual({ seen: 1 });
  });

  it('a form field named like an Object method is required like any other', async () => {
    const { workflowId, runId } = await svc.startRun(
      workflow([{ ...echoStep('F'), id: 'f', humanReview: { requiresUserInput: true, userInputSchema: [{ name: 'constructor', fieldType: 'string' }] } }]),
    );
    await svc.waitForGate(workflowId, runId);
    expectClear400(await svc.approve(workflowId, runId, { stepId: 'f', resolution: 'confirm' }), /field 'constructor' is required/);
  });
});

describe('router-level errors', () => {
  it('a malformed URL escape and an over-long id get the common error body', async () => {
    const bad = await svc.api.get('/api/v1/workflows/%E0%A4%A');
    expect(bad.status).toBe(400);
    expect(bad.body.detail.error).toBe('invalid_request');
    const long = await svc.api.get(`/api/v1/workflows/${'a'.repeat(200)}`);
    expect(long.status).toBeGreaterThanOrEqual(400);
    expect(long.status).toBeLessThan(500);
    expect(long.body.detail.error).toBe('invalid_request');
  });
});
