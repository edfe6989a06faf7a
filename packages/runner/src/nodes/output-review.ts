/**
 * Output review after a step or router executed (humanReview.requiresOutputReview): the node run
 * holds `awaiting_approval` with the output until a person confirms, edits or rejects it.
 */
import { gateKeyOf, type RequirementRecord, type WorkflowNode } from '@switchyard/domain';
import { gateOutcomeText } from '../gates.ts';
import type { NodeResult } from '../step-runner.ts';
import type { NodeContext } from './context.ts';
import { RetryRound, gateRound, nodeRunOf, settleNode } from './hitl-rounds.ts';

/** The output review raised in this round, if the node already executed in it (its output is in `stepOutput`). */
export function reviewRaised(ctx: NodeContext, node: WorkflowNode, path: string, round: number): RequirementRecord | undefined {
  return ctx.ledger.requirement(gateKeyOf(node.id, path, 'post', round));
}

/**
 * Reviews `output` of this round: confirm keeps the output, edit replaces it downstream (the node
 * run keeps both), anything else follows the rejection policy (see gateRound).
 */
export async function reviewOutput(ctx: NodeContext, node: WorkflowNode, path: string, round: number, output: unknown): Promise<NodeResult | RetryRound> {
  const { decided, ended } = await gateRound(ctx, { node, path, phase: 'post', round, flags: { requiresOutputReview: true, stepOutput: output }, onBlocked: async () => {} });
  if (ended) {
    // The rejected output's attempt ends failed; the next round starts a new attempt.
    if (ended instanceof RetryRound) await settleNode(ctx, node, path, 'failed', `output rejected: ${gateOutcomeText(decided)}`);
    return ended;
  }
  const edited = decided.resolution === 'edit';
  const final = edited ? decided.editedOutput : output;
  await ctx.ledger.end(nodeRunOf(ctx, node, path), { status: 'completed', outputSnapshot: final, originalOutputSnapshot: edited ? output : undefined });
  return { output: final, skipped: false };
}
