/** The node run of a container node (parallel, loop, condition, router) around its children. */
import type { WorkflowNode } from '@switchyard/domain';
import { GateBlocked, RunCancelled } from '../gates.ts';
import { checkOutputSize } from '../output-limit.ts';
import { NodeFailedError, messageOf, type NodeResult } from '../step-runner.ts';
import { ExecutionStopped } from '../stop-reason.ts';
import { TargetReached, reasonOf, type NodeContext, type Scope } from './context.ts';

/**
 * Records a container node run around `body`. A failure inside fails the container too; a
 * branch waiting at a gate leaves it running until the next traversal. `holdForReview` leaves
 * it `awaiting_approval` with its output (an output review follows).
 */
export async function runContainer(ctx: NodeContext, node: WorkflowNode, scope: Scope, inputSnapshot: unknown, body: () => Promise<NodeResult>, holdForReview = false): Promise<NodeResult> {
  // A container left running (or held at an iteration review) by an earlier traversal resumes
  // its node run; one held for an output review is entered again only for a new round.
  const nodeRun = await ctx.ledger.enter(node, scope.iterationPath, inputSnapshot, holdForReview ? ['running'] : ['running', 'awaiting_approval']);
  try {
    const result = await body();
    const { bytes: outputBytes, problem } = checkOutputSize(result.output, ctx.steps.maxOutputBytes);
    if (problem !== null) throw new NodeFailedError(node.id, node.name, problem);
    const status = holdForReview && !result.skipped ? 'awaiting_approval' : result.skipped ? 'skipped' : 'completed';
    await ctx.ledger.end(nodeRun, { status, outputSnapshot: result.output, outputBytes });
    return result;
  } catch (error) {
    ctx.signal.throwIfAborted();
    // A branch waiting at a gate, or stopped by a pause: the container stays open for the next traversal.
    if (error instanceof GateBlocked || error instanceof ExecutionStopped || error instanceof TargetReached) throw error;
    if (error instanceof RunCancelled) {
      await ctx.ledger.end(nodeRun, { status: 'cancelled', error: error.message });
      throw error;
    }
    await ctx.ledger.end(nodeRun, { status: 'failed', error: reasonOf(node, error) });
    throw error instanceof NodeFailedError ? error : new NodeFailedError(node.id, node.name, messageOf(error));
  }
}
