/**
 * Checks that save and start nothing (issue "Run control" item 9): POST /api/v1/workflows/validate
 * and a trigger with `dryRun: true`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, nested, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});


describe('POST /api/v1/workflows/validate', () => {
  it('reports every problem of a definition without saving it', async () => {
    const name = uniqueName('validate');
    const valid = await svc.api.post(wf('/validate'), { name, canvas: CANVAS, nodes: [echoStep('A')] });
    expect(valid).toMatchObject({ status: 200, body: { valid: true, problems: [] } });
    const invalid = await svc.api.post(wf('/validate'), {
      name,
      canvas: CANVAS,
      nodes: [
        { name: 'Unknown', nodeType: 'step', executorKey: 'no-such-executor' },
        { name: 'Bad CEL', nodeType: 'condition', conditionCel: 'input.x >', trueSteps: [echoStep('T')] },
      ],
    });
    expect(invalid.status).toBe(200);
    expect(invalid.body.valid).toBe(false);
    expect(invalid.body.problems.join('\n')).toMatch(/no-such-executor/);
    expect(invalid.body.problems.join('\n')).toMatch(/syntax error/);
    expect((await svc.api.get(wf(`?query=${encodeURIComponent(name)}`))).body.workflows).toEqual([]);
    expect((await svc.api.post(wf('/validate'), { name })).status).toBe(400); // not a definition at all
  });
});

describe('POST .../runs with dryRun', () => {
  it('checks a trigger and starts nothing', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('dry run'), canvas: CANVAS, nodes: [echoStep('A')] });
    const disabled = await svc.api.post(wf(`/${created.id}/runs`), { dryRun: true });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toEqual({
      valid: false,
      problems: ['Workflow is disabled. Please enable the workflow before triggering a run.'],
      dryRun: true,
      workflowId: created.id,
      workflowVersion: 1,
    });
    await svc.enable(created.id);
    expect((await svc.api.post(wf(`/${created.id}/runs`), { dryRun: true, initialInput: { a: 1 } })).body).toMatchObject({ valid: true, problems: [] });
    const deep = await svc.api.post(wf(`/${created.id}/runs`), { dryRun: true, initialInput: { x: nested(40) } });
    expect(deep.body).toMatchObject({ valid: false, problems: ['initialInput nests deeper than 32 levels'] });
    const orphanDependencies = await svc.api.post(wf(`/${created.id}/runs`), { dryRun: true, resolvedDependencies: [{ nodeId: 'a', resolution: 'rerun' }] });
    expect(orphanDependencies.body.problems).toEqual(['resolvedDependencies requires parentRunId']);
    expect((await svc.api.get(wf(`/${created.id}/runs`))).body.pagination.total).toBe(0);
    expect((await svc.api.post(wf(`/${'0'.repeat(24)}/runs`), { dryRun: true })).status).toBe(404);
  });
});
