/** A router node: the route decision and its gate, the selected choices, output review; semantics in interpreter.ts. */
import { childIterationPath, routerRoundSegment, type WorkflowNode } from '@switchyard/domain';
import { NodeFailedError, type NodeResult } from '../step-runner.ts';
import { runContainer } from './container.ts';
import type { NodeContext, Scope } from './context.ts';
import { decide } from './expressions.ts';
import { gateRound, inRounds } from './hitl-rounds.ts';
import { reviewOutput, reviewRaised } from './output-review.ts';

export function runRouter(ctx: NodeContext, node: WorkflowNode, scope: Scope): Promise<NodeResult> {
  const review = node.humanReview;
  const names = node.choices.map((c) => c.name);
  const path = scope.iterationPath;
  const expression = node.conditionCel;
  return inRounds(async (round) => {
    const reviewed = review?.requiresOutputReview === true;
    const earlier = reviewed ? reviewRaised(ctx, node, path, round) : undefined;
    let output: unknown;
    if (earlier) {
      output = earlier.stepOutput;
    } else {
      const suggested = expression ? await decide(ctx, node, scope, () => ctx.cel.evaluateString(expression, ctx.variables(scope, { step_choices: names }))) : null;
      let selected = suggested === null ? null : [suggested];
      if (review && (review.requiresConfirmation || review.requiresUserInput)) {
        const flags = {
          requiresConfirmation: review.requiresConfirmation,
          requiresUserInput: review.requiresUserInput,
          requiresRouteSelection: review.requiresUserInput,
          stepOutput: suggested === null ? null : { suggestedChoice: suggested },
        };
        const { decided, ended } = await gateRound(ctx, { node, path, phase: 'decision', round, flags });
        if (ended) return ended;
        selected = decided.selectedChoices ?? selected;
      }
      const branchPath = round === 0 ? path : childIterationPath(path, routerRoundSegment(round));
      const result = await runContainer(ctx, node, scope, { conditionCel: expression, selected }, () => runChoices(ctx, node, selected, { ...scope, iterationPath: branchPath }), reviewed);
      if (!reviewed) return result;
      output = result.output;
    }
    return reviewOutput(ctx, node, path, round, output);
  });
}

/** Runs the selected choices' steps in definition order. */
async function runChoices(ctx: NodeContext, node: WorkflowNode, selected: readonly string[] | null, scope: Scope): Promise<NodeResult> {
  const names = node.choices.map((c) => c.name);
  if (!selected) throw new NodeFailedError(node.id, node.name, 'no route was selected (the router has no conditionCel and the decision named no choice)');
  const unknown = selected.filter((name) => !names.includes(name));
  if (unknown.length > 0) throw new NodeFailedError(node.id, node.name, `router selected '${unknown.join("', '")}', which is not one of its choices: ${names.join(', ')}`);
  let previous = scope.previous;
  for (const choice of node.choices) {
    if (selected.includes(choice.name)) previous = await ctx.runSequence(choice.steps, { ...scope, previous });
  }
  return { output: previous, skipped: false };
}
