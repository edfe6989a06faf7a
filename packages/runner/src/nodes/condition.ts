/** A condition node: the bool decision, its confirmation (`else_branch` takes the other branch), the branch; semantics in interpreter.ts. */
import type { WorkflowNode } from '@switchyard/domain';
import type { NodeResult } from '../step-runner.ts';
import { runContainer } from './container.ts';
import type { NodeContext, Scope } from './context.ts';
import { decide } from './expressions.ts';
import { gateRound, inRounds } from './hitl-rounds.ts';

export function runCondition(ctx: NodeContext, node: WorkflowNode, scope: Scope): Promise<NodeResult> {
  const expression = node.conditionCel!;
  return inRounds(async (round) => {
    const result = await decide(ctx, node, scope, () => ctx.cel.evaluateBool(expression, ctx.variables(scope)));
    let branch: 'trueSteps' | 'falseSteps' = result ? 'trueSteps' : 'falseSteps';
    if (node.humanReview?.requiresConfirmation) {
      const flags = { requiresConfirmation: true, stepOutput: { result, branch } };
      const { action, ended } = await gateRound(ctx, { node, path: scope.iterationPath, phase: 'decision', round, flags }, ['else_branch']);
      if (ended) return ended;
      if (action === 'else_branch') branch = result ? 'falseSteps' : 'trueSteps';
    }
    const chosen = branch;
    return runContainer(ctx, node, scope, { conditionCel: expression, result, branch: chosen }, async () => ({ output: await ctx.runSequence(node[chosen], scope), skipped: false }));
  });
}
