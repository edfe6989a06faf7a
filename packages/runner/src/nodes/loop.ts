/** A loop node: pre-gate, iterations (with iteration reviews), end condition; semantics in interpreter.ts. */
import { childIterationPath, iterationSegment, type WorkflowNode } from '@switchyard/domain';
import { RunCancelled, actionOf, gateOutcomeText, retryAllowed } from '../gates.ts';
import { NodeFailedError, type NodeResult } from '../step-runner.ts';
import { runContainer } from './container.ts';
import type { LoopState, NodeContext, Scope } from './context.ts';
import { evaluate } from './expressions.ts';
import { RetryRound, gate, gateRound, inRounds } from './hitl-rounds.ts';

export function runLoop(ctx: NodeContext, node: WorkflowNode, scope: Scope): Promise<NodeResult> {
  return inRounds(async (round) => {
    if (node.humanReview?.requiresConfirmation) {
      const { ended } = await gateRound(ctx, { node, path: scope.iterationPath, phase: 'pre', round, flags: { requiresConfirmation: true } });
      if (ended) return ended;
    }
    return runContainer(ctx, node, scope, null, async () => ({ output: await iterate(ctx, node, scope), skipped: false }));
  });
}

/** The loop body, iteration by iteration. */
async function iterate(ctx: NodeContext, node: WorkflowNode, scope: Scope): Promise<unknown[]> {
  const { maxIterations, endConditionCel } = node.loopConfig!;
  const outputs: unknown[] = [];
  let previous = scope.previous;
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    const kept = await runIteration(ctx, node, scope.iterationPath, iteration, previous, { iteration, maxIterations, outputs: [...outputs] });
    if (kept === null) return outputs; // skip: the rejected iteration is dropped and the loop ends
    outputs.push(kept.output);
    previous = kept.output;
    if (endConditionCel) {
      const vars = ctx.variables({ ...scope, previous }, { loop_state: { iteration, maxIterations, outputs: [...outputs] } });
      if (evaluate(node, 'endConditionCel', () => ctx.cel.evaluateBool(endConditionCel, vars))) break;
    }
  }
  return outputs;
}

/**
 * One iteration of the loop at `loopPath`, with its iteration review when configured: a rejection
 * under `onReject: retry` runs the body again in the next round. Resolves with the iteration's
 * output, or null when the review dropped it.
 */
function runIteration(ctx: NodeContext, node: WorkflowNode, loopPath: string, iteration: number, previous: unknown, loopState: LoopState): Promise<{ output: unknown } | null> {
  const reviewed = node.humanReview?.requiresIterationReview === true;
  return inRounds(async (round) => {
    const iterationPath = childIterationPath(loopPath, iterationSegment(iteration, round));
    const output = await ctx.runSequence(node.children, { previous, iterationPath, loopState });
    if (!reviewed) return { output };
    const decided = await gate(ctx, { node, path: loopPath, phase: 'iteration', round, flags: { requiresConfirmation: true, stepOutput: output, iteration } });
    switch (actionOf(decided)) {
      case 'proceed':
        return { output };
      case 'cancel':
        throw new RunCancelled(`Run cancelled: ${gateOutcomeText(decided)} (iteration ${iteration})`);
      case 'retry':
        if (retryAllowed(decided, round)) return new RetryRound(decided);
        throw new NodeFailedError(node.id, node.name, `${gateOutcomeText(decided)} (iteration ${iteration}); no retries left`);
      default:
        return null; // skip
    }
  });
}
