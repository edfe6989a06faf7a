/**
 * The control tools of the MCP bridge (issue #8): human gates (list_pending_approvals,
 * resolve_approval with its ambiguity guard), directives (pause_run, resume_run, cancel_run) and
 * child runs (retry_run, rerun_node, replay_run), through a real SDK client against the real API.
 * Every result is checked against the tool's own outputSchema by `bridge.call`.
 */
import { describe, expect, it } from 'vitest';
import { bridgeInProcess, type BridgeClient, type Envelope } from './support/bridge.ts';
import { useServiceAndBridge } from './support/bridge-hooks.ts';
import { CANVAS, echoStep, uniqueName, type TestService } from './support/service.ts';

let svc: TestService;
let bridge: BridgeClient;
useServiceAndBridge((service, client) => ([svc, bridge] = [service, client]));

const UNKNOWN_ID = '0123456789abcdef01234567';

/** A step with a fixed id (node ids address gates and reruns). */
const step = (id: string, config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({ ...echoStep(id.toUpperCase(), config, extra), id });

const FORM = [{ name: 'email', fieldType: 'string', required: true, defaultValue: 'default@example.com' }];

/** A confirmation gate, then a form gate, then a step echoing what the form step produced. */
function gatedWorkflow(name = uniqueName('bridge-hitl')): Record<string, unknown> {
  return {
    name,
    canvas: CANVAS,
    nodes: [
      step('confirm', { v: 'c' }, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Ship it?' } }),
      step('form', { email: { $cel: 'user_input.email' } }, { humanReview: { requiresUserInput: true, userInputMessage: 'Who gets it?', userInputSchema: FORM } }),
      step('after', { prev: { $cel: 'previous_step_content' } }),
    ],
  };
}

/** Starts a run of a one-gate workflow and waits until it holds at the gate `confirm`. */
async function parked(): Promise<{ workflowId: string; runId: string }> {
  const started = await svc.startRun({ name: uniqueName('bridge-parked'), canvas: CANVAS, nodes: [step('confirm', {}, { humanReview: { requiresConfirmation: true } }), step('after')] });
  await svc.waitForGate(started.workflowId, started.runId);
  return started;
}

/** Calls `name` until `done` holds for its answer (an ok envelope), every 50 ms, for at most 10 s. */
async function pollTool(name: string, args: Record<string, unknown>, done: (answer: Envelope) => boolean): Promise<Envelope> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await bridge.call(name, args);
    expect(answer.ok, JSON.stringify(answer.error)).toBe(true);
    if (done(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`${name} ${JSON.stringify(args)}: condition not met in time; last: ${JSON.stringify(answer).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Node runs of a run by node id: whether each was reused from the parent run. */
async function reusedByNode(runId: string): Promise<Record<string, boolean>> {
  const nodeRuns = await svc.repos.nodeRuns.listByRun(runId);
  return Object.fromEntries(nodeRuns.map((n) => [`${n.nodeId}@${n.iterationPath}`, n.reusedFromNodeRunId !== null]));
}

describe('tools/list', () => {
  it('lists the control tools in order, each with the annotations its kind implies', async () => {
    const tools = await bridge.tools();
    const expected = {
      list_pending_approvals: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      resolve_approval: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      pause_run: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      resume_run: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      cancel_run: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      retry_run: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      rerun_node: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      replay_run: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    };
    const names = [...tools.keys()];
    const first = names.indexOf('list_pending_approvals');
    expect(names.slice(first, first + 8)).toEqual(Object.keys(expected));
    for (const [name, annotations] of Object.entries(expected)) {
      const tool = tools.get(name);
      expect(tool.annotations, name).toEqual({ title: tool.title, ...annotations });
      expect(tool.description.length, name).toBeGreaterThan(200);
    }
    expect(Object.keys(tools.get('resolve_approval').inputSchema.properties)).toEqual(
      expect.arrayContaining(['resolution', 'action', 'runId', 'workflowName', 'nodeId', 'iteration', 'stepId', 'feedback', 'editedOutput', 'userInput', 'selectedChoices', 'note']),
    );
  });

  it('--read-only keeps list_pending_approvals and drops the control writes', async () => {
    const readOnly = await bridgeInProcess(svc.baseUrl, ['--read-only']);
    try {
      const names = [...(await readOnly.tools()).keys()];
      expect(names).toContain('list_pending_approvals');
      for (const name of ['resolve_approval', 'pause_run', 'resume_run', 'cancel_run', 'retry_run', 'rerun_node', 'replay_run']) expect(names).not.toContain(name);
    } finally {
      await readOnly.close();
    }
  });
});

describe('a whole HITL flow through the bridge alone', () => {
  it('list -> run -> confirmation gate -> form gate -> completed with the outputs', async () => {
    const name = uniqueName('bridge-flow');
    const workflow = await svc.createWorkflow(gatedWorkflow(name));
    await svc.enable(workflow.id);

    const listed = await bridge.call('list_workflows', { search: name });
    expect(listed.data.workflows).toMatchObject([{ workflowId: workflow.id, name, enabled: true }]);

    const ran = await bridge.call('run_workflow', { workflowName: name, input: { customer: 'c-1' } });
    expect(ran.ok).toBe(true);
    const runId: string = ran.data.runId;

    // 1. The confirmation gate.
    const first = await pollTool('list_pending_approvals', { runId }, (a) => a.data.approvals.length > 0);
    expect(first.data.total).toBe(1);
    expect(first.data.approvals[0]).toMatchObject({
      runId,
      workflowId: workflow.id,
      workflowName: name,
      nodeId: 'confirm',
      stepId: 'confirm',
      stepName: 'CONFIRM',
      iteration: 0,
      iterationPath: '',
      prompt: 'Ship it?',
      requiresConfirmation: true,
      requiresUserInput: false,
      isHumanRequest: false,
      allowedResolutions: ['confirm', 'reject'],
      onReject: 'cancel',
    });
    const confirmed = await bridge.call('resolve_approval', { runId, action: 'approve', note: 'looks right' });
    expect(confirmed.ok, JSON.stringify(confirmed.error)).toBe(true);
    expect(confirmed.data.decision).toMatchObject({ resolution: 'confirm', action: 'approve', stepId: 'confirm', decidedBy: 'human', feedback: null });
    expect(confirmed.data.decision.decidedAt).toEqual(expect.any(String));
    expect(confirmed.data.approval).toMatchObject({ runId, stepId: 'confirm', nodeId: 'confirm' });
    expect(confirmed.data.run.runId).toBe(runId);

    // 2. The form gate: the run continued by itself.
    const second = await pollTool('list_pending_approvals', { runId }, (a) => a.data.approvals.some((g: any) => g.nodeId === 'form'));
    const form = second.data.approvals[0];
    expect(form).toMatchObject({
      stepId: 'form',
      prompt: 'Who gets it?',
      requiresUserInput: true,
      allowedResolutions: ['confirm', 'reject', 'user_input'],
      formFields: [{ name: 'email', required: true, defaultValue: 'default@example.com' }],
    });
    const submitted = await bridge.call('resolve_approval', { runId, nodeId: 'form', resolution: 'user_input', userInput: { email: 'jane@example.com' } });
    expect(submitted.ok, JSON.stringify(submitted.error)).toBe(true);
    expect(submitted.data.decision).toMatchObject({ resolution: 'user_input', action: null, userInput: { email: 'jane@example.com' } });

    // 3. Follow it to the end.
    const done = await pollTool('get_run', { runId }, (a) => ['completed', 'failed', 'cancelled'].includes(a.data.run.status));
    expect(done.data.run).toMatchObject({ status: 'completed', runState: { state: 'succeeded' }, pendingApprovalCount: 0 });
    expect(done.data.finalOutput.arguments.prev.arguments).toEqual({ email: 'jane@example.com' });
    expect(done.data.requirements.map((r: any) => [r.stepId, r.resolution])).toEqual([
      ['confirm', 'confirm'],
      ['form', 'user_input'],
    ]);
    const none = await bridge.call('list_pending_approvals', { runId });
    expect(none.data).toEqual({ approvals: [], total: 0, truncated: false });
  });
});

describe('list_pending_approvals', () => {
  it('filters by workflowName, nodeId and iteration (a number or an iteration path)', async () => {
    const name = uniqueName('bridge-loop');
    const { workflowId, runId } = await svc.startRun({
      name,
      canvas: CANVAS,
      nodes: [{ id: 'l', name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [step('s', {}, { humanReview: { requiresConfirmation: true } })] }],
    });
    await svc.waitForGate(workflowId, runId);

    const byName = await bridge.call('list_pending_approvals', { workflowName: name });
    expect(byName.data.approvals).toMatchObject([{ runId, nodeId: 's', stepId: 's@1', iteration: 1, iterationPath: '1', workflowName: name }]);
    expect((await bridge.call('list_pending_approvals', { workflowName: name, nodeId: 'l' })).data.total).toBe(0);
    expect((await bridge.call('list_pending_approvals', { runId, iteration: 1 })).data.total).toBe(1);
    expect((await bridge.call('list_pending_approvals', { runId, iteration: '1' })).data.total).toBe(1);
    expect((await bridge.call('list_pending_approvals', { runId, iteration: 2 })).data.total).toBe(0);

    const approved = await bridge.call('resolve_approval', { runId, nodeId: 's', iteration: 1, action: 'approve' });
    expect(approved.ok, JSON.stringify(approved.error)).toBe(true);
    const next = await pollTool('list_pending_approvals', { runId, iteration: 2 }, (a) => a.data.total === 1);
    expect(next.data.approvals[0]).toMatchObject({ stepId: 's@2', iterationPath: '2' });
    const limited = await bridge.call('list_pending_approvals', { runId, limit: 1 });
    expect(limited.data.approvals).toHaveLength(1);
    await bridge.call('cancel_run', { runId });
  });

  it('errors: unknown run, unknown workflow name, invalid arguments', async () => {
    const unknownRun = await bridge.call('list_pending_approvals', { runId: UNKNOWN_ID });
    expect(unknownRun).toMatchObject({ ok: false, isError: true, error: { code: 'RUN_NOT_FOUND' } });
    const unknownName = await bridge.call('list_pending_approvals', { workflowName: 'no such workflow anywhere' });
    expect(unknownName.error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND', details: { fields: ['workflowName'] } });
    const badLimit = await bridge.call('list_pending_approvals', { limit: 0 });
    expect(badLimit.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['limit'] } });
    const badRun = await bridge.call('list_pending_approvals', { runId: 'run-1' });
    expect(badRun.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['runId'] } });
    const badIteration = await bridge.call('list_pending_approvals', { iteration: 'first' });
    expect(badIteration.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['iteration'] } });
  });
});

describe('resolve_approval', () => {
  it('several matching gates: INVALID_INPUT with the candidates in details.matches, and nothing decided', async () => {
    const name = uniqueName('bridge-ambiguous');
    const workflow = await svc.createWorkflow(gatedWorkflow(name));
    await svc.enable(workflow.id);
    const runs: string[] = [];
    for (let i = 0; i < 2; i++) runs.push((await svc.trigger(workflow.id, { initialInput: { i } })).body.runId);
    for (const runId of runs) await svc.waitForGate(workflow.id, runId);

    const answer = await bridge.call('resolve_approval', { workflowName: name, nodeId: 'confirm', action: 'approve' });
    expect(answer).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', details: { fields: ['workflowName', 'nodeId'] } } });
    expect(answer.error!.message).toMatch(/^2 pending gates match/);
    const matches = answer.error!.details!.matches;
    expect(matches.map((m: any) => m.runId).sort()).toEqual([...runs].sort());
    for (const match of matches) expect(match).toMatchObject({ stepId: 'confirm', nodeId: 'confirm', workflowName: name, iteration: 0 });
    expect((await bridge.call('list_pending_approvals', { workflowName: name })).data.total).toBe(2);

    // Narrowed to one: decided.
    const narrowed = await bridge.call('resolve_approval', { workflowName: name, runId: runs[0], resolution: 'confirm' });
    expect(narrowed.ok, JSON.stringify(narrowed.error)).toBe(true);
    await svc.approve(workflow.id, runs[1]!, { stepId: 'confirm', resolution: 'reject' });
  });

  it('zero matching gates: INVALID_INPUT with empty matches', async () => {
    const { runId } = await parked();
    const answer = await bridge.call('resolve_approval', { runId, nodeId: 'after', action: 'approve' });
    expect(answer.error).toMatchObject({ code: 'INVALID_INPUT', details: { matches: [], fields: ['runId', 'nodeId'] } });
    expect(answer.error!.message).toContain('No pending gate matches');
    await bridge.call('cancel_run', { runId });
  });

  it('a rejection records the note as feedback and follows onReject (cancel)', async () => {
    const { runId } = await parked();
    const rejected = await bridge.call('resolve_approval', { runId, stepId: 'confirm', action: 'deny', note: 'wrong customer' });
    expect(rejected.ok, JSON.stringify(rejected.error)).toBe(true);
    expect(rejected.data.decision).toMatchObject({ resolution: 'reject', action: 'deny', feedback: 'wrong customer', decidedBy: 'human' });
    const ended = await pollTool('get_run', { runId }, (a) => a.data.run.status === 'cancelled');
    expect(ended.data.requirements[0]).toMatchObject({ stepId: 'confirm', resolution: 'reject', rejectionFeedback: 'wrong customer' });
  });

  it('a gate decided already is CONFLICT (the API 409); an unknown run RUN_NOT_FOUND', async () => {
    const { workflowId, runId } = await svc.startRun(gatedWorkflow());
    await svc.waitForGate(workflowId, runId);
    expect((await svc.approve(workflowId, runId, { stepId: 'confirm', resolution: 'confirm' })).status).toBe(200);
    await svc.waitForGate(workflowId, runId, { until: (pending) => pending.some((p: any) => p.stepId === 'form') });
    const again = await bridge.call('resolve_approval', { runId, stepId: 'confirm', resolution: 'confirm' });
    expect(again.error).toMatchObject({ code: 'CONFLICT', details: { status: 409, stepId: 'confirm', resolution: 'confirm' } });
    expect(again.error!.message).toMatch(/already decided/);
    // The run ended: every gate of it is CONFLICT.
    await bridge.call('cancel_run', { runId });
    const ended = await bridge.call('resolve_approval', { runId, stepId: 'form', resolution: 'confirm' });
    expect(ended.error).toMatchObject({ code: 'CONFLICT', details: { currentStatus: 'cancelled' } });
    const unknown = await bridge.call('resolve_approval', { runId: UNKNOWN_ID, action: 'approve' });
    expect(unknown.error).toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('invalid arguments: INVALID_INPUT naming the field', async () => {
    const { runId } = await parked();
    const both = await bridge.call('resolve_approval', { runId, resolution: 'confirm', action: 'approve' });
    expect(both.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['resolution', 'action'] } });
    const neither = await bridge.call('resolve_approval', { runId });
    expect(neither.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['resolution', 'action'] } });
    const missingPayload = await bridge.call('resolve_approval', { runId, resolution: 'user_input' });
    expect(missingPayload.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['userInput'] } });
    const strayPayload = await bridge.call('resolve_approval', { runId, action: 'approve', selectedChoices: ['a'] });
    expect(strayPayload.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['selectedChoices'] } });
    const badEnum = await bridge.call('resolve_approval', { runId, resolution: 'maybe' });
    expect(badEnum.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['resolution'] } });
    // A resolution the gate does not accept: the API's 400.
    const unfit = await bridge.call('resolve_approval', { runId, resolution: 'edit', editedOutput: { x: 1 } });
    expect(unfit.error).toMatchObject({ code: 'INVALID_INPUT', details: { status: 400 } });
    expect(unfit.error!.message).toMatch(/Resolution 'edit' needs an output review/);
    expect((await bridge.call('list_pending_approvals', { runId })).data.total).toBe(1);
    await bridge.call('cancel_run', { runId });
  });
});

describe('pause_run, resume_run, cancel_run', () => {
  it('pause, pause again (no change), resume, cancel with a reason, and the conflicts after the end', async () => {
    const { runId } = await parked();
    const paused = await bridge.call('pause_run', { runId });
    expect(paused.data).toMatchObject({ runId, directive: 'pause', status: 'paused', changed: true, pendingDirective: null, stepsCompleted: 0, run: { status: 'paused', runState: { state: 'paused' } } });
    const again = await bridge.call('pause_run', { runId });
    expect(again.data).toMatchObject({ status: 'paused', changed: false });

    const resumed = await bridge.call('resume_run', { runId });
    expect(resumed.data).toMatchObject({ directive: 'resume', changed: true });
    const waiting = await pollTool('get_run', { runId }, (a) => a.data.run.status === 'awaiting_approval');
    expect(waiting.data.run.runState.state).toBe('waiting-approval');

    const cancelled = await bridge.call('cancel_run', { runId, reason: 'wrong customer' });
    expect(cancelled.data).toMatchObject({ directive: 'cancel', status: 'cancelled', changed: true, run: { status: 'cancelled' } });
    expect(cancelled.data.run.errorSummary).toContain('wrong customer');
    expect((await bridge.call('cancel_run', { runId })).data).toMatchObject({ status: 'cancelled', changed: false });

    const pauseEnded = await bridge.call('pause_run', { runId });
    expect(pauseEnded.error).toMatchObject({ code: 'CONFLICT', details: { status: 409, currentStatus: 'cancelled' } });
    const resumeEnded = await bridge.call('resume_run', { runId });
    expect(resumeEnded.error).toMatchObject({ code: 'CONFLICT' });
  });

  it('cancel of a completed run is CONFLICT; unknown runs and invalid arguments', async () => {
    const { run } = await svc.runWorkflow({ name: uniqueName('bridge-done'), canvas: CANVAS, nodes: [step('a')] });
    expect((await bridge.call('cancel_run', { runId: run.id })).error).toMatchObject({ code: 'CONFLICT', details: { currentStatus: 'completed' } });
    for (const name of ['pause_run', 'resume_run', 'cancel_run']) {
      expect((await bridge.call(name, { runId: UNKNOWN_ID })).error, name).toMatchObject({ code: 'RUN_NOT_FOUND' });
      expect((await bridge.call(name, {})).error, name).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['runId'] } });
    }
    const badReason = await bridge.call('cancel_run', { runId: run.id, reason: 42 });
    expect(badReason.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['reason'] } });
  });
});

describe('retry_run, rerun_node, replay_run', () => {
  /** a, then b that needs input.x (fails without it), then c. */
  const needsX = () => ({ name: uniqueName('bridge-retry'), canvas: CANVAS, nodes: [step('a', { y: { $cel: 'input.y' } }), step('b', { x: { $cel: 'input.x' } }), step('c')] });

  it('a full retry by default; a fork with inputOverrides reuses what completed and runs the rest with the new input', async () => {
    const { workflowId, run } = await svc.runWorkflow(needsX(), { y: 1 });
    expect(run.status).toBe('failed');

    const full = await bridge.call('retry_run', { runId: run.id });
    expect(full.data).toMatchObject({ parentRunId: run.id, triggerSource: 'retry', mode: 'full', reusedNodeIds: ['a'], rerunNodeIds: [], initialInput: { y: 1 } });
    expect(full.data.run).toMatchObject({ runId: full.data.runId, parentRunId: run.id, triggerSource: 'retry' });
    expect((await svc.waitForRun(workflowId, full.data.runId)).status).toBe('failed');

    const fork = await bridge.call('retry_run', { runId: run.id, inputOverrides: { x: 7 } });
    expect(fork.data).toMatchObject({ parentRunId: run.id, mode: 'fork', reusedNodeIds: ['a'], rerunNodeIds: [], initialInput: { y: 1, x: 7 } });
    const child = await svc.waitForRun(workflowId, fork.data.runId);
    expect(child.status, child.errorSummary).toBe('completed');
    expect(child.initialInput).toEqual({ y: 1, x: 7 });
    expect(await reusedByNode(child.id)).toEqual({ 'a@': true, 'b@': false, 'c@': false });
  });

  it('rerunNodes executes the named nodes again and reuses every other completed one', async () => {
    const { workflowId, run } = await svc.runWorkflow(needsX(), { x: 1, y: 1 });
    expect(run.status).toBe('completed');
    const fork = await bridge.call('retry_run', { runId: run.id, rerunNodes: ['b'], inputOverrides: { x: 2 } });
    expect(fork.data).toMatchObject({ mode: 'fork', rerunNodeIds: ['b'], initialInput: { x: 2, y: 1 } });
    expect(fork.data.reusedNodeIds.sort()).toEqual(['a', 'c']);
    const child = await svc.waitForRun(workflowId, fork.data.runId);
    expect(child.status, child.errorSummary).toBe('completed');
    expect(await reusedByNode(child.id)).toEqual({ 'a@': true, 'b@': false, 'c@': true });
    expect(child.nodeRuns.find((n: any) => n.nodeId === 'b').outputSnapshot.arguments).toEqual({ x: 2 });
  });

  it('retry errors: a run not ended (the API 400), an unknown node, an unknown run', async () => {
    const { runId } = await parked();
    const notEnded = await bridge.call('retry_run', { runId });
    expect(notEnded.error).toMatchObject({ code: 'INVALID_INPUT', details: { status: 400 } });
    expect(notEnded.error!.message).toMatch(/only an ended run/);
    await bridge.call('cancel_run', { runId });
    const unknownNode = await bridge.call('retry_run', { runId, rerunNodes: ['nope'] });
    expect(unknownNode.error).toMatchObject({ code: 'NODE_NOT_FOUND', details: { fields: ['rerunNodes'], nodeIds: ['nope'] } });
    expect((await bridge.call('retry_run', { runId: UNKNOWN_ID })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    const badOverrides = await bridge.call('retry_run', { runId, inputOverrides: 'x=1' });
    expect(badOverrides.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['inputOverrides'] } });
  });

  it('rerun_node runs one node again (in a loop: the named iteration) and ends after it', async () => {
    const { workflowId, run } = await svc.runWorkflow({
      name: uniqueName('bridge-rerun'),
      canvas: CANVAS,
      nodes: [{ id: 'l', name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 3 }, children: [step('s', { i: { $cel: 'loop_state.iteration' } })] }, step('z')],
    });
    expect(run.status).toBe('completed');
    const rerun = await bridge.call('rerun_node', { runId: run.id, nodeId: 's', iteration: 2 });
    expect(rerun.data).toMatchObject({ parentRunId: run.id, triggerSource: 'node_rerun', run: { runId: rerun.data.runId } });
    expect(rerun.data.message).toBe(`Node 's' rerun queued as run ${rerun.data.runId}`);
    const child = await svc.waitForRun(workflowId, rerun.data.runId);
    expect(child.status).toBe('completed');
    const reused = await reusedByNode(child.id);
    expect(reused['s@1']).toBe(true);
    expect(reused['s@2']).toBe(false);
    expect(reused['s@3']).toBeUndefined();
    expect(reused['z@']).toBeUndefined();

    expect((await bridge.call('rerun_node', { runId: run.id, nodeId: 'nope' })).error).toMatchObject({ code: 'NODE_NOT_FOUND' });
    expect((await bridge.call('rerun_node', { runId: run.id, nodeId: 's', iteration: 9 })).error).toMatchObject({ code: 'INVALID_INPUT', details: { status: 400 } });
    expect((await bridge.call('rerun_node', { runId: UNKNOWN_ID, nodeId: 's' })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await bridge.call('rerun_node', { runId: run.id })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['nodeId'] } });
  });

  it('replay_run starts the workflow again from scratch with the same input', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('bridge-replay'), canvas: CANVAS, nodes: [step('a', { v: { $cel: 'input.v' } })] }, { v: 3 });
    const replay = await bridge.call('replay_run', { runId: run.id });
    expect(replay.data).toMatchObject({ parentRunId: run.id, triggerSource: 'replay', run: { parentRunId: run.id } });
    const child = await svc.waitForRun(workflowId, replay.data.runId);
    expect(child).toMatchObject({ status: 'completed', initialInput: { v: 3 } });
    expect(await reusedByNode(child.id)).toEqual({ 'a@': false });
    expect((await bridge.call('replay_run', { runId: UNKNOWN_ID })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await bridge.call('replay_run', { runId: 'x' })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['runId'] } });
  });
});
