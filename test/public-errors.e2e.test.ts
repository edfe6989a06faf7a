/**
 * What run records show of a failure (issue #16 item 9): no absolute path of the data directory and
 * no network address reach API answers (node run `error`, run events, `errorSummary`), while they
 * still say what failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc?.close());

/** Runs a one-step workflow to its end; its detail (with node runs) and the raw text of every answer about it. */
async function failedRun(step: Record<string, unknown>) {
  const { workflowId, runId } = await svc.startRun({ name: uniqueName('public-errors'), canvas: CANVAS, nodes: [step] });
  await svc.waitForRun(workflowId, runId, { timeoutMs: 30_000 });
  const detail = await svc.api.get(wf(`/${workflowId}/runs/${runId}?includeNodeRuns=true`));
  const events = await svc.api.get(wf(`/${workflowId}/runs/${runId}/events`));
  return { run: detail.body, answers: `${detail.text}\n${events.text}` };
}

describe('failure text in run records', () => {
  it("names the filesystem server's allowed directory as $DATA_DIR, never its absolute path", async () => {
    const { run, answers } = await failedRun({ name: 'Read', nodeType: 'step', executorKey: 'read-file', config: { path: '/etc/passwd' } });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toContain('/etc/passwd not in $DATA_DIR/files');
    const dataDir = svc.filesDir.replace(/\/files$/, '');
    expect(answers).not.toContain(dataDir);
  });

  it('names no address of a webhook that cannot be reached', async () => {
    const { run, answers } = await failedRun({ name: 'Notify', nodeType: 'step', executorKey: 'notify', config: {} });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toMatch(/ECONNREFUSED \[address\]/);
    expect(answers).not.toMatch(/127\.0\.0\.1|:8089/);
  });
});
