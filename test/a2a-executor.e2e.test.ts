/**
 * `a2a` executors over the API (issue 9 item 2): real A2A agents started in-test with the SDK's
 * server side (`support/a2a-agents.ts`), a registry file naming them, and the service as the tests
 * start it (trusted-proxy identity headers on, a downstream token minter). Covers: a step whose
 * config becomes the agent's message and whose completed task becomes the node's output; a failed
 * task (retried); `input-required` (failed at once, the question in the error); a hanging agent
 * stopped by `stepConfig.timeoutSeconds` and by a run cancel (the agent receives `CancelTask`); an
 * `a2aPool` failing over from a down agent to a good one (the node run names the agent that served
 * and the one that failed), and refusing MCP/HTTP keys at save; the downstream token of the run's
 * trigger, bound to the agent (`aud` its origin, `azp` its key); the catalogue showing the agent
 * cards; a card pointing at another origin (refused, or — listed in `allowedOrigins` — whose
 * planted error body never reaches the run's records).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HmacTokenMinter } from '@switchyard/runner';
import { behaviours, downAgentUrl, messageText, startAgent, type TestAgent } from './support/a2a-agents.ts';
import { CANVAS, PROXY_HEADERS, startService, uniqueName, wf, type TestService } from './support/service.ts';

const TOKEN_SECRET = 'a2a-downstream-secret-of-32-bytes+';
const TOKEN_AUDIENCE = 'agents';

let good: TestAgent;
let failing: TestAgent;
let hanging: TestAgent;
let asking: TestAgent;
let pointing: TestAgent;
let foreign: Server;
let foreignOrigin: string;
const foreignRequests: string[] = [];
let downUrl: string;
let registryDir: string;
let svc: TestService;

beforeAll(async () => {
  good = await startAgent({
    name: 'Summarizer',
    description: 'Summarizes documents',
    skills: [{ id: 'summarize', name: 'Summarize', description: 'Summarizes a document', tags: ['text'] }],
    behaviour: behaviours.answer('A short summary.', { sentences: 1 }),
  });
  failing = await startAgent({ name: 'Flaky', behaviour: behaviours.fail('upstream model unavailable') });
  hanging = await startAgent({ name: 'Sloth', behaviour: behaviours.hang() });
  asking = await startAgent({ name: 'Clerk', behaviour: behaviours.askForInput('Which account do you mean?') });
  // Another origin answering 500 with a planted secret, and an agent whose card points there.
  foreign = createServer((request, response) => {
    foreignRequests.push(`${request.method} ${request.url}`);
    request.resume();
    response.writeHead(500, { 'content-type': 'text/plain' }).end('db_password=hunter2');
  });
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
  foreignOrigin = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
  pointing = await startAgent({ name: 'Pointing', interfaceUrl: `${foreignOrigin}/agent`, behaviour: behaviours.answer('unused', null) });
  downUrl = await downAgentUrl();
  registryDir = await mkdtemp(join(tmpdir(), 'switchyard-a2a-'));
  const registryFile = join(registryDir, 'executors.json');
  await writeFile(
    registryFile,
    JSON.stringify({
      executors: {
        summarizer: { kind: 'a2a', url: good.url },
        flaky: { kind: 'a2a', url: failing.url },
        sloth: { kind: 'a2a', url: hanging.url },
        clerk: { kind: 'a2a', url: asking.url },
        offline: { kind: 'a2a', url: downUrl },
        pointing: { kind: 'a2a', url: pointing.url },
        'pointing-allowed': { kind: 'a2a', url: pointing.url, allowedOrigins: [foreignOrigin] },
        hook: { kind: 'http', url: 'http://127.0.0.1:9/hook' },
        echo: { kind: 'builtin', name: 'echo' },
      },
    }),
  );
  svc = await startService({
    registryFile,
    trustProxyIdentity: true,
    downstreamTokens: new HmacTokenMinter({ secret: TOKEN_SECRET, audience: TOKEN_AUDIENCE }),
  });
});

afterAll(async () => {
  await svc?.close();
  await Promise.all([good, failing, hanging, asking, pointing].map((agent) => agent?.close()));
  foreign?.closeAllConnections();
  await new Promise((resolve) => (foreign ? foreign.close(resolve) : resolve(undefined)));
  if (registryDir) await rm(registryDir, { recursive: true, force: true });
});

const fast = { backoffBaseSeconds: 0.01, backoffMaxSeconds: 0.02 };

function askStep(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Ask', nodeType: 'step', executorKey: 'summarizer', config: { text: 'Summarize this' }, ...extra };
}

/** Creates, enables and triggers a workflow of `nodes` with `headers` on the trigger; returns the ids. */
async function trigger(nodes: unknown[], initialInput: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<{ workflowId: string; runId: string }> {
  const created = await svc.createWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes });
  await svc.enable(created.id);
  // Whoever the headers name may run it (issue #18: per-workflow roles).
  await svc.share(created.id, { operators: ['*'] });
  const response = await fetch(`${svc.baseUrl}${wf(`/${created.id}/runs`)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PROXY_HEADERS, ...headers },
    body: JSON.stringify({ initialInput }),
  });
  expect(response.status).toBe(202);
  return { workflowId: created.id, runId: ((await response.json()) as { runId: string }).runId };
}

/** `url` as run records show it: its origin replaced by `[address]` (public-text.ts). */
function publicUrl(url: string): string {
  return url.replace(new URL(url).origin, '[address]');
}

describe('a2a executors over the API', () => {
  it("sends the step's evaluated config as the message and stores the completed task as the output", async () => {
    const before = good.messages.length;
    const step = askStep({ config: { text: { $cel: "'Summarize ' + input.doc" }, maxSentences: 1 } });
    const { run } = await svc.runWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes: [step] }, { doc: 'the quarterly report' });
    expect(run.status).toBe('completed');
    const [nodeRun] = run.nodeRuns;
    expect(nodeRun).toMatchObject({
      status: 'completed',
      attempt: 1,
      executorKey: 'summarizer',
      outputSnapshot: {
        state: 'completed',
        text: 'A short summary.',
        data: { sentences: 1 },
        artifacts: [{ name: 'result', parts: [{ kind: 'text', text: 'A short summary.' }, { kind: 'data', data: { sentences: 1 } }] }],
        message: null,
        agent: { name: 'Summarizer', url: good.url },
      },
    });
    expect(nodeRun).not.toHaveProperty('poolAttempts');
    const sent = good.messages[before]!;
    expect(messageText(sent)).toBe('Summarize the quarterly report');
    expect(sent.parts[1]!.content).toEqual({ $case: 'data', value: { maxSentences: 1 } });
    expect(sent.metadata).toMatchObject({ 'io.switchyard/run-id': run.id, 'io.switchyard/node-id': nodeRun.nodeId, 'io.switchyard/iteration-path': '' });
  });

  it('retries a failed task and then fails the run with the agent\'s status message', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes: [askStep({ executorKey: 'flaky', stepConfig: { maxRetries: 1, ...fast } })] });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe(`Node 'Ask' failed: A2A agent ${publicUrl(failing.url)} failed the task: upstream model unavailable`);
    expect(run.nodeRuns[0]).toMatchObject({ status: 'failed', attempt: 2, executorKey: 'flaky' });
  });

  it('fails input-required at once with the state and the agent\'s question', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes: [askStep({ executorKey: 'clerk', stepConfig: { maxRetries: 2, ...fast } })] });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe(
      `Node 'Ask' failed: A2A agent ${publicUrl(asking.url)} stopped in task state input-required, asking: Which account do you mean?; a step cannot answer an agent, so the attempt fails`,
    );
    expect(run.nodeRuns[0]).toMatchObject({ status: 'failed', attempt: 1 });
  });

  it('fails a hanging agent after stepConfig.timeoutSeconds, and cancels its task', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes: [askStep({ executorKey: 'sloth', stepConfig: { timeoutSeconds: 1 } })] });
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe(`Node 'Ask' failed: executor "sloth" timed out after 1 s`);
    // Sent best-effort once the call's signal aborted (the attempt itself failed at once).
    expect(await hanging.nextCancel()).toEqual(expect.any(String));
  });

  it('cancels the agent task when the run is cancelled', async () => {
    const { workflowId, runId } = await trigger([askStep({ executorKey: 'sloth', stepConfig: { timeoutSeconds: 120 } })]);
    // The agent has streamed this run's working task: the executor knows the task id.
    await expect.poll(() => hanging.eventsWritten(runId), { timeout: 10_000 }).toBeGreaterThan(0);
    const cancelled = await svc.api.post(wf(`/${workflowId}/runs/${runId}/cancel`), { reason: 'no longer needed' });
    expect(cancelled.status).toBe(200);
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('cancelled');
    const taskId = await hanging.nextCancel();
    expect(hanging.cancelledTasks).toContain(taskId);
  });

  it('fails over from a down agent to the next one of the a2aPool, and records both on the node run', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes: [{ name: 'Pool', nodeType: 'step', a2aPool: ['offline', 'summarizer'], config: { text: 'hi' } }] });
    expect(run.status).toBe('completed');
    const [nodeRun] = run.nodeRuns;
    expect(nodeRun).toMatchObject({ status: 'completed', attempt: 1, executorKey: 'summarizer', outputSnapshot: { agent: { name: 'Summarizer' } } });
    expect(nodeRun.poolAttempts).toEqual([{ executorKey: 'offline', error: expect.stringMatching(new RegExp(`^A2A agent \\[address\\]/agent: cannot fetch its agent card: .*ECONNREFUSED \\[address\\]`)) }]);
    // The node-run endpoint shows the same.
    const single = await svc.api.get(wf(`/${workflowId}/runs/${run.id}/nodes/${nodeRun.id}`));
    expect(single.body).toMatchObject({ executorKey: 'summarizer', poolAttempts: [{ executorKey: 'offline' }] });
  });

  it('refuses MCP and HTTP executors in an a2aPool at save', async () => {
    const response = await svc.api.post(wf(), { name: uniqueName('a2a'), canvas: CANVAS, nodes: [{ name: 'Pool', nodeType: 'step', a2aPool: ['summarizer', 'hook'] }] });
    expect(response.status).toBe(400);
    expect(response.text).toContain("a2aPool agent 'hook' is an executor of kind 'http', not an A2A agent");
  });

  it("sends the run trigger's identity to the agent as a downstream bearer token", async () => {
    const before = good.requests.length;
    const { workflowId, runId } = await trigger([askStep()], {}, { 'x-switchyard-user-id': 'user-42', 'x-switchyard-username': 'ada' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('completed');
    const calls = good.requests.slice(before).filter((request) => request.method === 'POST');
    expect(calls.length).toBeGreaterThan(0);
    const authorization = String(calls[0]!.headers.authorization);
    expect(authorization).toMatch(/^Bearer /);
    // Bound to the agent: its origin as `aud` (not the minter's configured audience), its key as `azp`, no scopes declared.
    const bearer = authorization.slice('Bearer '.length);
    const { payload } = await jwtVerify(bearer, new TextEncoder().encode(TOKEN_SECRET), { audience: good.origin });
    expect(payload).toMatchObject({ sub: 'user-42', preferred_username: 'ada', switchyard_run_id: runId, aud: good.origin, azp: 'summarizer' });
    expect(payload).not.toHaveProperty('scope');
    await expect(jwtVerify(bearer, new TextEncoder().encode(TOKEN_SECRET), { audience: TOKEN_AUDIENCE })).rejects.toThrow(/"aud"/);
  });

  it("refuses a card's interface URL at another origin, and never quotes that origin's body into the run's records", async () => {
    const refused = await svc.runWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes: [askStep({ executorKey: 'pointing', stepConfig: { maxRetries: 2, ...fast } })] });
    expect(refused.run.status).toBe('failed');
    expect(refused.run.errorSummary).toBe(`Node 'Ask' failed: A2A agent ${publicUrl(pointing.url)}: refused to send to [address]: not the entry's origin and not listed in its allowedOrigins`);
    expect(refused.run.nodeRuns[0]).toMatchObject({ status: 'failed', attempt: 1 });
    expect(foreignRequests).toEqual([]);

    const allowed = await svc.runWorkflow({ name: uniqueName('a2a'), canvas: CANVAS, nodes: [askStep({ executorKey: 'pointing-allowed' })] });
    expect(allowed.run.status).toBe('failed');
    expect(foreignRequests).toEqual(['POST /agent/jsonrpc']);
    expect(allowed.run.errorSummary).toBe(`Node 'Ask' failed: A2A agent ${publicUrl(pointing.url)} answered HTTP 500 (the answer of another origin is not quoted)`);
    expect(JSON.stringify(allowed.run)).not.toContain('hunter2');
  });

  it('shows the agent cards in the catalogue, and an unreachable agent as unavailable', async () => {
    const response = await svc.api.get('/api/v1/executors?kind=a2a');
    expect(response.status).toBe(200);
    const byKey = new Map(response.body.executors.map((executor: any) => [executor.key, executor]));
    expect(byKey.get('summarizer')).toEqual({
      key: 'summarizer',
      kind: 'a2a',
      description: 'Summarizes documents',
      available: true,
      agent: {
        name: 'Summarizer',
        description: 'Summarizes documents',
        version: '1.0.0',
        skills: [{ id: 'summarize', name: 'Summarize', description: 'Summarizes a document', tags: ['text'] }],
      },
    });
    expect(byKey.get('offline')).toMatchObject({ kind: 'a2a', available: false, error: expect.stringContaining('ECONNREFUSED [address]') });
    // No network location of an agent in the answer.
    expect(response.text).not.toMatch(/127\.0\.0\.1|localhost/);
  });
});
