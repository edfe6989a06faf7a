/**
 * Workflows whose steps call real MCP servers from npm over stdio, through the example registry
 * (`examples/executors.json`): the "everything" server (`sum`, `echo-tool`) and the filesystem
 * server (`write-file`, `read-file`) confined to this service instance's `<DATA_DIR>/files`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startService();
});

afterAll(async () => {
  await svc?.close();
});

function body(nodes: unknown[]): Record<string, unknown> {
  return { name: uniqueName('mcp'), canvas: CANVAS, nodes };
}

function byName(run: any): Record<string, any> {
  return Object.fromEntries(run.nodeRuns.map((n: any) => [n.nodeName, n]));
}

/** Text of an MCP text-content output (`{ content: [{ type: 'text', text }] }`). */
function text(output: any): string {
  expect(output.content).toEqual([expect.objectContaining({ type: 'text' })]);
  return output.content[0].text;
}

describe('real MCP tools', () => {
  it('sums from input, writes a record built with CEL, and reads it back', async () => {
    const fileName = { $cel: "'onboarding-' + input.customerName + '.txt'" };
    const { workflowId, run } = await svc.runWorkflow(
      body([
        { name: 'Sum', nodeType: 'step', executorKey: 'sum', config: { a: { $cel: 'input.a' }, b: 3 } },
        {
          name: 'Write Record',
          nodeType: 'step',
          executorKey: 'write-file',
          config: {
            path: fileName,
            content: { $cel: "'customer=' + input.customerName + '; type=' + input.customerType + '; ' + previous_step_content.content[0].text" },
          },
        },
        { name: 'Read Record', nodeType: 'step', executorKey: 'read-file', config: { path: fileName } },
      ]),
      { a: 2, customerName: 'ada', customerType: 'enterprise' },
    );
    expect(run.status, run.errorSummary).toBe('completed');
    const nodes = byName(run);
    expect(nodes['Sum']).toMatchObject({ status: 'completed', attempt: 1, inputSnapshot: { a: 2, b: 3 } });
    expect(text(nodes['Sum'].outputSnapshot)).toBe('The sum of 2 and 3 is 5.');

    const record = 'customer=ada; type=enterprise; The sum of 2 and 3 is 5.';
    expect(nodes['Write Record'].inputSnapshot).toEqual({ path: 'onboarding-ada.txt', content: record });
    expect(nodes['Write Record'].outputSnapshot).toEqual({ content: 'Successfully wrote to onboarding-ada.txt' });
    expect(nodes['Read Record'].outputSnapshot).toEqual({ content: record });
    expect(run.finalOutput).toEqual({ content: record });
    // The file really exists in this instance's allowed directory.
    expect(await readFile(join(svc.filesDir, 'onboarding-ada.txt'), 'utf8')).toBe(record);

    // The node run endpoints show the same real tool output.
    const nodeRuns = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/nodes`));
    expect(nodeRuns.body.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Sum', 'Write Record', 'Read Record']);
    const sumDetail = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/nodes/${nodes['Sum'].id}`));
    expect(text(sumDetail.body.outputSnapshot)).toBe('The sum of 2 and 3 is 5.');
  });

  it('a condition on input.customerType chooses between two MCP-calling branches', async () => {
    const created = await svc.createWorkflow(
      body([
        {
          name: 'Check Customer Type',
          nodeType: 'condition',
          conditionCel: "input.customerType == 'enterprise'",
          trueSteps: [
            { name: 'Enterprise Welcome', nodeType: 'step', executorKey: 'echo-tool', config: { message: { $cel: "'Welcome, ' + input.customerName" } } },
            {
              name: 'Enterprise Record',
              nodeType: 'step',
              executorKey: 'write-file',
              config: { path: { $cel: "'enterprise-' + input.customerName + '.txt'" }, content: { $cel: 'previous_step_content.content[0].text' } },
            },
          ],
          falseSteps: [{ name: 'Standard Quota', nodeType: 'step', executorKey: 'sum', config: { a: { $cel: 'input.seats' }, b: 10 } }],
        },
      ]),
    );
    await svc.enable(created.id);

    const enterprise = await svc.trigger(created.id, { initialInput: { customerType: 'enterprise', customerName: 'acme', seats: 5 } });
    const standard = await svc.trigger(created.id, { initialInput: { customerType: 'standard', customerName: 'bob', seats: 5 } });
    const [e, s] = await Promise.all([svc.waitForRun(created.id, enterprise.body.runId), svc.waitForRun(created.id, standard.body.runId)]);

    expect(e.status, e.errorSummary).toBe('completed');
    expect(e.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Check Customer Type', 'Enterprise Welcome', 'Enterprise Record']);
    expect(text(byName(e)['Enterprise Welcome'].outputSnapshot)).toBe('Echo: Welcome, acme');
    expect(byName(e)['Enterprise Record'].outputSnapshot).toEqual({ content: 'Successfully wrote to enterprise-acme.txt' });
    expect(await readFile(join(svc.filesDir, 'enterprise-acme.txt'), 'utf8')).toBe('Echo: Welcome, acme');

    expect(s.status, s.errorSummary).toBe('completed');
    expect(s.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Check Customer Type', 'Standard Quota']);
    expect(text(s.finalOutput)).toBe('The sum of 5 and 10 is 15.');
    await expect(readFile(join(svc.filesDir, 'enterprise-bob.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('parallel calls share the pooled server connection and keep their own results', async () => {
    const { run } = await svc.runWorkflow(
      body([
        {
          name: 'Sums',
          nodeType: 'parallel',
          children: [
            { name: 'one', nodeType: 'step', executorKey: 'sum', config: { a: 1, b: 1 } },
            { name: 'two', nodeType: 'step', executorKey: 'sum', config: { a: { $cel: 'input.x' }, b: 2 } },
            { name: 'three', nodeType: 'step', executorKey: 'sum', config: { a: 3, b: 0.5 } },
            { name: 'echo', nodeType: 'step', executorKey: 'echo-tool', config: { message: 'together' } },
          ],
        },
      ]),
      { x: 40 },
    );
    expect(run.status, run.errorSummary).toBe('completed');
    const output = run.finalOutput;
    expect(Object.keys(output).sort()).toEqual(['echo', 'one', 'three', 'two']);
    expect(text(output.one)).toBe('The sum of 1 and 1 is 2.');
    expect(text(output.two)).toBe('The sum of 40 and 2 is 42.');
    expect(text(output.three)).toBe('The sum of 3 and 0.5 is 3.5.');
    expect(text(output.echo)).toBe('Echo: together');
  });

  it("a tool error (isError) fails the node with the tool's message", async () => {
    const { run } = await svc.runWorkflow(
      body([{ name: 'Read Missing', nodeType: 'step', executorKey: 'read-file', config: { path: 'does-not-exist.txt' }, stepConfig: { maxRetries: 0 } }]),
    );
    expect(run.status).toBe('failed');
    const node = byName(run)['Read Missing'];
    expect(node).toMatchObject({ status: 'failed', attempt: 1, outputSnapshot: null, inputSnapshot: { path: 'does-not-exist.txt' } });
    expect(node.error).toMatch(/ENOENT: no such file or directory.*does-not-exist\.txt/);
    expect(run.errorSummary).toBe(`Node 'Read Missing' failed: ${node.error}`);
  });

  it('tool errors are retried per stepConfig; onError skip lets the run go on', async () => {
    const { run } = await svc.runWorkflow(
      body([
        { name: 'Sum', nodeType: 'step', executorKey: 'sum', config: { a: 1, b: 2 } },
        {
          name: 'Optional Read',
          nodeType: 'step',
          executorKey: 'read-file',
          config: { path: 'missing.txt' },
          stepConfig: { maxRetries: 1, backoffBaseSeconds: 0.01, onError: 'skip' },
        },
        { name: 'Echo Sum', nodeType: 'step', executorKey: 'echo-tool', config: { message: { $cel: 'previous_step_content.content[0].text' } } },
      ]),
    );
    expect(run.status, run.errorSummary).toBe('completed');
    const nodes = byName(run);
    expect(nodes['Optional Read']).toMatchObject({ status: 'skipped', attempt: 2, error: expect.stringMatching(/ENOENT/) });
    expect(text(nodes['Echo Sum'].outputSnapshot)).toBe('Echo: The sum of 1 and 2 is 3.');
  });

  it("arguments that fail the tool's inputSchema fail at once, without retries", async () => {
    const { run } = await svc.runWorkflow(
      body([{ name: 'Bad Sum', nodeType: 'step', executorKey: 'sum', config: { a: { $cel: 'input.a' }, b: 3 }, stepConfig: { maxRetries: 3, backoffBaseSeconds: 0.01 } }]),
      { a: 'two' },
    );
    expect(run.status).toBe('failed');
    expect(byName(run)['Bad Sum']).toMatchObject({ status: 'failed', attempt: 1, inputSnapshot: { a: 'two', b: 3 } });
    expect(run.errorSummary).toMatch(/^Node 'Bad Sum' failed: invalid arguments for MCP tool "get-sum" of server "everything": .*\/a/);
  });

  it('the filesystem server refuses paths outside its allowed directory', async () => {
    const { run } = await svc.runWorkflow(
      body([{ name: 'Escape', nodeType: 'step', executorKey: 'read-file', config: { path: '../../../etc/hostname' }, stepConfig: { maxRetries: 0 } }]),
    );
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toMatch(/^Node 'Escape' failed: .*(denied|outside)/i);
  });
});
