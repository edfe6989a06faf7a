/** A parallel node: children concurrently under the run's parallel limit; semantics in interpreter.ts. */
import type { WorkflowNode } from '@switchyard/domain';
import { settleWithConcurrency } from '../concurrency.ts';
import { GateBlocked } from '../gates.ts';
import type { NodeResult } from '../step-runner.ts';
import { ExecutionStopped } from '../stop-reason.ts';
import { runContainer } from './container.ts';
import { TargetReached, setOwn, type NodeContext, type Scope } from './context.ts';

export function runParallel(ctx: NodeContext, node: WorkflowNode, scope: Scope): Promise<NodeResult> {
  return runContainer(ctx, node, scope, null, async () => ({ output: await runChildren(ctx, node, scope), skipped: false }));
}

async function runChildren(ctx: NodeContext, node: WorkflowNode, scope: Scope): Promise<Record<string, unknown>> {
  const settled = await settleWithConcurrency(node.children, ctx.parallelLimit, (child) => ctx.runNode(child, scope));
  ctx.signal.throwIfAborted();
  const errors = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
  // The rerun target reached ends everything; a failure outweighs a pause, which outweighs a branch waiting at a gate.
  const reached = errors.find((e) => e instanceof TargetReached);
  if (reached !== undefined) throw reached;
  const fatal = errors.find((e) => !(e instanceof GateBlocked) && !(e instanceof ExecutionStopped));
  if (fatal !== undefined) throw fatal;
  const stopped = errors.find((e) => e instanceof ExecutionStopped);
  if (stopped !== undefined) throw stopped;
  if (errors.length > 0) throw errors[0];
  const output: Record<string, unknown> = {};
  node.children.forEach((child, i) => {
    setOwn(output, child.name, (settled[i] as PromiseFulfilledResult<NodeResult>).value.output);
  });
  return output;
}
