/**
 * The inspect tools of the MCP bridge (issue #8: watch_run, explain_run, get_node_detail,
 * list_artifacts, get_run_events, get_timeline) through a real SDK client against the real API:
 * happy and error paths, every result checked against the tool's listed outputSchema (support/bridge.ts).
 */
import { describe, expect, it } from 'vitest';
import { diagnose } from '../apps/mcp-bridge/src/tools/semantic/inspect/explain-run.ts';
import type { BridgeClient } from './support/bridge.ts';
import { useServiceAndBridge } from './support/bridge-hooks.ts';
import { CANVAS, echoStep, uniqueName, wf, type TestService } from './support/service.ts';

const INSPECT = ['watch_run', 'explain_run', 'get_node_detail', 'list_artifacts', 'get_run_events', 'get_timeline'];
const UNKNOWN_RUN = '0123456789abcdef01234567';

let svc: TestService;
let bridge: BridgeClient;
useServiceAndBridge((service, client) => ([svc, bridge] = [service, client]));

/** A step that always fails (the `flaky` alias of builtin fail), with `stepConfig`. */
const failing = (id: string, message: string, stepConfig: Record<string, unknown> = {}) => ({ id, name: `Fail ${id}`, nodeType: 'step', executorKey: 'flaky', config: { message }, stepConfig });
const gated = (id: string, message = 'Ship it?') => ({ ...echoStep(`Gate ${id}`, { v: 1 }), id, humanReview: { requiresConfirmation: true, confirmationMessage: message } });

/** Polls the run detail until `until` holds (10 s at most). */
async function waitForDetail(workflowId: string, runId: string, until: (run: any) => boolean): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const run = (await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body;
    if (until(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not get there: ${JSON.stringify(run).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function cancel(workflowId: string, runId: string): Promise<void> {
  const answer = await svc.api.post(wf(`/${workflowId}/runs/${runId}/cancel`), { reason: 'test over' });
  expect(answer.status).toBe(200);
}

describe('tools/list', () => {
  it('lists the inspect tools in order, all read-only and idempotent', async () => {
    const tools = await bridge.tools();
    const names = [...tools.keys()];
    expect(names.filter((name) => INSPECT.includes(name))).toEqual(INSPECT);
    for (const name of INSPECT) {
      const tool = tools.get(name);
      expect(tool.annotations, name).toMatchObject({ readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false });
      expect(tool.description.length, name).toBeGreaterThan(200);
      expect(tool.inputSchema.required, name).toContain('runId');
    }
  });
});

describe('watch_run', () => {
  it('follows a run to its end', async () => {
    const { runId } = await svc.startRun({ name: uniqueName('watch'), canvas: CANVAS, nodes: [{ name: 'Nap', nodeType: 'step', executorKey: 'sleep', config: { ms: 400 } }, echoStep('After')] });
    const watched = await bridge.call('watch_run', { runId, intervalMs: 200, timeoutMs: 10_000 });
    expect(watched.data).toMatchObject({ runId, intervalMs: 200, reachedTerminal: true, timedOut: false, finalRun: { runId, status: 'completed', runState: { state: 'succeeded' } } });
    expect(watched.data.pollCount).toBeGreaterThanOrEqual(1); // how many polls depends on machine speed: the outcome is what counts
    expect(watched.data.changes.at(-1)).toMatchObject({ status: 'completed', state: 'succeeded' });
  });

  it('times out on a run held at a gate', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('watch-gate'), canvas: CANVAS, nodes: [gated('hold')] });
    await svc.waitForGate(workflowId, runId);
    const watched = await bridge.call('watch_run', { runId, intervalMs: 200, timeoutMs: 300 });
    expect(watched.data).toMatchObject({ reachedTerminal: false, timedOut: true, finalRun: { status: 'awaiting_approval', runState: { state: 'waiting-approval' } } });
    expect(watched.data.changes).toHaveLength(1);
    await cancel(workflowId, runId);
  });

  it('rejects an interval under 200 ms and an unknown run', async () => {
    const fast = await bridge.call('watch_run', { runId: UNKNOWN_RUN, intervalMs: 100 });
    expect(fast).toMatchObject({ ok: false, isError: true, error: { code: 'INVALID_INPUT', details: { fields: ['intervalMs'] } } });
    const long = await bridge.call('watch_run', { runId: UNKNOWN_RUN, timeoutMs: 600_001 });
    expect(long.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['timeoutMs'] } });
    const unknown = await bridge.call('watch_run', { runId: UNKNOWN_RUN, timeoutMs: 0 });
    expect(unknown.error).toMatchObject({ code: 'RUN_NOT_FOUND' });
  });
});

describe('explain_run', () => {
  it('names the gate to decide, with the resolve_approval call; and the resume_run call once paused', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('explain-gate'), canvas: CANVAS, nodes: [echoStep('First'), gated('approve')] });
    const parked = await svc.waitForGate(workflowId, runId);
    const stepId = parked.pendingRequirements[0].stepId;
    const explained = await bridge.call('explain_run', { runId });
    const { diagnosis } = explained.data;
    expect(diagnosis).toMatchObject({ runId, workflowId, status: 'awaiting_approval', state: 'waiting-approval', currentNodeId: 'approve' });
    expect(diagnosis.summary).toContain("node 'Gate approve'");
    expect(diagnosis.blockers).toHaveLength(1);
    const [blocker] = diagnosis.blockers;
    expect(blocker).toMatchObject({ kind: 'approval', nodeId: 'approve', stepId, iterationPath: '', iteration: 0, call: { tool: 'resolve_approval', arguments: { runId, stepId, resolution: 'confirm' } } });
    expect(blocker.unblocker).toBe(`resolve_approval ${JSON.stringify({ runId, stepId, resolution: 'confirm' })}`);
    expect(blocker.reason).toContain('Ship it?');
    expect(blocker.waitingSince).toBe(Date.parse(parked.requirements[0].requestedAt));

    expect((await svc.api.post(wf(`/${workflowId}/runs/${runId}/pause`))).status).toBe(200);
    const paused = (await bridge.call('explain_run', { runId })).data.diagnosis;
    expect(paused.state).toBe('paused');
    expect(paused.blockers.map((b: any) => b.kind)).toEqual(['paused', 'approval']);
    expect(paused.blockers[0]).toMatchObject({ nodeId: null, call: { tool: 'resume_run', arguments: { runId } }, unblocker: `resume_run ${JSON.stringify({ runId })}` });
    expect(paused.blockers[1].context).toContain('resume_run');
    await cancel(workflowId, runId);
  });

  it('points at the failed node and its error, with retry_run', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('explain-failed'), canvas: CANVAS, nodes: [echoStep('Ok'), failing('breaks', 'disk on fire')] });
    expect(run.status).toBe('failed');
    const { diagnosis } = (await bridge.call('explain_run', { runId: run.id })).data;
    expect(diagnosis).toMatchObject({ state: 'failed', currentNodeId: 'breaks' });
    expect(diagnosis.summary).toContain('disk on fire');
    expect(diagnosis.blockers).toEqual([
      expect.objectContaining({ kind: 'failed', nodeId: 'breaks', error: 'disk on fire', attempt: 1, maxAttempts: 1, call: { tool: 'retry_run', arguments: { runId: run.id } } }),
    ]);
    expect(diagnosis.blockers[0].context).toContain(`rerun_node ${JSON.stringify({ runId: run.id, nodeId: 'breaks' })}`);
  });

  it('shows a step in retry backoff as a timer with firesAtMs and remainingMs', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('explain-timer'),
      canvas: CANVAS,
      nodes: [failing('flaky', 'upstream 503', { maxRetries: 3, backoffBaseSeconds: 60, backoffMaxSeconds: 60 })],
    });
    try {
      const waiting = await waitForDetail(workflowId, runId, (run) => run.runState.state === 'waiting-timer');
      const before = Date.now();
      const { diagnosis } = (await bridge.call('explain_run', { runId })).data;
      expect(diagnosis).toMatchObject({ status: 'running', state: 'waiting-timer', currentNodeId: 'flaky' });
      const [timer] = diagnosis.blockers;
      expect(diagnosis.blockers).toHaveLength(1);
      expect(timer).toMatchObject({ kind: 'timer', nodeId: 'flaky', attempt: 1, maxAttempts: 4, error: 'upstream 503', firesAtMs: Date.parse(waiting.runState.blocked.wakeAt), call: { tool: 'watch_run' } });
      expect(timer.remainingMs).toBeGreaterThan(0);
      expect(timer.remainingMs).toBeLessThanOrEqual(timer.firesAtMs - before + 1000);
      expect(timer.waitingSince).toBeLessThanOrEqual(Date.now());
      expect(timer.context).toContain('cancel_run');
      expect(diagnosis.summary).toContain('retry backoff');

      const detail = (await bridge.call('get_node_detail', { runId, nodeId: 'flaky' })).data;
      expect(detail.node).toMatchObject({ name: 'Fail flaky', nodeType: 'step', executorKey: 'flaky', maxAttempts: 4 });
      expect(detail.nodeRuns).toHaveLength(1);
      expect(detail.nodeRuns[0].attempts).toEqual([expect.objectContaining({ attempt: 1, status: 'failed', error: 'upstream 503', retried: true })]);
      expect(detail.nodeRuns[0].attempts[0].delayMs).toBeGreaterThan(0);
      expect(detail.attemptsSummary).toMatchObject({ total: 1, failed: 1, retried: 1 });
    } finally {
      await cancel(workflowId, runId);
    }
    const { diagnosis } = (await bridge.call('explain_run', { runId })).data;
    expect(diagnosis).toMatchObject({ state: 'cancelled', blockers: [], currentNodeId: null });
    expect(diagnosis.summary).toContain('test over');
  });

  it('has no blockers for a completed run, nor for a running one (which names its current node)', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('explain-done'), canvas: CANVAS, nodes: [echoStep('Only')] });
    const done = (await bridge.call('explain_run', { runId: run.id })).data.diagnosis;
    expect(done).toMatchObject({ state: 'succeeded', blockers: [], currentNodeId: null });

    const { workflowId, runId } = await svc.startRun({ name: uniqueName('explain-running'), canvas: CANVAS, nodes: [{ id: 'nap', name: 'Nap', nodeType: 'step', executorKey: 'sleep', config: { ms: 10_000 } }] });
    try {
      await waitForDetail(workflowId, runId, (r) => r.runState.state === 'running' && r.activeNodeIds?.includes('nap'));
      const running = (await bridge.call('explain_run', { runId })).data.diagnosis;
      expect(running).toMatchObject({ state: 'running', blockers: [], currentNodeId: 'nap' });
      expect(running.summary).toContain("node 'Nap'");
    } finally {
      await cancel(workflowId, runId);
    }
  });

  it('RUN_NOT_FOUND and INVALID_INPUT', async () => {
    expect((await bridge.call('explain_run', { runId: UNKNOWN_RUN })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await bridge.call('explain_run', { runId: 'nope' })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['runId'] } });
  });
});

describe('explain_run diagnosis of states the API rarely shows (pure)', () => {
  const base = {
    id: 'r1',
    workflowDefinitionId: 'w1',
    status: 'running',
    triggerSource: 'manual',
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: null,
    parentRunId: null,
    errorSummary: null,
    nodeRuns: [],
    nodeRunCount: 1,
    activeNodeIds: ['a'],
    requirements: [],
    definitionSnapshot: { nodes: [{ id: 'a', name: 'A', nodeType: 'step', executorKey: 'echo', stepConfig: null, humanReview: null }] },
  };
  const at = (state: string, extra: Record<string, unknown> = {}) => ({ ...base, ...extra, runState: { state, computedAt: '2026-01-01T00:01:00.000Z', ...((extra['runState'] as object) ?? {}) } });
  const now = Date.parse('2026-01-01T00:01:00.000Z');

  it('stale: wait for a takeover; orphaned: cancel_run (and say an instance can claim it)', () => {
    const unhealthy = { kind: 'engine-heartbeat-stale', lastHeartbeatAt: '2026-01-01T00:00:30.000Z' };
    const stale = diagnose({ run: at('stale', { runState: { unhealthy } }) as any, failedNodeRuns: [], retryEvent: null, now });
    expect(stale.blockers).toEqual([expect.objectContaining({ kind: 'stale', nodeId: null, waitingSince: Date.parse(unhealthy.lastHeartbeatAt), call: { tool: 'watch_run', arguments: { runId: 'r1', timeoutMs: 60_000 } } })]);
    expect(stale.currentNodeId).toBe('a');
    const orphaned = diagnose({ run: at('orphaned', { runState: { unhealthy } }) as any, failedNodeRuns: [], retryEvent: null, now });
    expect(orphaned.blockers[0]).toMatchObject({ kind: 'orphaned', call: { tool: 'cancel_run' } });
    expect(orphaned.blockers[0].context).toContain('retry_run');
    expect(orphaned.summary).toContain('orphaned');
  });

  it('a pending pause is a blocker resume_run withdraws; a queued run waits', () => {
    const pausing = diagnose({ run: at('running', { pendingDirective: 'pause' }) as any, failedNodeRuns: [], retryEvent: null, now });
    expect(pausing.blockers).toEqual([expect.objectContaining({ kind: 'pending-directive', call: { tool: 'resume_run', arguments: { runId: 'r1' } } })]);
    const queued = diagnose({ run: at('pending', { status: 'pending', activeNodeIds: [] }) as any, failedNodeRuns: [], retryEvent: null, now });
    expect(queued.blockers).toEqual([expect.objectContaining({ kind: 'queued', call: { tool: 'watch_run', arguments: { runId: 'r1', timeoutMs: 30_000 } } })]);
    const unknown = diagnose({ run: at('unknown') as any, failedNodeRuns: [], retryEvent: null, now });
    expect(unknown.blockers).toEqual([]);
    expect(unknown.summary).toContain('unknown');
  });

  it('a form gate asks for user_input with its fields; a route selection for route_select', () => {
    const gate = (stepId: string, extra: Record<string, unknown>) => ({ stepId, nodeId: 'a', iterationPath: '2', round: 0, requestedAt: '2026-01-01T00:00:10.000Z', resolution: null, decidedBy: null, decidedAt: null, ...extra });
    const run = at('waiting-approval', {
      status: 'awaiting_approval',
      requirements: [
        gate('a@2', { requiresUserInput: true, userInputSchema: [{ name: 'email', fieldType: 'string', required: true }, { name: 'n', fieldType: 'number', required: false, value: 3 }] }),
        gate('a@2:route', { requiresRouteSelection: true, requiresUserInput: true, availableChoices: ['left', 'right'] }),
      ],
    });
    const diagnosis = diagnose({ run: run as any, failedNodeRuns: [], retryEvent: null, now });
    expect(diagnosis.blockers.map((b) => b.call.arguments)).toEqual([
      { runId: 'r1', stepId: 'a@2', resolution: 'user_input', userInput: { email: '<string>', n: 3 } },
      { runId: 'r1', stepId: 'a@2:route', resolution: 'route_select', selectedChoices: ['left'] },
    ]);
    expect(diagnosis.blockers[0]).toMatchObject({ iterationPath: '2', iteration: 2, waitingSince: Date.parse('2026-01-01T00:00:10.000Z') });
    expect(diagnosis.blockers[1].context).toContain('left, right');
  });
});

describe('get_node_detail', () => {
  it('gives every iteration of a node with full input and output, its attempts, and one iteration on request', async () => {
    const big = 'x'.repeat(40_000); // over the 32 KiB a list view inlines
    const { run } = await svc.runWorkflow(
      { name: uniqueName('detail-loop'), canvas: CANVAS, nodes: [{ name: 'Loop', nodeType: 'loop', loopConfig: { maxIterations: 3 }, children: [{ ...echoStep('Part', { v: { $cel: 'input.s' } }), id: 'part' }] }] },
      { s: big },
    );
    expect(run.status, run.errorSummary).toBe('completed');
    const all = (await bridge.call('get_node_detail', { runId: run.id, nodeId: 'part' })).data;
    expect(all.node).toMatchObject({ name: 'Part', nodeType: 'step', executorKey: 'echo', maxAttempts: 1 });
    expect(all.nodeRuns).toHaveLength(3);
    expect(all.iterations).toHaveLength(3);
    for (const nodeRun of all.nodeRuns) {
      expect(nodeRun).toMatchObject({ status: 'completed', attemptCount: 1, error: null, input: { v: big } });
      expect(nodeRun.output.arguments.v).toBe(big);
      expect(nodeRun.attempts).toEqual([expect.objectContaining({ attempt: 1, status: 'completed', retried: false, error: null })]);
      expect(nodeRun.durationMs).toBeGreaterThanOrEqual(0);
      expect(nodeRun.leftOut).toBeUndefined();
    }
    expect(all.attemptsSummary).toEqual({ total: 3, failed: 0, succeeded: 3, retried: 0, running: 0 });

    expect(all.nodeRuns.map((n: any) => n.iteration)).toEqual([1, 2, 3]);
    const second = all.iterations[1];
    const one = (await bridge.call('get_node_detail', { runId: run.id, nodeId: 'part', iteration: second })).data;
    expect(one.nodeRuns.map((n: any) => n.iterationPath)).toEqual([second]);
    expect(one.iterations).toEqual(all.iterations);
    const byNumber = (await bridge.call('get_node_detail', { runId: run.id, nodeId: 'part', iteration: 2 })).data;
    expect(byNumber.nodeRuns.map((n: any) => n.iterationPath)).toEqual([second]);
    const none = (await bridge.call('get_node_detail', { runId: run.id, nodeId: 'part', iteration: '99' })).data;
    expect(none.nodeRuns).toEqual([]);
    expect(none.notes[0]).toContain("'99'");
  });

  it("lists the node's gate decisions and the attempts of a failed node", async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('detail-gate'), canvas: CANVAS, nodes: [gated('approve'), failing('after', 'nope', { maxRetries: 1, backoffBaseSeconds: 0.01 })] });
    const parked = await svc.waitForGate(workflowId, runId);
    expect((await svc.approve(workflowId, runId, { stepId: parked.pendingRequirements[0].stepId, resolution: 'confirm' })).status).toBe(200);
    await svc.waitForRun(workflowId, runId);
    const gate = (await bridge.call('get_node_detail', { runId, nodeId: 'approve' })).data;
    expect(gate.decisions).toEqual([expect.objectContaining({ stepId: 'approve', nodeId: 'approve', resolution: 'confirm', decidedBy: 'human' })]);
    const failed = (await bridge.call('get_node_detail', { runId, nodeId: 'after' })).data;
    expect(failed.decisions).toEqual([]);
    expect(failed.nodeRuns[0]).toMatchObject({ status: 'failed', attemptCount: 2, error: 'nope' });
    expect(failed.nodeRuns[0].attempts).toEqual([
      expect.objectContaining({ attempt: 1, status: 'failed', retried: true, error: 'nope' }),
      expect.objectContaining({ attempt: 2, status: 'failed', retried: false, error: 'nope' }),
    ]);
    expect(failed.attemptsSummary).toMatchObject({ total: 2, failed: 2, retried: 1 });
  });

  it('NODE_NOT_FOUND naming the nodes, RUN_NOT_FOUND, INVALID_INPUT', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('detail-errors'), canvas: CANVAS, nodes: [{ ...echoStep('Only'), id: 'only' }] });
    const missing = await bridge.call('get_node_detail', { runId: run.id, nodeId: 'ghost' });
    expect(missing).toMatchObject({ ok: false, error: { code: 'NODE_NOT_FOUND', details: { fields: ['nodeId'], nodes: [{ nodeId: 'only', name: 'Only', nodeType: 'step' }] } } });
    expect((await bridge.call('get_node_detail', { runId: UNKNOWN_RUN, nodeId: 'x' })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await bridge.call('get_node_detail', { runId: run.id })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['nodeId'] } });
    expect((await bridge.call('get_node_detail', { runId: run.id, nodeId: 'only', iteration: true })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['iteration'] } });
  });
});

describe('list_artifacts', () => {
  it('lists completed node outputs, fetches the ones a list view left out, filters by node and limits', async () => {
    const big = 'y'.repeat(40_000);
    const { run } = await svc.runWorkflow({ name: uniqueName('artifacts'), canvas: CANVAS, nodes: [{ ...echoStep('Small', { n: 1 }), id: 'small' }, { ...echoStep('Big', { v: { $cel: 'input.s' } }), id: 'big' }] }, { s: big });
    expect(run.nodeRuns.find((n: any) => n.nodeId === 'big').omittedSnapshots?.outputSnapshot).toBeGreaterThan(40_000);
    const listed = (await bridge.call('list_artifacts', { runId: run.id })).data;
    expect(listed).toMatchObject({ runId: run.id, total: 2, notes: [] });
    expect(listed.artifacts.map((a: any) => a.nodeId)).toEqual(['small', 'big']);
    expect(listed.artifacts[0]).toMatchObject({ artifactId: `${run.id}:small:`, nodeName: 'Small', nodeType: 'step', iterationPath: '', edited: false, valueLeftOut: false, value: { arguments: { n: 1 } } });
    expect(listed.artifacts[1].value.arguments.v).toBe(big);
    expect(listed.artifacts[1].sizeBytes).toBe(Buffer.byteLength(JSON.stringify(listed.artifacts[1].value)));

    const one = (await bridge.call('list_artifacts', { runId: run.id, nodeId: 'big' })).data;
    expect(one.artifacts.map((a: any) => a.nodeId)).toEqual(['big']);
    const limited = (await bridge.call('list_artifacts', { runId: run.id, limit: 1 })).data;
    expect(limited).toMatchObject({ total: 2, artifacts: [{ nodeId: 'small' }] });
    expect(limited.notes).toEqual(['1 more artifact(s) beyond limit 1.']);
  });

  it('reads every page of node runs, and leaves out values beyond its byte budget, saying so', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('artifacts-many'), canvas: CANVAS, nodes: [{ name: 'Loop', nodeType: 'loop', loopConfig: { maxIterations: 120 }, children: [{ ...echoStep('Tick', { n: 1 }), id: 'tick' }] }] });
    expect(run.nodeRunCount).toBe(121);
    const many = (await bridge.call('list_artifacts', { runId: run.id, nodeId: 'tick', limit: 500 })).data;
    expect(many.total).toBe(120);
    expect(new Set(many.artifacts.map((a: any) => a.iterationPath)).size).toBe(120);

    // Three parallel steps of ~800 KB of output each: over the 2 MiB one answer carries (the parallel node itself fails: its gathered output is over 1 MiB).
    const heavySteps = ['h1', 'h2', 'h3'].map((id) => ({ ...echoStep(`Heavy ${id}`, { v: { $cel: 'input.s' } }), id }));
    const { run: heavy } = await svc.runWorkflow({ name: uniqueName('artifacts-heavy'), canvas: CANVAS, nodes: [{ name: 'Fan', nodeType: 'parallel', children: heavySteps }] }, { s: 'z'.repeat(400_000) });
    const budgeted = (await bridge.call('list_artifacts', { runId: heavy.id })).data;
    expect(budgeted.total).toBe(3);
    const leftOut = budgeted.artifacts.filter((a: any) => a.valueLeftOut);
    expect(leftOut.length).toBeGreaterThan(0);
    expect(leftOut.every((a: any) => a.value === null && a.sizeBytes > 800_000)).toBe(true);
    expect(budgeted.artifacts[0]).toMatchObject({ valueLeftOut: false, value: { arguments: { v: expect.any(String) } } });
    expect(budgeted.notes[0]).toMatch(/^\d+ value\(s\) \(\d+ bytes\) did not fit/);
    const alone = (await bridge.call('list_artifacts', { runId: heavy.id, nodeId: leftOut[0].nodeId })).data;
    expect(alone.artifacts[0].valueLeftOut).toBe(false);
  });

  it('NODE_NOT_FOUND, RUN_NOT_FOUND, INVALID_INPUT', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('artifacts-errors'), canvas: CANVAS, nodes: [echoStep('Only')] });
    expect((await bridge.call('list_artifacts', { runId: run.id, nodeId: 'ghost' })).error).toMatchObject({ code: 'NODE_NOT_FOUND' });
    expect((await bridge.call('list_artifacts', { runId: UNKNOWN_RUN })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await bridge.call('list_artifacts', { runId: run.id, limit: 0 })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['limit'] } });
  });
});

describe('get_run_events', () => {
  it('pages with afterSeq and filters by types and node', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('events'), canvas: CANVAS, nodes: [{ ...echoStep('A'), id: 'a' }, { ...echoStep('B'), id: 'b' }] });
    const all = (await bridge.call('get_run_events', { runId: run.id })).data;
    expect(all.events.map((e: any) => e.seq)).toEqual(all.events.map((_: unknown, i: number) => i + 1));
    expect(all.events[0].type).toBe('run.started');
    expect(all.events.at(-1).type).toBe('run.completed');
    expect(all).toMatchObject({ runId: run.id, nextAfterSeq: all.events.length, hasMore: false });

    const first = (await bridge.call('get_run_events', { runId: run.id, limit: 2 })).data;
    expect(first).toMatchObject({ nextAfterSeq: 2, hasMore: true });
    const next = (await bridge.call('get_run_events', { runId: run.id, afterSeq: first.nextAfterSeq, limit: 2 })).data;
    expect(next.events.map((e: any) => e.seq)).toEqual([3, 4]);

    const completed = (await bridge.call('get_run_events', { runId: run.id, types: ['node.completed'] })).data;
    expect(completed.events.map((e: any) => e.nodeId)).toEqual(['a', 'b']);
    const ofB = (await bridge.call('get_run_events', { runId: run.id, nodeId: 'b' })).data;
    expect(ofB.events.map((e: any) => e.type)).toEqual(['node.started', 'node.completed']);
    expect(ofB.events[0].payload).toMatchObject({ nodeId: 'b', nodeName: 'B', attempt: 1 });
  });

  it('INVALID_INPUT naming the field, RUN_NOT_FOUND', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('events-errors'), canvas: CANVAS, nodes: [echoStep('A')] });
    expect((await bridge.call('get_run_events', { runId: run.id, limit: 1001 })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['limit'] } });
    expect((await bridge.call('get_run_events', { runId: run.id, types: 'node.failed' })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['types'] } });
    expect((await bridge.call('get_run_events', { runId: run.id, types: ['Not a type'] })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['types.0'] } });
    const unknownType = await bridge.call('get_run_events', { runId: run.id, types: ['node.exploded'] });
    expect(unknownType.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['types'] } });
    expect(unknownType.error!.message).toContain('node.exploded');
    expect((await bridge.call('get_run_events', { runId: UNKNOWN_RUN })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
  });
});

describe('get_timeline', () => {
  it('shows the parent chain and the retries of a run, flat or as a tree', async () => {
    const name = uniqueName('timeline');
    const { workflowId, run: root } = await svc.runWorkflow({ name, canvas: CANVAS, nodes: [failing('f', 'still broken')] });
    const retry = async (runId: string) => {
      const answer = await svc.api.post(wf(`/${workflowId}/runs/${runId}/retry`));
      expect(answer.status).toBe(202);
      return (await svc.waitForRun(workflowId, answer.body.runId)).id as string;
    };
    const middle = await retry(root.id);
    const last = await retry(middle);

    const flat = (await bridge.call('get_timeline', { runId: middle })).data;
    expect(flat).toMatchObject({ runId: middle, rootRunId: root.id, runCount: 3, truncated: false, notes: [] });
    expect(flat.tree).toBeUndefined();
    expect(flat.runs.map((r: any) => [r.runId, r.relation, r.depth])).toEqual([
      [root.id, 'ancestor', 0],
      [middle, 'self', 1],
      [last, 'descendant', 2],
    ]);
    expect(flat.runs[2]).toMatchObject({ parentRunId: middle, triggerSource: 'retry', status: 'failed', workflowName: name });

    const nested = (await bridge.call('get_timeline', { runId: root.id, tree: true })).data;
    expect(nested.runs).toBeUndefined();
    expect(nested.tree.run).toMatchObject({ runId: root.id, relation: 'self', depth: 0 });
    expect(nested.tree.children.map((c: any) => c.run.runId)).toEqual([middle]);
    expect(nested.tree.children[0].children[0]).toMatchObject({ run: { runId: last, relation: 'descendant' }, children: [] });
  });

  it('RUN_NOT_FOUND, INVALID_INPUT', async () => {
    expect((await bridge.call('get_timeline', { runId: UNKNOWN_RUN })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await bridge.call('get_timeline', { runId: UNKNOWN_RUN, tree: 'yes' })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['tree'] } });
  });
});
