/**
 * The projected reads of a run (issue #10 item 2): what the run views read, a decision's gate
 * before and after the compare-and-set, and what a decision and a park read back (embedded store
 * in memory; the projections are MongoDB's, for both backends).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LEGACY_ACCESS, RUN_VIEW_FIELDS, UNDECIDED, type Decision, type RequirementRecord, type WorkflowNode } from '@switchyard/domain';
import { newId } from './documents.ts';
import { useInMemoryRepositories } from '../testing/in-memory-repositories.ts';

const db = useInMemoryRepositories();

const CANVAS = { viewport: { x: 0, y: 0, zoom: 1 } };
const NODES = [{ id: 'a', name: 'A', nodeType: 'step', executorKey: 'echo', children: [], trueSteps: [], falseSteps: [], choices: [] }] as unknown as WorkflowNode[];
const NOW = new Date(Date.UTC(2026, 0, 1));
const CONFIRM: Decision = { resolution: 'confirm', confirmed: true, rejectionFeedback: null, editedOutput: null, userInput: null, selectedChoices: null, decidedBy: 'human' };

/** A gate of step `stepId`, round `round` (its key says both). */
function gate(stepId: string, round: number): RequirementRecord {
  return {
    schemaVersion: 1,
    stepId,
    gateKey: `${stepId}|pre|${round}`,
    nodeId: stepId,
    iterationPath: '',
    phase: 'pre',
    round,
    stepName: stepId,
    stepType: 'step',
    requiresConfirmation: true,
    requiresUserInput: false,
    requiresOutputReview: false,
    requiresRouteSelection: false,
    confirmationMessage: null,
    userInputMessage: null,
    userInputSchema: null,
    outputReviewMessage: null,
    availableChoices: null,
    allowMultipleSelections: false,
    stepOutput: { big: 'x'.repeat(100) },
    isPostExecution: false,
    ...UNDECIDED,
    retryCount: 0,
    maxRetries: null,
    onTimeout: 'skip',
    onReject: 'retry',
    requestedAt: NOW,
    timeoutSeconds: 60,
    timeoutAt: null,
    decidedAt: null,
  } as RequirementRecord;
}

/** A run of a new workflow, claimed by `owner`, with the gates given; its workflow and run ids. */
async function runWithGates(gates: RequirementRecord[], owner = 'me'): Promise<{ workflowId: string; runId: string }> {
  const workflowId = (await db.repos.definitions.create({ name: `w-${newId()}`, description: null, canvas: CANVAS, nodes: NODES, access: DEFAULT_LEGACY_ACCESS }, NOW)).id;
  const run = await db.repos.runs.create(
    {
      workflowDefinitionId: workflowId,
      workflowVersion: 1,
      triggerSource: 'test',
      initialInput: { customer: 'c-1' },
      definitionSnapshot: { name: 'w', description: null, canvas: CANVAS, nodes: NODES },
      parentRunId: null,
      resolvedDependencies: [],
      triggeringUserId: 'u-1',
      triggeringUsername: 'ada',
      triggeringScopes: ['workflows-control'],
    },
    NOW,
  );
  expect(await db.repos.runs.claim(run.id, owner, 60_000, NOW)).not.toBeNull();
  for (const requirement of gates) expect(await db.repos.runs.addRequirement(run.id, owner, requirement, NOW)).toBe(true);
  return { workflowId, runId: run.id };
}

describe('projected run reads', () => {
  it('the run view has exactly the fields the views read', async () => {
    const { workflowId, runId } = await runWithGates([gate('a', 0)]);
    const view = await db.repos.runs.getViewInWorkflow(workflowId, runId);
    const full = await db.repos.runs.get(runId);
    expect(Object.keys(view!).sort()).toEqual([...RUN_VIEW_FIELDS].filter((field) => full![field] !== undefined).sort());
    for (const field of RUN_VIEW_FIELDS) expect(view![field]).toEqual(full![field]);
    expect(await db.repos.runs.getViewInWorkflow(newId(), runId)).toBeNull();
  });

  it("a decision's gate: the step's undecided one, a gate by key, the step's last one; null for another workflow", async () => {
    const { workflowId, runId } = await runWithGates([gate('a', 0), gate('b', 0), gate('a', 1)]);
    await db.repos.runs.decideRequirement(runId, 'a|pre|0', CONFIRM, NOW);
    const undecided = await db.repos.runs.gateOf(runId, { stepId: 'a' }, workflowId);
    expect(undecided!.run).toMatchObject({ id: runId, workflowDefinitionId: workflowId, status: 'running' });
    expect(undecided!.gate).toMatchObject({ gateKey: 'a|pre|1', decidedAt: null, stepOutput: { big: 'x'.repeat(100) } });
    expect((await db.repos.runs.gateOf(runId, { gateKey: 'a|pre|0' }))!.gate).toMatchObject({ resolution: 'confirm', decidedBy: 'human' });
    expect((await db.repos.runs.gateOf(runId, { stepId: 'c' }))!.gate).toBeNull();
    expect(await db.repos.runs.gateOf(runId, { stepId: 'a' }, newId())).toBeNull();
    await db.repos.runs.decideRequirement(runId, 'a|pre|1', CONFIRM, NOW);
    expect((await db.repos.runs.gateOf(runId, { stepId: 'a' }))!.gate).toBeNull();
    expect((await db.repos.runs.latestGateOf(runId, 'a'))!.gate).toMatchObject({ gateKey: 'a|pre|1', resolution: 'confirm' });
    expect((await db.repos.runs.latestGateOf(runId, 'c'))!.gate).toBeNull();
    expect(await db.repos.runs.latestGateOf(newId(), 'a')).toBeNull();
  });

  it('a decision reads back only the run status and wake counter; exactly one of two deciders wins', async () => {
    const { workflowId, runId } = await runWithGates([gate('a', 0)]);
    const [first, second] = await Promise.all([db.repos.runs.decideRequirement(runId, 'a|pre|0', CONFIRM, NOW), db.repos.runs.decideRequirement(runId, 'a|pre|0', CONFIRM, NOW)]);
    expect([first, second].filter((decided) => decided !== null)).toHaveLength(1);
    expect(first ?? second).toEqual({ id: runId, workflowDefinitionId: workflowId, status: 'running', wakeSeq: 1, parentRunId: null });
  });

  it('a park reads back only the gates, whose timeout clocks then start', async () => {
    const { runId } = await runWithGates([gate('a', 0)]);
    const parked = await db.repos.runs.park(runId, 'me', 0, NOW);
    expect(Object.keys(parked!).sort()).toEqual(['id', 'parentRunId', 'pendingRequirements', 'workflowDefinitionId'].sort());
    expect(await db.repos.runs.startTimeouts(parked!, NOW)).toBe(1);
    expect((await db.repos.runs.get(runId))!.pendingRequirements[0]!.timeoutAt).toEqual(new Date(NOW.getTime() + 60_000));
  });
});
