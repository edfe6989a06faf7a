/**
 * HITL decisions over real HTTP (spec endpoint 10, "Resolution x Requirement Type Compatibility";
 * README "Human gates (HITL)"): which resolution fits which gate, the 400/404/409 answers, the
 * gate's state while it waits, forms, output edits and route selections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startService();
});

afterAll(async () => {
  await svc?.close();
});

const UNKNOWN_ID = '0123456789abcdef01234567';

function body(nodes: unknown[]): Record<string, unknown> {
  return { name: uniqueName('hitl'), canvas: CANVAS, nodes };
}

/** Node runs of a run detail by node name. */
function byName(run: any): Record<string, any> {
  return Object.fromEntries(run.nodeRuns.map((n: any) => [n.nodeName, n]));
}

/** The step after the gate: echoes what flowed into it. */
const after = () => echoStep('After', { prev: { $cel: 'previous_step_content' } });

/** Starts a run and waits until it holds at its first gate; returns ids, the run detail and the gate. */
async function parkAt(nodes: unknown[], initialInput: Record<string, unknown> = { customer: 'c-1' }) {
  const { workflowId, runId } = await svc.startRun(body(nodes), initialInput);
  const run = await svc.waitForGate(workflowId, runId);
  expect(run.pendingRequirements).toHaveLength(1);
  return { workflowId, runId, run, gate: run.pendingRequirements[0], stepId: run.pendingRequirements[0].stepId as string };
}

async function detail(workflowId: string, runId: string): Promise<any> {
  const response = await svc.api.get(wf(`/${workflowId}/runs/${runId}`));
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** The run still waits at exactly the same, undecided gate. */
async function expectStillPending(workflowId: string, runId: string, gate: any): Promise<void> {
  const run = await detail(workflowId, runId);
  expect(run.status).toBe('awaiting_approval');
  expect(run.pendingRequirements).toEqual([gate]);
  expect(run.pendingRequirements[0]).toMatchObject({ confirmed: null, editedOutput: null, userInput: null, selectedChoices: null });
}

async function expect400(workflowId: string, runId: string, decision: Record<string, unknown>, message: string | RegExp): Promise<any> {
  const response = await svc.approve(workflowId, runId, decision);
  expect(response.status, response.text).toBe(400);
  expect(response.body.detail.error).toBe('invalid_request');
  if (typeof message === 'string') expect(response.body.detail.message).toBe(message);
  else expect(response.body.detail.message).toMatch(message);
  return response.body;
}

async function expect200(workflowId: string, runId: string, decision: Record<string, unknown>): Promise<void> {
  const response = await svc.approve(workflowId, runId, decision);
  expect(response.status, response.text).toBe(200);
  expect(response.body).toEqual({
    runId,
    status: expect.stringMatching(/^(awaiting_approval|running|completed|cancelled|failed)$/),
    resolvedStepId: decision['stepId'],
    message: `Requirement resolved as ${String(decision['resolution'])}; run resuming`,
  });
}

// ---- 1. resolution x requirement compatibility ----------------------------------------------

type Special = 'edit' | 'user_input' | 'route_select';

interface GateKind {
  kind: string;
  nodes: () => unknown[];
  /** Flags the requirement must show. */
  flags: Record<string, unknown>;
  /** The resolution beyond confirm/reject this gate accepts, with a valid payload and its effect. */
  special?: { resolution: Special; payload: Record<string, unknown>; missing: Record<string, unknown>[]; check: (run: any) => void };
  /** What confirm leads to. */
  onConfirm: (run: any) => void;
}

const FORM_SCHEMA = [{ name: 'email', fieldType: 'string', required: true, defaultValue: 'default@example.com' }];

const KINDS: GateKind[] = [
  {
    kind: 'step confirmation',
    nodes: () => [echoStep('Gate', { v: 'g' }, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Go?' } }), after()],
    flags: { requiresConfirmation: true, requiresUserInput: false, requiresOutputReview: false, requiresRouteSelection: false, isPostExecution: false, stepType: 'step' },
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.arguments).toEqual({ v: 'g' }),
  },
  {
    kind: 'step form (user input)',
    nodes: () => [
      echoStep('Gate', { email: { $cel: 'user_input.email' } }, { humanReview: { requiresUserInput: true, userInputMessage: 'Who?', userInputSchema: FORM_SCHEMA } }),
      after(),
    ],
    flags: { requiresConfirmation: false, requiresUserInput: true, requiresOutputReview: false, requiresRouteSelection: false, isPostExecution: false, userInputMessage: 'Who?' },
    special: {
      resolution: 'user_input',
      payload: { userInput: { email: 'jane@example.com' } },
      missing: [{}, { userInput: null }],
      check: (run) => expect(run.finalOutput.arguments.prev.arguments).toEqual({ email: 'jane@example.com' }),
    },
    // confirm takes the form's defaults
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.arguments).toEqual({ email: 'default@example.com' }),
  },
  {
    kind: 'step output review',
    nodes: () => [echoStep('Gate', { draft: 'v1' }, { humanReview: { requiresOutputReview: true, outputReviewMessage: 'Check it' } }), after()],
    flags: { requiresConfirmation: false, requiresUserInput: false, requiresOutputReview: true, requiresRouteSelection: false, isPostExecution: true, outputReviewMessage: 'Check it' },
    special: {
      resolution: 'edit',
      payload: { editedOutput: { draft: 'v2' } },
      missing: [{}, { editedOutput: null }],
      check: (run) => expect(run.finalOutput.arguments.prev).toEqual({ draft: 'v2' }),
    },
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.arguments).toEqual({ draft: 'v1' }),
  },
  {
    kind: 'router route selection',
    nodes: () => [
      {
        name: 'Gate',
        nodeType: 'router',
        conditionCel: "'left'",
        choices: [
          { name: 'left', steps: [echoStep('Left', { side: 'left' })] },
          { name: 'right', steps: [echoStep('Right', { side: 'right' })] },
        ],
        humanReview: { requiresUserInput: true, userInputMessage: 'Pick a side' },
      },
      after(),
    ],
    flags: {
      requiresConfirmation: false,
      requiresUserInput: false,
      requiresRouteSelection: true,
      availableChoices: ['left', 'right'],
      allowMultipleSelections: false,
      stepOutput: { suggestedChoice: 'left' },
      stepType: 'router',
    },
    special: {
      resolution: 'route_select',
      payload: { selectedChoices: ['right'] },
      missing: [{}, { selectedChoices: null }, { selectedChoices: [] }],
      check: (run) => {
        expect(run.finalOutput.arguments.prev.arguments).toEqual({ side: 'right' });
        expect(byName(run)['Left']).toBeUndefined();
      },
    },
    // confirm takes the conditionCel suggestion
    onConfirm: (run) => {
      expect(run.finalOutput.arguments.prev.arguments).toEqual({ side: 'left' });
      expect(byName(run)['Right']).toBeUndefined();
    },
  },
  {
    kind: 'router confirmation',
    nodes: () => [
      {
        name: 'Gate',
        nodeType: 'router',
        conditionCel: "'right'",
        choices: [
          { name: 'left', steps: [echoStep('Left', { side: 'left' })] },
          { name: 'right', steps: [echoStep('Right', { side: 'right' })] },
        ],
        humanReview: { requiresConfirmation: true },
      },
      after(),
    ],
    flags: { requiresConfirmation: true, requiresRouteSelection: false, requiresUserInput: false, stepOutput: { suggestedChoice: 'right' }, stepType: 'router' },
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.arguments).toEqual({ side: 'right' }),
  },
  {
    kind: 'router output review',
    nodes: () => [
      {
        name: 'Gate',
        nodeType: 'router',
        conditionCel: "'left'",
        choices: [
          { name: 'left', steps: [echoStep('Left', { side: 'left' })] },
          { name: 'right', steps: [echoStep('Right', { side: 'right' })] },
        ],
        humanReview: { requiresOutputReview: true },
      },
      after(),
    ],
    flags: { requiresOutputReview: true, isPostExecution: true, requiresConfirmation: false, stepType: 'router' },
    special: {
      resolution: 'edit',
      payload: { editedOutput: ['edited', 'router', 'output'] },
      missing: [{}, { editedOutput: null }],
      check: (run) => expect(run.finalOutput.arguments.prev).toEqual(['edited', 'router', 'output']),
    },
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.arguments).toEqual({ side: 'left' }),
  },
  {
    kind: 'loop confirmation',
    nodes: () => [
      { name: 'Gate', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [echoStep('Body', { i: { $cel: 'loop_state.iteration' } })], humanReview: { requiresConfirmation: true } },
      after(),
    ],
    flags: { requiresConfirmation: true, isPostExecution: false, stepType: 'loop' },
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.map((o: any) => o.arguments.i)).toEqual([1, 2]),
  },
  {
    kind: 'loop iteration review',
    nodes: () => [
      { name: 'Gate', nodeType: 'loop', loopConfig: { maxIterations: 1 }, children: [echoStep('Body', { i: { $cel: 'loop_state.iteration' } })], humanReview: { requiresIterationReview: true, iterationReviewMessage: 'Iteration ok?' } },
      after(),
    ],
    flags: { requiresConfirmation: true, requiresOutputReview: false, isPostExecution: true, outputReviewMessage: 'Iteration ok?', stepType: 'loop' },
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.map((o: any) => o.arguments.i)).toEqual([1]),
  },
  {
    kind: 'condition confirmation',
    nodes: () => [
      {
        name: 'Gate',
        nodeType: 'condition',
        conditionCel: 'input.customer == "c-1"',
        trueSteps: [echoStep('Yes', { branch: 'true' })],
        falseSteps: [echoStep('No', { branch: 'false' })],
        humanReview: { requiresConfirmation: true, confirmationMessage: 'Take the branch?' },
      },
      after(),
    ],
    flags: { requiresConfirmation: true, confirmationMessage: 'Take the branch?', stepOutput: { result: true, branch: 'trueSteps' }, stepType: 'condition' },
    onConfirm: (run) => expect(run.finalOutput.arguments.prev.arguments).toEqual({ branch: 'true' }),
  },
];

const MISMATCH: Record<Special, { payload: Record<string, unknown>; message: RegExp }> = {
  edit: { payload: { editedOutput: { x: 1 } }, message: /^Resolution 'edit' needs an output review after execution; step '.+' is not one$/ },
  user_input: { payload: { userInput: { email: 'x@example.com' } }, message: /^Resolution 'user_input' needs a requirement that collects user input; step '.+' does not$/ },
  route_select: { payload: { selectedChoices: ['left'] }, message: /^Resolution 'route_select' needs a route selection; step '.+' is not one$/ },
};

describe.each(KINDS)('gate: $kind', (kind) => {
  it('shows its flags, and confirm is accepted: the run continues by itself and completes', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt(kind.nodes());
    expect(gate).toMatchObject({ schemaVersion: 1, stepName: 'Gate', confirmed: null, ...kind.flags });
    await expect200(workflowId, runId, { stepId, resolution: 'confirm' });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status, run.errorSummary).toBe('completed');
    expect(run.pendingRequirements).toEqual([]);
    kind.onConfirm(run);
  });

  it('accepts reject (default onReject cancel: the run ends cancelled, naming the rejection)', async () => {
    const { workflowId, runId, stepId } = await parkAt(kind.nodes());
    await expect200(workflowId, runId, { stepId, resolution: 'reject', feedback: `not this ${kind.kind}` });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('cancelled');
    expect(run.errorSummary).toContain(`step 'Gate' was rejected: not this ${kind.kind}`);
    expect(byName(run)['After']).toBeUndefined();
  });

  it('refuses the resolutions that do not fit with 400, and a missing payload with 400, losing nothing', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt(kind.nodes());
    for (const resolution of ['edit', 'user_input', 'route_select'] as const) {
      if (kind.special?.resolution === resolution) continue;
      await expect400(workflowId, runId, { stepId, resolution, ...MISMATCH[resolution].payload }, MISMATCH[resolution].message);
      await expectStillPending(workflowId, runId, gate);
    }
    if (kind.special) {
      const { resolution, payload, missing, check } = kind.special;
      for (const incomplete of missing) {
        await expect400(workflowId, runId, { stepId, resolution, ...incomplete }, /^Resolution '.+' requires (editedOutput|userInput|selectedChoices)$/);
        await expectStillPending(workflowId, runId, gate);
      }
      await expect200(workflowId, runId, { stepId, resolution, ...payload });
      const run = await svc.waitForRun(workflowId, runId);
      expect(run.status, run.errorSummary).toBe('completed');
      check(run);
    } else {
      // Still decidable after every refusal.
      await expect200(workflowId, runId, { stepId, resolution: 'confirm' });
      const run = await svc.waitForRun(workflowId, runId);
      expect(run.status, run.errorSummary).toBe('completed');
      kind.onConfirm(run);
    }
  });
});

describe('/approve errors', () => {
  const gated = (name: string, extra: Record<string, unknown> = {}) => echoStep(name, { name }, { humanReview: { requiresConfirmation: true, ...extra } });

  it('answers 404 for an unknown stepId, run or workflow, and 400 for a malformed id; the gate stays pending', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt([gated('Gate')]);
    const unknownStep = await svc.approve(workflowId, runId, { stepId: 'no-such-step', resolution: 'confirm' });
    expect(unknownStep.status).toBe(404);
    expect(unknownStep.body).toEqual({
      detail: { error: 'resource_not_found', message: "Requirement for step 'no-such-step' not found", resource: 'requirement', details: { stepId: 'no-such-step' } },
    });

    const unknownRun = await svc.approve(workflowId, UNKNOWN_ID, { stepId, resolution: 'confirm' });
    expect(unknownRun.status).toBe(404);
    expect(unknownRun.body.detail).toMatchObject({ error: 'resource_not_found', resource: 'run' });

    const unknownWorkflow = await svc.approve(UNKNOWN_ID, runId, { stepId, resolution: 'confirm' });
    expect(unknownWorkflow.status).toBe(404);
    expect(unknownWorkflow.body.detail).toMatchObject({ error: 'resource_not_found', resource: 'workflow' });

    // The run exists, but under another workflow.
    const other = await svc.createWorkflow(body([echoStep('Other')]));
    expect((await svc.approve(other.id, runId, { stepId, resolution: 'confirm' })).status).toBe(404);

    const malformed = await svc.approve(workflowId, 'not-a-run-id', { stepId, resolution: 'confirm' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail.error).toBe('invalid_request');

    await expectStillPending(workflowId, runId, gate);
    await expect200(workflowId, runId, { stepId, resolution: 'confirm' });
    expect((await svc.waitForRun(workflowId, runId)).status).toBe('completed');
  });

  it('answers 400 for a malformed body: unknown resolution, missing or empty stepId, not JSON', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt([gated('Gate')]);
    const path = wf(`/${workflowId}/runs/${runId}/approve`);
    for (const bad of [{ stepId, resolution: 'approve' }, { stepId, resolution: 'CONFIRM' }, { stepId }, { resolution: 'confirm' }, { stepId: '', resolution: 'confirm' }, { stepId: 7, resolution: 'confirm' }]) {
      const response = await svc.api.post(path, bad);
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect(response.body.detail.error).toBe('invalid_request');
    }
    const unknownResolution = await svc.api.post(path, { stepId, resolution: 'approve' });
    expect(unknownResolution.body.detail.message).toContain('resolution');
    expect((await svc.api.request('POST', path, undefined, { raw: '{"stepId": ' })).status).toBe(400);
    expect((await svc.api.request('POST', path)).status).toBe(400);
    await expectStillPending(workflowId, runId, gate);
  });

  it('answers 409 for a decision on a gate that is already decided, while the run waits at the next gate', async () => {
    const { workflowId, runId, stepId: first } = await parkAt([gated('First'), gated('Second')]);
    await expect200(workflowId, runId, { stepId: first, resolution: 'confirm' });
    const run = await svc.waitForGate(workflowId, runId, { until: (pending) => pending[0]?.stepName === 'Second' });
    expect(run.pendingRequirements).toHaveLength(1);

    for (const resolution of ['confirm', 'reject']) {
      const again = await svc.approve(workflowId, runId, { stepId: first, resolution });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({
        detail: {
          error: 'conflict',
          message: `Requirement for step '${first}' is already decided (confirm)`,
          details: { stepId: first, resolution: 'confirm', decidedBy: 'human' },
        },
      });
    }
    // Nothing changed: the second gate still waits, the first step ran once.
    const still = await detail(workflowId, runId);
    expect(still.pendingRequirements.map((r: any) => r.stepName)).toEqual(['Second']);
    expect(byName(still)['First']).toMatchObject({ status: 'completed', attempt: 1 });
  });

  it('answers 409 for a decision on a completed or cancelled run', async () => {
    const done = await parkAt([gated('Gate')]);
    await expect200(done.workflowId, done.runId, { stepId: done.stepId, resolution: 'confirm' });
    expect((await svc.waitForRun(done.workflowId, done.runId)).status).toBe('completed');
    for (const decision of [{ stepId: done.stepId, resolution: 'confirm' }, { stepId: done.stepId, resolution: 'reject' }, { stepId: 'no-such-step', resolution: 'confirm' }]) {
      const late = await svc.approve(done.workflowId, done.runId, decision);
      expect(late.status).toBe(409);
      expect(late.body).toEqual({
        detail: { error: 'conflict', message: 'Run is completed; its requirements can no longer be decided', details: { currentStatus: 'completed' } },
      });
    }

    const cancelled = await parkAt([gated('Gate')]);
    await expect200(cancelled.workflowId, cancelled.runId, { stepId: cancelled.stepId, resolution: 'reject' });
    expect((await svc.waitForRun(cancelled.workflowId, cancelled.runId)).status).toBe('cancelled');
    const late = await svc.approve(cancelled.workflowId, cancelled.runId, { stepId: cancelled.stepId, resolution: 'confirm' });
    expect(late.status).toBe(409);
    expect(late.body.detail.message).toBe('Run is cancelled; its requirements can no longer be decided');
  });
});

// ---- 2. the gate while it waits -----------------------------------------------------------

describe('a run held at a gate', () => {
  it('is awaiting_approval with the gate listed, no runner holding it, and continues after one decision without a second call', async () => {
    const nodes = [
      echoStep('Prepare', { order: 42 }),
      echoStep('Send Welcome Email', { to: { $cel: 'input.customer' } }, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Send welcome email?', onReject: 'skip' } }),
      after(),
    ];
    const { workflowId, runId, run, gate, stepId } = await parkAt(nodes);
    const gateNode = run.definitionSnapshot.nodes[1];
    expect(run.status).toBe('awaiting_approval');
    expect(gate).toEqual({
      schemaVersion: 1,
      stepId: gateNode.id,
      stepName: 'Send Welcome Email',
      stepType: 'step',
      requiresConfirmation: true,
      requiresUserInput: false,
      requiresOutputReview: false,
      requiresRouteSelection: false,
      confirmationMessage: 'Send welcome email?',
      userInputMessage: null,
      userInputSchema: null,
      outputReviewMessage: null,
      availableChoices: null,
      allowMultipleSelections: false,
      stepOutput: null,
      isPostExecution: false,
      confirmed: null,
      rejectionFeedback: null,
      editedOutput: null,
      userInput: null,
      selectedChoices: null,
      retryCount: 0,
      maxRetries: 3,
      timeoutAt: null,
      onTimeout: 'cancel',
      onReject: 'skip',
      approvers: null,
      allowSelfApproval: true,
    });
    expect(byName(run)['Prepare']).toMatchObject({ status: 'completed', attempt: 1 });
    expect(byName(run)['Send Welcome Email']).toMatchObject({ status: 'awaiting_approval', nodeId: gateNode.id });
    expect(byName(run)['After']).toBeUndefined();
    expect(run.runState).toMatchObject({ runId, state: 'waiting-approval', blocked: { kind: 'approval', nodeId: stepId, requestedAt: expect.any(String) } });

    // No runner holds the run: no lease, nothing executing, and the events say so.
    expect(svc.engine.activeCount).toBe(0);
    const stored = await svc.repos.runs.get(runId);
    expect(stored).toMatchObject({ leaseOwner: null, leaseExpiresAt: null, wakePending: false });
    const types = (await svc.events(runId)).map((e) => e.type);
    expect(types).toContain('requirement.raised');
    expect(types.at(-1)).toBe('run.awaiting_approval');

    // One decision; then only reads.
    await expect200(workflowId, runId, { stepId, resolution: 'confirm' });
    const seen: any[] = [];
    const deadline = Date.now() + 10_000;
    let final: any;
    for (;;) {
      final = await detail(workflowId, runId);
      seen.push({ status: final.status, pending: final.pendingRequirements.length });
      if (final.status === 'completed' || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(final.status).toBe('completed');
    // pendingRequirements is empty whenever the run is not awaiting approval.
    for (const s of seen) if (s.status !== 'awaiting_approval') expect(s.pending).toBe(0);
    expect(final.pendingRequirements).toEqual([]);
    expect(final.runState.state).toBe('succeeded');
    const gateRun = byName(final)['Send Welcome Email'];
    expect(gateRun).toMatchObject({ status: 'completed', attempt: 1, outputSnapshot: { arguments: { to: 'c-1' } } });
    expect(final.finalOutput.arguments.prev).toEqual(gateRun.outputSnapshot);

    const events = await svc.events(runId);
    expect(events.filter((e) => e.type === 'requirement.decided').map((e) => e.payload)).toEqual([{ stepId, nodeId: expect.any(String), resolution: 'confirm', decidedBy: 'human' }]);
    expect(events.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
  });
});

// ---- 7. output edit flowing downstream --------------------------------------------------------

describe('output review with edit', () => {
  it('passes the edited output downstream and keeps the original on the node run', async () => {
    const nodes = [
      echoStep('Draft', { text: { $cel: "'Hello ' + input.customer" } }, { humanReview: { requiresOutputReview: true, outputReviewMessage: 'Check the draft' } }),
      echoStep('Publish', { seen: { $cel: 'previous_step_content' }, byName: { $cel: "previous_step_outputs['Draft']" } }),
    ];
    const { workflowId, runId, run, gate, stepId } = await parkAt(nodes);
    const original = { arguments: { text: 'Hello c-1' }, input: { customer: 'c-1' } };
    expect(gate).toMatchObject({ requiresOutputReview: true, isPostExecution: true, outputReviewMessage: 'Check the draft', stepOutput: original });
    // Executed once, held for review with its output.
    expect(byName(run)['Draft']).toMatchObject({ status: 'awaiting_approval', attempt: 1, outputSnapshot: original });
    expect(byName(run)['Publish']).toBeUndefined();

    const edited = { text: 'Hello c-1, welcome aboard!', reviewed: true };
    await expect200(workflowId, runId, { stepId, resolution: 'edit', editedOutput: edited });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.status, done.errorSummary).toBe('completed');
    expect(byName(done)['Publish'].outputSnapshot.arguments).toEqual({ seen: edited, byName: edited });
    expect(done.finalOutput.arguments.seen).toEqual(edited);

    const draft = byName(done)['Draft'];
    expect(draft).toMatchObject({ status: 'completed', attempt: 1, outputSnapshot: edited, originalOutputSnapshot: original });
    const single = await svc.api.get(wf(`/${workflowId}/runs/${runId}/nodes/${draft.id}`));
    expect(single.body).toMatchObject({ outputSnapshot: edited, originalOutputSnapshot: original });
  });

  it('accepts any JSON value as editedOutput (a string, a list, false) but not null', async () => {
    for (const edited of ['plain text', [1, 2, 3], false, 0]) {
      const { workflowId, runId, stepId } = await parkAt([echoStep('Draft', { a: 1 }, { humanReview: { requiresOutputReview: true } }), after()]);
      await expect200(workflowId, runId, { stepId, resolution: 'edit', editedOutput: edited });
      const done = await svc.waitForRun(workflowId, runId);
      expect(done.status).toBe('completed');
      expect(done.finalOutput.arguments.prev).toEqual(edited);
      expect(byName(done)['Draft'].originalOutputSnapshot).toEqual({ arguments: { a: 1 }, input: { customer: 'c-1' } });
    }
  });
});

// ---- 8. forms --------------------------------------------------------------------------------

describe('user input (form) gate', () => {
  const formStep = () =>
    echoStep(
      'Collect Contact',
      { email: { $cel: 'user_input.email' }, plan: { $cel: 'user_input.plan' }, all: { $cel: 'user_input' } },
      {
        humanReview: {
          requiresUserInput: true,
          userInputMessage: 'Contact details, please',
          userInputSchema: [
            { name: 'email', fieldType: 'string', required: true, description: 'Work email' },
            { name: 'plan', fieldType: 'string', required: true, defaultValue: 'free', allowedValues: ['free', 'pro'] },
            { name: 'seats', fieldType: 'number', required: false },
            { name: 'notify', fieldType: 'boolean', required: false, defaultValue: true },
            { name: 'tags', fieldType: 'array', required: false },
          ],
        },
      },
    );

  it('shows the runtime form, refuses values that break it with 400 naming the problem, then takes valid values into user_input', async () => {
    const { workflowId, runId, run, gate, stepId } = await parkAt([formStep(), after()]);
    expect(gate).toMatchObject({ requiresUserInput: true, requiresConfirmation: false, userInputMessage: 'Contact details, please', isPostExecution: false });
    expect(gate.userInputSchema).toEqual([
      { name: 'email', fieldType: 'str', description: 'Work email', required: true, value: null, allowedValues: null },
      { name: 'plan', fieldType: 'str', description: null, required: true, value: 'free', allowedValues: ['free', 'pro'] },
      { name: 'seats', fieldType: 'float', description: null, required: false, value: null, allowedValues: null },
      { name: 'notify', fieldType: 'bool', description: null, required: false, value: true, allowedValues: null },
      { name: 'tags', fieldType: 'list', description: null, required: false, value: null, allowedValues: null },
    ]);
    // The step waits before executing.
    expect(byName(run)['Collect Contact']).toMatchObject({ status: 'awaiting_approval', outputSnapshot: null });

    const cases: Array<[Record<string, unknown>, string]> = [
      [{ email: 42 }, "field 'email' must be of type str"],
      [{ seats: 'three', email: 'a@b.c' }, "field 'seats' must be of type float"],
      [{ email: 'a@b.c', notify: 'yes' }, "field 'notify' must be of type bool"],
      [{ email: 'a@b.c', tags: 'x' }, "field 'tags' must be of type list"],
      [{ plan: 'pro' }, "field 'email' is required"],
      [{ email: null }, "field 'email' is required"],
      [{ email: 'a@b.c', plan: 'enterprise' }, 'field \'plan\' must be one of ["free","pro"]'],
      [{ email: 'a@b.c', phone: '555' }, "unknown field 'phone'"],
    ];
    for (const [userInput, problem] of cases) {
      const refused = await expect400(workflowId, runId, { stepId, resolution: 'user_input', userInput }, new RegExp(`^Invalid userInput for step '${stepId}': `));
      expect(refused.detail.message).toContain(problem);
      expect(refused.detail.problems).toContain(problem);
      await expectStillPending(workflowId, runId, gate);
    }
    // Several problems at once are all named.
    const many = await expect400(workflowId, runId, { stepId, resolution: 'user_input', userInput: { plan: 'gold', extra: 1 } }, /Invalid userInput/);
    expect(many.detail.problems).toEqual(expect.arrayContaining(["unknown field 'extra'", "field 'email' is required", 'field \'plan\' must be one of ["free","pro"]']));

    await expect200(workflowId, runId, { stepId, resolution: 'user_input', userInput: { email: 'jane@example.com', seats: 3, tags: ['vip'] } });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.status, done.errorSummary).toBe('completed');
    const values = { email: 'jane@example.com', plan: 'free', seats: 3, notify: true, tags: ['vip'] };
    expect(byName(done)['Collect Contact']).toMatchObject({ status: 'completed', attempt: 1 });
    expect(byName(done)['Collect Contact'].outputSnapshot.arguments).toEqual({ email: 'jane@example.com', plan: 'free', all: values });
    expect(done.finalOutput.arguments.prev.arguments.email).toBe('jane@example.com');
  });

  it('on confirm uses the defaults; a required field without a default makes confirm a 400 (documents current behaviour)', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt([formStep(), after()]);
    await expect400(workflowId, runId, { stepId, resolution: 'confirm' }, `Invalid userInput for step '${stepId}': field 'email' is required`);
    await expectStillPending(workflowId, runId, gate);

    const defaults = await parkAt([
      echoStep('Defaults', { all: { $cel: 'user_input' } }, {
        humanReview: { requiresUserInput: true, userInputSchema: [{ name: 'plan', fieldType: 'string', required: true, defaultValue: 'pro' }, { name: 'seats', fieldType: 'number', required: false }] },
      }),
    ]);
    await expect200(defaults.workflowId, defaults.runId, { stepId: defaults.stepId, resolution: 'confirm' });
    const done = await svc.waitForRun(defaults.workflowId, defaults.runId);
    expect(done.status, done.errorSummary).toBe('completed');
    expect(done.finalOutput.arguments.all).toEqual({ plan: 'pro' });
  });

  it('user_input is null for a step without a form', async () => {
    const { run } = await svc.runWorkflow(body([echoStep('Plain', { ui: { $cel: 'user_input' } })]));
    expect(run.finalOutput.arguments).toEqual({ ui: null });
  });
});

// ---- 6. route selection ------------------------------------------------------------------------

describe('route selection on a router', () => {
  const router = (review: Record<string, unknown>, conditionCel?: string) => ({
    name: 'Route',
    nodeType: 'router',
    ...(conditionCel ? { conditionCel } : {}),
    choices: [
      { name: 'alpha', steps: [echoStep('Alpha', { c: 'alpha', prev: { $cel: 'previous_step_content' } })] },
      { name: 'beta', steps: [echoStep('Beta', { c: 'beta', prev: { $cel: 'previous_step_content' } })] },
      { name: 'gamma', steps: [echoStep('Gamma', { c: 'gamma', prev: { $cel: 'previous_step_content' } })] },
    ],
    humanReview: { requiresUserInput: true, userInputMessage: 'Where to?', ...review },
  });

  it('lists the choices and runs the one picked', async () => {
    const { workflowId, runId, run, gate, stepId } = await parkAt([echoStep('Start', { s: 1 }), router({})]);
    expect(gate).toMatchObject({
      stepType: 'router',
      requiresRouteSelection: true,
      requiresUserInput: false,
      userInputSchema: null,
      availableChoices: ['alpha', 'beta', 'gamma'],
      allowMultipleSelections: false,
      userInputMessage: 'Where to?',
      stepOutput: null,
    });
    expect(byName(run)['Route']).toMatchObject({ status: 'awaiting_approval' });

    await expect200(workflowId, runId, { stepId, resolution: 'route_select', selectedChoices: ['beta'] });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.status, done.errorSummary).toBe('completed');
    expect(done.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Start', 'Route', 'Beta']);
    expect(byName(done)['Route'].inputSnapshot).toEqual({ conditionCel: null, selected: ['beta'] });
    expect(done.finalOutput.arguments.c).toBe('beta');
    expect(done.finalOutput.arguments.prev.arguments).toEqual({ s: 1 });
  });

  it('with allowMultipleSelections runs several choices in definition order, each fed by the previous', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt([echoStep('Start', { s: 1 }), router({ allowMultipleSelections: true })]);
    expect(gate.allowMultipleSelections).toBe(true);
    await expect200(workflowId, runId, { stepId, resolution: 'route_select', selectedChoices: ['gamma', 'alpha'] });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.status, done.errorSummary).toBe('completed');
    expect(done.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Start', 'Route', 'Alpha', 'Gamma']);
    const nodes = byName(done);
    expect(nodes['Gamma'].outputSnapshot.arguments.prev).toEqual(nodes['Alpha'].outputSnapshot);
    expect(done.finalOutput).toEqual(nodes['Gamma'].outputSnapshot);
    expect(nodes['Route'].outputSnapshot).toEqual(nodes['Gamma'].outputSnapshot);
  });

  it('refuses an unknown choice, a duplicate, and two choices when only one is allowed (400), losing nothing', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt([router({})]);
    await expect400(workflowId, runId, { stepId, resolution: 'route_select', selectedChoices: ['zeta'] }, "Unknown choice(s) 'zeta'; available: alpha, beta, gamma");
    await expectStillPending(workflowId, runId, gate);
    await expect400(workflowId, runId, { stepId, resolution: 'route_select', selectedChoices: ['alpha', 'Beta'] }, "Unknown choice(s) 'Beta'; available: alpha, beta, gamma");
    await expect400(workflowId, runId, { stepId, resolution: 'route_select', selectedChoices: ['alpha', 'beta'] }, 'This router allows one choice, got 2');
    await expectStillPending(workflowId, runId, gate);
    await expect400(workflowId, runId, { stepId, resolution: 'user_input', userInput: { choice: 'alpha' } }, /^Resolution 'user_input' needs a requirement that collects user input/);
    await expectStillPending(workflowId, runId, gate);

    const multi = await parkAt([router({ allowMultipleSelections: true })]);
    await expect400(multi.workflowId, multi.runId, { stepId: multi.stepId, resolution: 'route_select', selectedChoices: ['alpha', 'alpha'] }, 'selectedChoices lists a choice twice');
    await expectStillPending(multi.workflowId, multi.runId, multi.gate);

    await expect200(workflowId, runId, { stepId, resolution: 'route_select', selectedChoices: ['alpha'] });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Route', 'Alpha']);
  });

  it('offers the conditionCel result as suggestedChoice and follows it on confirm', async () => {
    const { workflowId, runId, gate, stepId } = await parkAt([router({}, 'input.tier == "gold" ? "gamma" : "alpha"')], { tier: 'gold' });
    expect(gate.stepOutput).toEqual({ suggestedChoice: 'gamma' });
    await expect200(workflowId, runId, { stepId, resolution: 'confirm' });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.status, done.errorSummary).toBe('completed');
    expect(done.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Route', 'Gamma']);
  });

  it('a route_select overrides the suggestion', async () => {
    const { workflowId, runId, stepId } = await parkAt([router({}, '"alpha"')]);
    await expect200(workflowId, runId, { stepId, resolution: 'route_select', selectedChoices: ['beta'] });
    const done = await svc.waitForRun(workflowId, runId);
    expect(done.nodeRuns.map((n: any) => n.nodeName)).toEqual(['Route', 'Beta']);
  });
});
