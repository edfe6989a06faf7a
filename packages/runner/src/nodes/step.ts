/** A step node: HITL pre-gate, arguments, executor call (step-runner.ts), output review; semantics in interpreter.ts. */
import type { WorkflowNode } from '@switchyard/domain';
import { resolveArguments } from '../cel/index.ts';
import { sharedSlice } from '../event-loop-slice.ts';
import { messageOf, type NodeResult } from '../step-runner.ts';
import type { NodeContext, Scope } from './context.ts';
import { gateRound, inRounds } from './hitl-rounds.ts';
import { reviewOutput, reviewRaised } from './output-review.ts';

export function runStep(ctx: NodeContext, node: WorkflowNode, scope: Scope): Promise<NodeResult> {
  const review = node.humanReview;
  const path = scope.iterationPath;
  return inRounds(async (round, rejection) => {
    let userInput: Record<string, unknown> | null = null;
    if (review && (review.requiresConfirmation || review.requiresUserInput)) {
      const flags = { requiresConfirmation: review.requiresConfirmation, requiresUserInput: review.requiresUserInput };
      const { decided, ended } = await gateRound(ctx, { node, path, phase: 'pre', round, flags });
      if (ended) return ended;
      userInput = decided.userInput;
    }

    const reviewed = review?.requiresOutputReview === true;
    const earlier = reviewed ? reviewRaised(ctx, node, path, round) : undefined;
    const held = ctx.ledger.existing(node.id, path);
    let output: unknown;
    if (earlier) {
      output = earlier.stepOutput;
    } else if (reviewed && held?.status === 'awaiting_approval' && held.attempt > 0 && held.outputSnapshot !== null) {
      output = held.outputSnapshot; // executed, but the process died before its review was raised
    } else {
      const vars = ctx.variables(scope, {
        user_input: userInput,
        additional_data: { triggerSource: ctx.ledger.run.triggerSource, rejectionFeedback: rejection?.rejectionFeedback ?? null, retryCount: round },
      });
      let args: Record<string, unknown>;
      await sharedSlice.yield(); // expressions may take a while: let others in first if due
      try {
        args = resolveArguments(node.config as Record<string, unknown>, vars, ctx.cel);
      } catch (error) {
        return ctx.steps.failBeforeExecution(node, path, messageOf(error));
      }
      const result = await ctx.steps.execute({ node, iterationPath: path, arguments: args, input: scope.previous, holdForReview: reviewed });
      if (result.skipped || !reviewed) return result;
      output = result.output;
    }
    return reviewOutput(ctx, node, path, round, output);
  });
}
