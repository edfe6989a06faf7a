/**
 * Big definitions (issue 10 item 4): a 2,000-step linear chain — the default node limit,
 * `SWITCHYARD_MAX_NODES` — is accepted, runs to the end, and every node run is recorded; one node
 * more is refused naming the limit. The rate of long chains is a benchmark figure (`npm run bench`).
 *
 * Embedded store only: `echo` nests each input in its output, so step i's output is nested 2i
 * levels deep, and MongoDB refuses documents nested deeper than 100 levels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_NODES } from '@switchyard/domain';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.close());

const chain = (steps: number) => Array.from({ length: steps }, (_, i) => echoStep(`S${i}`, { i }));

describe.skipIf(process.env['MONGODB_URI'])('a 2,000-node chain', () => {
  it('is accepted at the default limit, completes, and records every node run in order', async () => {
    expect(DEFAULT_MAX_NODES).toBe(2_000);
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('long chain'), canvas: CANVAS, nodes: chain(2_000) });
    // Polled by the run list: a run detail carries the 2,000-node definition snapshot and the final
    // output, which `echo` has nested 4,000 levels deep (serializing that takes half the stack).
    let run: any;
    for (const deadline = Date.now() + 180_000; ; ) {
      const listed = await svc.api.get(wf(`/${workflowId}/runs?perPage=1&includeNodeRuns=false`));
      expect(listed.status).toBe(200);
      run = listed.body.runs.find((item: any) => item.id === runId);
      if (['completed', 'failed', 'cancelled'].includes(run?.status)) break;
      if (Date.now() > deadline) throw new Error(`run still ${run?.status} after 180 s`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(run.status).toBe('completed');
    expect(run.nodeRunCount).toBe(2_000);
    const names: string[] = [];
    for (let page = 1; page <= 20; page++) {
      const response = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/nodes?page=${page}&perPage=100`));
      expect(response.status).toBe(200);
      for (const nodeRun of response.body.nodeRuns) {
        expect(nodeRun.status).toBe('completed');
        names.push(nodeRun.nodeName);
      }
    }
    expect(names).toEqual(chain(2_000).map((node) => node.name));
  }, 240_000);

  it('refuses one node more, naming the limit', async () => {
    const response = await svc.api.post(wf(), { name: uniqueName('too long'), canvas: CANVAS, nodes: chain(2_001) });
    expect(response.status).toBe(400);
    expect(response.body.detail.message).toContain('at most 2000 nodes, this one has 2001');
  });
});
