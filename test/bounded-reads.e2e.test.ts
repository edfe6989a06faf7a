/**
 * Issue "Reliability" item 5: no read can exhaust memory. A run whose node runs hold tens of MB
 * (40 steps reading a 700 KB file with the real filesystem MCP server) is read by 24 clients at
 * once: every response stays within its byte budget, large snapshots are left out of lists (with
 * their sizes) and served whole by the node-run detail, node runs are paginated, and a step
 * whose output is over SWITCHYARD_MAX_OUTPUT_BYTES fails instead of being stored. The memory
 * such reads cost is a figure of the bench suite (`reads.peakRssGrowthMb`), not a bound here.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

const FILE_BYTES = 700_000;
const READS = 40;

describe('reads of a large run', () => {
  it('answer 24 concurrent readers with bounded responses', { timeout: 120_000 }, async () => {
    await writeFile(join(svc.filesDir, 'big.txt'), 'x'.repeat(FILE_BYTES));
    const { workflowId, run } = await svc.runWorkflow({
      name: uniqueName('big reads'),
      canvas: CANVAS,
      nodes: Array.from({ length: READS }, (_, i) => ({ name: `Read ${i}`, nodeType: 'step', executorKey: 'read-file', config: { path: 'big.txt' } })),
    });
    expect(run.status, run.errorSummary).toBe('completed');
    const base = wf(`/${workflowId}/runs/${run.id}`);

    // The memory these reads cost is a bench figure (`reads.peakRssGrowthMb`, bench/suite/read-figures.ts);
    // here: the bounds of the answers, which are what keeps it small.
    const paths = [base, `${base}/nodes`, wf(`/${workflowId}/runs`)];
    const responses = await Promise.all(Array.from({ length: 24 }, (_, i) => svc.api.get(paths[i % paths.length]!)));
    const largest = Math.max(...responses.map((r) => r.text.length));
    for (const response of responses) expect(response.status).toBe(200);
    expect(largest).toBeLessThan(5 * 2 ** 20); // the run's node runs hold > 28 MB

    const detail = responses[0]!.body;
    expect(detail.nodeRunCount).toBe(READS);
    expect(detail.nodeRunsUrl).toBe(`${base}/nodes`);
    expect(detail.nodeRuns.filter((n: any) => n.outputSnapshot === null)).toHaveLength(READS);
    const read = detail.nodeRuns.find((n: any) => n.nodeName === 'Read 7');

    expect(read.outputSnapshot).toBeNull();
    expect(read.omittedSnapshots.outputSnapshot).toBeGreaterThan(FILE_BYTES);
    expect(read.inputSnapshot).toEqual({ path: 'big.txt' });
    const full = await svc.api.get(`${base}/nodes/${read.id}`);
    expect(JSON.stringify(full.body.outputSnapshot).length).toBeGreaterThan(FILE_BYTES);
    expect(full.body.omittedSnapshots).toBeUndefined();
  });

  it('paginates the node runs of a run, 100 a page by default', async () => {
    const { workflowId, run } = await svc.runWorkflow({
      name: uniqueName('many nodes'),
      canvas: CANVAS,
      nodes: [{ name: 'Loop', nodeType: 'loop', loopConfig: { maxIterations: 150 }, children: [echoStep('Tick', { n: 1 })] }],
    });
    expect(run.status, run.errorSummary).toBe('completed');
    expect(run.nodeRuns).toHaveLength(100);
    expect(run.nodeRunCount).toBe(151);
    const base = wf(`/${workflowId}/runs/${run.id}/nodes`);
    const first = await svc.api.get(base);
    expect(first.body.nodeRuns).toHaveLength(100);
    expect(first.body.pagination).toEqual({ total: 151, page: 1, perPage: 100, totalPages: 2 });
    const second = await svc.api.get(`${base}?page=2`);
    expect(second.body.nodeRuns).toHaveLength(51);
    const ids = new Set([...first.body.nodeRuns, ...second.body.nodeRuns].map((n: any) => n.id));
    expect(ids.size).toBe(151);
    expect((await svc.api.get(`${base}?perPage=101`)).status).toBe(400);
    const small = await svc.api.get(`${base}?perPage=10&page=16`);
    expect(small.body.nodeRuns).toHaveLength(1);
    expect(small.body.nodeRuns[0].outputSnapshot).toMatchObject({ arguments: { n: 1 } });
  });

  it('fails a step whose output is over SWITCHYARD_MAX_OUTPUT_BYTES, without retrying it', async () => {
    const { run } = await svc.runWorkflow(
      {
        name: uniqueName('big output'),
        canvas: CANVAS,
        nodes: [echoStep('Blow up', { v: { $cel: '[input.s, input.s]' } }, { stepConfig: { maxRetries: 2, backoffBaseSeconds: 0.01 } })],
      },
      { s: 'y'.repeat(600_000) },
    );
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toMatch(/^Node 'Blow up' failed: output too large: \d+ bytes of JSON, over the limit of 1048576 \(SWITCHYARD_MAX_OUTPUT_BYTES\)/);
    expect(run.nodeRuns[0]).toMatchObject({ status: 'failed', attempt: 1, outputSnapshot: null });
  });

  it('fails a loop whose gathered output is over the limit, though each iteration is within it', async () => {
    const { run } = await svc.runWorkflow(
      {
        name: uniqueName('big loop'),
        canvas: CANVAS,
        nodes: [{ name: 'Gather', nodeType: 'loop', loopConfig: { maxIterations: 5 }, children: [echoStep('Part', { v: { $cel: 'input.s' } })] }],
      },
      { s: 'z'.repeat(150_000) },
    );
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toMatch(/^Node 'Gather' failed: output too large: \d+ bytes of JSON, over the limit of 1048576/);
    expect(run.nodeRuns.filter((n: any) => n.nodeName === 'Part' && n.status === 'completed').length).toBeGreaterThan(0);
  });

  it('keeps at most 8,192 characters of an error, on the node run, the run and its events', async () => {
    const { run } = await svc.runWorkflow({
      name: uniqueName('long error'),
      canvas: CANVAS,
      nodes: [{ name: 'Fail', nodeType: 'step', executorKey: 'flaky', config: { message: { $cel: "'e' + input.tail" } } }],
    }, { tail: 'e'.repeat(50_000) });
    expect(run.status).toBe('failed');
    expect(run.nodeRuns[0].error).toMatch(/^e{8192}… \(\d+ more characters left out\)$/);
    expect(run.errorSummary.length).toBeLessThan(8_300);
    const events = await svc.events(run.id);
    expect(Math.max(...events.map((e) => JSON.stringify(e.payload).length))).toBeLessThan(9_000);
  });
});
