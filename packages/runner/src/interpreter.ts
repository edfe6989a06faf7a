/**
 * The tree interpreter (DESIGN.md "Execution model: memoized re-traversal").
 *
 * It walks a run's definition snapshot from the top. A node whose node run is already settled
 * (completed or skipped) is not executed again: its stored output is reused. A HITL gate whose
 * requirement is already decided is not asked again: its decision is reused. Everything else
 * runs and is recorded. Continuing a run after a crash, a human decision, a resume, a retry or a
 * rerun is the same walk over more history.
 *
 * Semantics (what users see, also documented in docs/guide/how-runs-execute.md):
 * - Sequences (root nodes, a loop body, a condition branch, a router choice) run in order; each
 *   step sees the previous one's output as `previous_step_content`.
 * - step: arguments = `config` with `{"$cel": ...}` expressions evaluated; executor call with
 *   retries per `stepConfig` (step-runner.ts). Output: the executor's result.
 * - parallel: children run concurrently (at most `parallelLimit` at once), all from the same
 *   `previous_step_content`. Output: `{ [child name]: child output }`. One failed child fails the
 *   node after every sibling has settled; a child waiting at a gate holds the node until decided.
 * - loop: children run per iteration (iteration path `i`, nested loops `i/j`, an iteration
 *   re-run after a rejected review `<i>r<n>`; @switchyard/domain iteration-path.ts);
 *   `endConditionCel` is evaluated after each iteration with `loop_state`; stops when true or at
 *   `maxIterations`. Output: the list of iteration outputs.
 * - condition: `conditionCel` must be a bool: true runs `trueSteps`, false runs `falseSteps`.
 *   router: `conditionCel` must be the name of one of its choices, whose steps run; a human may
 *   pick one or several choices instead (route selection). Output: the branch's last output. The
 *   decision is recorded in the node run's input snapshot.
 * - HITL (humanReview): gates before a step/loop (confirmation, user input), on a condition or
 *   router decision, after a step/router (output review, `edit` replaces the output downstream)
 *   and after each loop iteration (iteration review). Rejections follow `onReject`.
 *
 * This class owns the walk and the node boundary ({@link Interpreter.runNode}); each node type
 * executes in its own module under nodes/ through the NodeContext the class provides.
 */
import type { WorkflowNode } from '@switchyard/domain';
import type { CelEngine } from './cel/index.ts';
import type { Clock } from './clock.ts';
import { sharedSlice } from './event-loop-slice.ts';
import type { DownstreamTokenMinter } from './downstream-token.ts';
import type { ExecutorRegistry } from './executors/types.ts';
import type { RunLedger } from './ledger.ts';
import { runCondition } from './nodes/condition.ts';
import { TargetReached, setOwn, type NodeContext, type Scope } from './nodes/context.ts';
import { runLoop } from './nodes/loop.ts';
import { runParallel } from './nodes/parallel.ts';
import { runRouter } from './nodes/router.ts';
import { runStep } from './nodes/step.ts';
import { NodeFailedError, StepRunner, type NodeResult } from './step-runner.ts';
import { inNodeSpan } from './tracing.ts';

export { NodeFailedError } from './step-runner.ts';

/** What the interpreter needs; everything with side effects is injected. */
export interface InterpreterDeps {
  ledger: RunLedger;
  executors: ExecutorRegistry;
  cel: CelEngine;
  clock: Clock;
  /** Aborts in-flight executor calls and backoff waits (cancel, timeout, shutdown, lost lease). */
  signal: AbortSignal;
  /** Aborts at any stop, a pause too: no node starts once it fired (executing ones finish). Default: `signal`. */
  boundary?: AbortSignal;
  /** Max children of one parallel node in flight at once (>= 1). */
  parallelLimit: number;
  /** Source of jitter for retry backoff, [0, 1). */
  random?: () => number;
  /** Largest step output, bytes of JSON (see StepRunnerDeps). */
  maxOutputBytes?: number;
  /** Mints downstream tokens for executor calls (see StepRunnerDeps). */
  downstreamTokens?: DownstreamTokenMinter;
  /** Rewrites failure text the API shows (see StepRunnerDeps). */
  publicText?: (text: string) => string;
}

/** Executes a node that is not settled yet, by node type. */
const EXECUTORS: Record<WorkflowNode['nodeType'], (ctx: NodeContext, node: WorkflowNode, scope: Scope) => Promise<NodeResult>> = {
  step: runStep,
  parallel: runParallel,
  loop: runLoop,
  condition: runCondition,
  router: runRouter,
};

/** Runs (or re-traverses) one run's tree. One instance per traversal. */
export class Interpreter {
  /** `previous_step_outputs`: node name -> output of every node finished so far. */
  private readonly outputs: Record<string, unknown> = {};
  private readonly input: Record<string, unknown>;
  /** What the node types use of this traversal. */
  private readonly context: NodeContext;

  constructor(private readonly deps: InterpreterDeps) {
    this.input = deps.ledger.run.initialInput;
    this.context = {
      ledger: deps.ledger,
      cel: deps.cel,
      clock: deps.clock,
      signal: deps.signal,
      parallelLimit: deps.parallelLimit,
      steps: new StepRunner(deps),
      runNode: (node, scope) => this.runNode(node, scope),
      runSequence: (nodes, scope) => this.runSequence(nodes, scope),
      variables: (scope, extra) => this.variables(scope, extra),
    };
  }

  /** Set once a node rerun's target executed: the containers around it were left open (the engine closes them). */
  targetReached = false;
  private targetOutput: unknown = null;

  /**
   * Walks the whole tree. Resolves with the final output (the last root node's output; for a node
   * rerun, `run.stopAfter`, the target's output as soon as it executed — nothing starts after it).
   * Rejects with NodeFailedError when a node fails, GateBlocked when a branch waits for a decision
   * (the rest of the tree has been advanced as far as it can), RunCancelled when a gate cancels the
   * run, or the abort reason when the signal fires.
   */
  async run(): Promise<unknown> {
    try {
      return await this.runSequence(this.deps.ledger.run.definitionSnapshot.nodes, { previous: this.input, iterationPath: '', loopState: null });
    } catch (error) {
      if (error instanceof TargetReached) return this.targetOutput;
      throw error;
    }
  }

  private async runSequence(nodes: readonly WorkflowNode[], scope: Scope): Promise<unknown> {
    let previous = scope.previous;
    for (const node of nodes) {
      const result = await this.runNode(node, { ...scope, previous });
      if (!result.skipped) previous = result.output;
    }
    return previous;
  }

  /**
   * The node boundary: a settled node's output is reused; any other node executes unless the
   * execution was stopped (a pause stops here, before the node starts).
   */
  private async runNode(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    await sharedSlice.yield();
    this.deps.signal.throwIfAborted();
    const done = this.deps.ledger.settled(node.id, scope.iterationPath);
    if (!done) {
      this.deps.boundary?.throwIfAborted();
      if (this.targetReached) throw new TargetReached(); // a sibling branch reached the target: start nothing more
    }
    const result = done ? { output: done.outputSnapshot ?? null, skipped: done.status === 'skipped' } : await this.execute(node, scope);
    setOwn(this.outputs, node.name, result.output);
    const target = this.deps.ledger.run.stopAfter;
    if (!done && target && target.nodeId === node.id && target.iterationPath === scope.iterationPath) {
      this.targetReached = true;
      this.targetOutput = result.output;
      throw new TargetReached();
    }
    return result;
  }

  /** Executes a node that is not settled, in its node span (tracing.ts). */
  private execute(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    const { ledger } = this.deps;
    return inNodeSpan(
      node,
      scope.iterationPath,
      () => ledger.existing(node.id, scope.iterationPath)?.id,
      (error) => error instanceof NodeFailedError,
      () => EXECUTORS[node.nodeType](this.context, node, scope),
    );
  }

  private variables(scope: Scope, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      input: this.input,
      previous_step_content: scope.previous ?? null,
      // The live map, not a copy (a copy per node made long chains quadratic): CEL only reads it,
      // converting what an expression touches.
      previous_step_outputs: this.outputs,
      additional_data: { triggerSource: this.deps.ledger.run.triggerSource },
      session_state: {},
      loop_state: scope.loopState,
      user_input: null,
      ...extra,
    };
  }
}
