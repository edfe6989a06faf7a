/**
 * Trigger options (issue "Run control" item 9): `parallelLimit` bounds the children of a parallel
 * node in flight at once for one run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

const fanOut = () => ({
  name: uniqueName('fan out'),
  canvas: CANVAS,
  nodes: [
    {
      name: 'Fan',
      nodeType: 'parallel',
      children: ['a', 'b', 'c'].map((id) => ({ id, name: `Sleep ${id}`, nodeType: 'step', executorKey: 'sleep', config: { ms: 40 } })),
    },
  ],
});

/** The children's [start, end] in start order, epoch ms. */
function spans(run: any): Array<[number, number]> {
  return run.nodeRuns
    .filter((n: any) => n.nodeType === 'step')
    .map((n: any) => [Date.parse(n.startedAt), Date.parse(n.finishedAt)] as [number, number])
    .sort((x: [number, number], y: [number, number]) => x[0] - y[0]);
}

describe('parallelLimit', () => {
  it('runs the children of a parallel node one at a time with parallelLimit 1, and a retry keeps it', async () => {
    const created = await svc.createWorkflow(fanOut());
    await svc.enable(created.id);
    const triggered = await svc.trigger(created.id, { parallelLimit: 1 });
    expect(triggered.status).toBe(202);
    const run = await svc.waitForRun(created.id, triggered.body.runId);
    expect(run.status).toBe('completed');
    const sequential = spans(run);
    for (let i = 1; i < sequential.length; i++) expect(sequential[i]![0]).toBeGreaterThanOrEqual(sequential[i - 1]![1]);

    const unbounded = await svc.waitForRun(created.id, (await svc.trigger(created.id, {})).body.runId);
    const together = spans(unbounded);
    expect(together[1]![0]).toBeLessThan(together[0]![1]); // by default they overlap

    const retried = await svc.api.post(wf(`/${created.id}/runs/${run.id}/retry`), { initialInput: {} });
    const child = await svc.waitForRun(created.id, retried.body.runId);
    const again = spans(child);
    for (let i = 1; i < again.length; i++) expect(again[i]![0]).toBeGreaterThanOrEqual(again[i - 1]![1]);
  });

  it('rejects a limit below 1', async () => {
    const created = await svc.createWorkflow(fanOut());
    await svc.enable(created.id);
    expect((await svc.trigger(created.id, { parallelLimit: 0 })).status).toBe(400);
  });
});
