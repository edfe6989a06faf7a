/**
 * What the node-type modules of the interpreter share: where a node executes (Scope), what they
 * may use of the traversal (NodeContext, provided by the Interpreter), and the signal that a node
 * rerun reached its target.
 */
import type { WorkflowNode } from '@switchyard/domain';
import type { CelEngine } from '../cel/index.ts';
import type { Clock } from '../clock.ts';
import type { RunLedger } from '../ledger.ts';
import { NodeFailedError, messageOf, type NodeResult, type StepRunner } from '../step-runner.ts';

/** Loop state visible to expressions as `loop_state` (CEL reserves the word `loop`). */
export interface LoopState {
  iteration: number;
  maxIterations: number;
  outputs: unknown[];
}

/** Where in the run a node executes. */
export interface Scope {
  previous: unknown;
  /** See @switchyard/domain iteration-path.ts. */
  iterationPath: string;
  loopState: LoopState | null;
}

/** The traversal as the node types see it (the Interpreter provides it). */
export interface NodeContext {
  readonly ledger: RunLedger;
  readonly cel: CelEngine;
  readonly clock: Clock;
  /** Aborts in-flight work (cancel, timeout, shutdown, lost lease). */
  readonly signal: AbortSignal;
  /** Max children of one parallel node in flight at once. */
  readonly parallelLimit: number;
  readonly steps: StepRunner;
  /** Runs one node through the node boundary (reuse, pause, abort, rerun target). */
  runNode(node: WorkflowNode, scope: Scope): Promise<NodeResult>;
  /** Runs nodes in order, each from the previous one's output; resolves with the last output. */
  runSequence(nodes: readonly WorkflowNode[], scope: Scope): Promise<unknown>;
  /** The CEL variables (and step context) at `scope`, with `extra` laid over them. */
  variables(scope: Scope, extra?: Record<string, unknown>): Record<string, unknown>;
}

/** Unwinds the traversal once a node rerun's target has executed (see Interpreter.run). */
export class TargetReached extends Error {
  override readonly name = 'TargetReached';
  constructor() {
    super('the node rerun reached its target');
  }
}

/** Sets an own, enumerable property, also for names such as `__proto__` (node names are free text). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The error text to record on `node`'s own node run: the bare reason when the node itself failed. */
export function reasonOf(node: WorkflowNode, error: unknown): string {
  return error instanceof NodeFailedError && error.nodeId === node.id ? error.reason : messageOf(error);
}
