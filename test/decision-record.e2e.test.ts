/**
 * The record of every human decision (issue "Run control" item 7): after gates are decided, the
 * run detail still lists every requirement with its decision, and the node run of a gated node
 * carries its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

describe('decided gates stay on the record', () => {
  it('keeps a form, a rejection and its retry, and an edited output, with who decided and when', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('record'),
      canvas: CANVAS,
      nodes: [
        {
          ...echoStep('Ask', { email: { $cel: 'user_input.email' } }),
          id: 'ask',
          humanReview: { requiresUserInput: true, userInputSchema: [{ name: 'email', fieldType: 'string', required: true }] },
        },
        { ...echoStep('Check'), id: 'check', humanReview: { requiresConfirmation: true, onReject: 'retry', maxRetries: 2 } },
        { ...echoStep('Draft', { text: 'first draft' }), id: 'draft', humanReview: { requiresOutputReview: true } },
      ],
    });
    const decide = async (stepId: string, body: Record<string, unknown>) => {
      await svc.waitForGate(workflowId, runId, { until: (pending) => pending.some((p: any) => p.stepId === stepId) });
      expect((await svc.approve(workflowId, runId, { stepId, ...body })).status).toBe(200);
    };
    await decide('ask', { resolution: 'user_input', userInput: { email: 'ada@example.com' } });
    await decide('check', { resolution: 'reject', feedback: 'not yet' });
    await decide('check:retry-1', { resolution: 'confirm' });
    await decide('draft:review', { resolution: 'edit', editedOutput: { text: 'final' } });
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('completed');
    expect(run.pendingRequirements).toEqual([]);

    expect(run.requirements.map((r: any) => [r.stepId, r.resolution, r.decidedBy])).toEqual([
      ['ask', 'user_input', 'human'],
      ['check', 'reject', 'human'],
      ['check:retry-1', 'confirm', 'human'],
      ['draft:review', 'edit', 'human'],
    ]);
    const [ask, rejected, retried, draft] = run.requirements;
    expect(ask).toMatchObject({ nodeId: 'ask', iterationPath: '', round: 0, userInput: { email: 'ada@example.com' } });
    expect(rejected).toMatchObject({ nodeId: 'check', round: 0, rejectionFeedback: 'not yet', confirmed: false });
    expect(retried).toMatchObject({ nodeId: 'check', round: 1, confirmed: true });
    expect(draft).toMatchObject({ nodeId: 'draft', editedOutput: { text: 'final' }, isPostExecution: true });
    for (const requirement of run.requirements) expect(Date.parse(requirement.decidedAt)).toBeGreaterThanOrEqual(Date.parse(requirement.requestedAt));

    const checkRun = run.nodeRuns.find((n: any) => n.nodeId === 'check');
    expect(checkRun.decisions.map((d: any) => d.stepId)).toEqual(['check', 'check:retry-1']);
    const draftRun = (await svc.api.get(wf(`/${workflowId}/runs/${runId}/nodes/${run.nodeRuns.find((n: any) => n.nodeId === 'draft').id}`))).body;
    expect(draftRun.decisions).toEqual([expect.objectContaining({ stepId: 'draft:review', resolution: 'edit', editedOutput: { text: 'final' } })]);
    expect(draftRun.originalOutputSnapshot).toMatchObject({ arguments: { text: 'first draft' } });
    const listed = (await svc.api.get(wf(`/${workflowId}/runs/${runId}/nodes`))).body.nodeRuns;
    expect(listed.find((n: any) => n.nodeId === 'ask').decisions[0]).toMatchObject({ userInput: { email: 'ada@example.com' } });
  });

  it('records gates closed because the run ended, as decided by run_ended', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('record ended'),
      canvas: CANVAS,
      nodes: [
        {
          name: 'Both',
          nodeType: 'parallel',
          children: [
            { ...echoStep('Wait'), id: 'wait', humanReview: { requiresConfirmation: true } },
            { ...echoStep('Stop'), id: 'stop', humanReview: { requiresConfirmation: true, onReject: 'cancel' } },
          ],
        },
      ],
    });
    await svc.waitForGate(workflowId, runId, { until: (pending) => pending.length === 2 });
    expect((await svc.approve(workflowId, runId, { stepId: 'stop', resolution: 'reject' })).status).toBe(200);
    const run = await svc.waitForRun(workflowId, runId);
    expect(run.status).toBe('cancelled');
    const byStep = Object.fromEntries(run.requirements.map((r: any) => [r.stepId, [r.resolution, r.decidedBy]]));
    expect(byStep).toEqual({ wait: ['cancel', 'run_ended'], stop: ['reject', 'human'] });
  });
});
