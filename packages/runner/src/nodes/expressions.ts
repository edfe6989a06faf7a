/** A node's own CEL expressions (branch decisions, a loop's end condition): evaluation errors fail the node. */
import type { WorkflowNode } from '@switchyard/domain';
import { CelEvaluationError } from '../cel/index.ts';
import { sharedSlice } from '../event-loop-slice.ts';
import { NodeFailedError } from '../step-runner.ts';
import { reasonOf, type NodeContext, type Scope } from './context.ts';

/** Evaluates one of the node's expressions; an evaluation error fails the node. */
export function evaluate<T>(node: WorkflowNode, field: string, evaluation: () => T): T {
  try {
    return evaluation();
  } catch (error) {
    if (error instanceof CelEvaluationError) throw new NodeFailedError(node.id, node.name, `${field}: ${error.message}`);
    throw error;
  }
}

/** Evaluates a branching decision (`conditionCel`); when it cannot be evaluated, records the node as failed. */
export async function decide<T>(ctx: NodeContext, node: WorkflowNode, scope: Scope, evaluation: () => T): Promise<T> {
  await sharedSlice.yield();
  try {
    return evaluate(node, 'conditionCel', evaluation);
  } catch (error) {
    const nodeRun = await ctx.ledger.start(node, scope.iterationPath, { conditionCel: node.conditionCel });
    await ctx.ledger.end(nodeRun, { status: 'failed', error: reasonOf(node, error) });
    throw error;
  }
}
