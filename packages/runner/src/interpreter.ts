/**
 * The tree interpreter (DESIGN.md "Execution model: memoized re-traversal").
 *
 * It walks a run's definition snapshot from the top. A node whose node run is already settled
 * (completed or skipped) is not executed again: its stored output is reused. Everything else runs
 * and is recorded. Continuing a run after a crash, and later after a human decision, a resume, a
 * retry or a rerun, is the same walk over more history.
 *
 * Semantics (what users see, also documented in the README):
 * - Sequences (root nodes, a loop body, a condition branch, a router choice) run in order; each
 *   step sees the previous one's output as `previous_step_content`.
 * - step: arguments = `config` with `{"$cel": ...}` expressions evaluated; executor call with
 *   retries per `stepConfig`; `a2aPool` entries are tried in order within an attempt (failover).
 *   Output: the executor's result.
 * - parallel: children run concurrently (at most `parallelLimit` at once), all from the same
 *   `previous_step_content`. Output: `{ [child name]: child output }`. One failed child fails the
 *   node after every sibling has settled.
 * - loop: children run per iteration (iteration path `i`, nested loops `i/j`); `endConditionCel`
 *   is evaluated after each iteration with `loop_state`; stops when true or at `maxIterations`.
 *   Output: the list of iteration outputs (each the iteration's last step output).
 * - condition: `conditionCel` must be a bool: true runs `trueSteps`, false runs `falseSteps`.
 *   router: `conditionCel` must be the name of one of its choices, whose steps run.
 *   Output: the branch's last output (the incoming content when the branch is empty). The
 *   decision is recorded in the node run's input snapshot.
 */
import type { NodeRunRecord, StepConfig, WorkflowNode } from '@switchyard/domain';
import { STEP_CONFIG_DEFAULTS } from '@switchyard/domain';
import { backoffDelayMs } from './backoff.ts';
import { CelEvaluationError, type CelEngine, resolveArguments } from './cel/index.ts';
import type { Clock } from './clock.ts';
import { settleWithConcurrency } from './concurrency.ts';
import { ExecutorError, isRetryable, type ExecutorRegistry } from './executors/types.ts';
import type { RunLedger } from './ledger.ts';

/** A node failed for good: the run fails with `Node '<name>' failed: <message>`. */
export class NodeFailedError extends Error {
  override readonly name = 'NodeFailedError';
  constructor(
    readonly nodeId: string,
    readonly nodeName: string,
    readonly reason: string,
  ) {
    super(`Node '${nodeName}' failed: ${reason}`);
  }
}

/** What the interpreter needs; everything with side effects is injected. */
export interface InterpreterDeps {
  ledger: RunLedger;
  executors: ExecutorRegistry;
  cel: CelEngine;
  clock: Clock;
  /** Aborts in-flight executor calls and backoff waits (cancel, shutdown, lost lease). */
  signal: AbortSignal;
  /** Max children of one parallel node in flight at once (>= 1). */
  parallelLimit: number;
  /** Source of jitter for retry backoff, [0, 1). */
  random?: () => number;
}

/** Loop state visible to expressions as `loop_state` (CEL reserves the word `loop`). */
interface LoopState {
  iteration: number;
  maxIterations: number;
  outputs: unknown[];
}

/** Where in the run a node executes. */
interface Scope {
  previous: unknown;
  iterationPath: string;
  loopState: LoopState | null;
}

/** Result of one node: its output and whether it counts as content for the next step. */
interface NodeResult {
  output: unknown;
  skipped: boolean;
}

/** Runs (or re-traverses) one run's tree. One instance per traversal. */
export class Interpreter {
  /** `previous_step_outputs`: node name -> output of every node finished so far. */
  private readonly outputs: Record<string, unknown> = {};
  private readonly input: Record<string, unknown>;

  constructor(private readonly deps: InterpreterDeps) {
    this.input = deps.ledger.run.initialInput;
  }

  /**
   * Walks the whole tree. Resolves with the final output (the last root node's output); rejects
   * with NodeFailedError when a node fails, or with the abort reason when the signal fires.
   */
  async run(): Promise<unknown> {
    return this.runSequence(this.deps.ledger.run.definitionSnapshot.nodes, { previous: this.input, iterationPath: '', loopState: null });
  }

  private async runSequence(nodes: readonly WorkflowNode[], scope: Scope): Promise<unknown> {
    let previous = scope.previous;
    for (const node of nodes) {
      const result = await this.runNode(node, { ...scope, previous });
      if (!result.skipped) previous = result.output;
    }
    return previous;
  }

  private async runNode(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    this.deps.signal.throwIfAborted();
    const done = this.deps.ledger.settled(node.id, scope.iterationPath);
    const result = done ? reused(done) : await this.execute(node, scope);
    this.outputs[node.name] = result.output;
    return result;
  }

  private execute(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    switch (node.nodeType) {
      case 'step':
        return this.runStep(node, scope);
      case 'parallel':
        return this.runContainer(node, scope, null, () => this.runParallel(node, scope));
      case 'loop':
        return this.runContainer(node, scope, null, () => this.runLoop(node, scope));
      case 'condition':
      case 'router':
        return this.runBranching(node, scope);
    }
  }

  private variables(scope: Scope, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      input: this.input,
      previous_step_content: scope.previous ?? null,
      previous_step_outputs: { ...this.outputs },
      additional_data: { triggerSource: this.deps.ledger.run.triggerSource },
      session_state: {},
      loop_state: scope.loopState,
      user_input: null,
      ...extra,
    };
  }

  // ---- step -------------------------------------------------------------------------------

  private async runStep(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    const { ledger } = this.deps;
    const policy: StepConfig = node.stepConfig ?? STEP_CONFIG_DEFAULTS;
    let args: Record<string, unknown>;
    try {
      args = resolveArguments(node.config as Record<string, unknown>, this.variables(scope), this.deps.cel);
    } catch (error) {
      const nodeRun = await ledger.start(node, scope.iterationPath, null);
      return this.giveUp(node, nodeRun, policy, messageOf(error));
    }
    const executorKeys = node.executorKey ? [node.executorKey] : node.a2aPool;
    for (;;) {
      const nodeRun = await ledger.start(node, scope.iterationPath, args);
      const attempts = nodeRun.attempt;
      try {
        const output = await this.invokeWithFailover(executorKeys, { args, input: scope.previous, attempt: nodeRun.attempt, node });
        await ledger.end(nodeRun, { status: 'completed', outputSnapshot: output });
        return { output, skipped: false };
      } catch (error) {
        this.deps.signal.throwIfAborted();
        const message = messageOf(error);
        if (!isRetryable(error) || attempts > policy.maxRetries) return this.giveUp(node, nodeRun, policy, message);
        await ledger.end(nodeRun, { status: 'failed', error: message });
        const delayMs = backoffDelayMs(attempts, policy.backoffBaseSeconds, policy.backoffMaxSeconds, this.deps.random);
        await ledger.event('node.retrying', { nodeId: node.id, nodeName: node.name, iterationPath: scope.iterationPath, attempt: attempts, delayMs, error: message });
        await this.deps.clock.sleep(delayMs, this.deps.signal);
      }
    }
  }

  /** Final failure of a step: `onError: skip` skips it, anything else fails the node. */
  private async giveUp(node: WorkflowNode, nodeRun: NodeRunRecord, policy: StepConfig, message: string): Promise<NodeResult> {
    if (policy.onError === 'skip') {
      await this.deps.ledger.end(nodeRun, { status: 'skipped', error: message });
      return { output: null, skipped: true };
    }
    await this.deps.ledger.end(nodeRun, { status: 'failed', error: message });
    throw new NodeFailedError(node.id, node.name, message);
  }

  /** One attempt: tries each executor key in order, returning the first success. */
  private async invokeWithFailover(keys: readonly string[], call: { args: Record<string, unknown>; input: unknown; attempt: number; node: WorkflowNode }): Promise<unknown> {
    const failures: Array<{ key: string; error: unknown }> = [];
    for (const key of keys) {
      try {
        return await this.deps.executors.get(key).invoke({
          arguments: call.args,
          input: call.input,
          attempt: call.attempt,
          signal: this.deps.signal,
          context: { runId: this.deps.ledger.run.id, nodeId: call.node.id, nodeName: call.node.name },
        });
      } catch (error) {
        this.deps.signal.throwIfAborted();
        failures.push({ key, error });
      }
    }
    if (failures.length === 1) throw failures[0]!.error;
    throw new ExecutorError(`every agent of the pool failed: ${failures.map((f) => `${f.key}: ${messageOf(f.error)}`).join('; ')}`, {
      retryable: failures.some((f) => isRetryable(f.error)),
    });
  }

  // ---- containers -------------------------------------------------------------------------

  /** Records a container node run around `body`; a failure inside fails the container too. */
  private async runContainer(node: WorkflowNode, scope: Scope, inputSnapshot: unknown, body: () => Promise<unknown>): Promise<NodeResult> {
    const nodeRun = await this.deps.ledger.start(node, scope.iterationPath, inputSnapshot);
    try {
      const output = await body();
      await this.deps.ledger.end(nodeRun, { status: 'completed', outputSnapshot: output });
      return { output, skipped: false };
    } catch (error) {
      this.deps.signal.throwIfAborted();
      await this.deps.ledger.end(nodeRun, { status: 'failed', error: reasonOf(node, error) });
      throw error instanceof NodeFailedError ? error : new NodeFailedError(node.id, node.name, messageOf(error));
    }
  }

  private async runParallel(node: WorkflowNode, scope: Scope): Promise<Record<string, unknown>> {
    const settled = await settleWithConcurrency(node.children, this.deps.parallelLimit, (child) => this.runNode(child, scope));
    this.deps.signal.throwIfAborted();
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure) throw failure.reason;
    const output: Record<string, unknown> = {};
    node.children.forEach((child, i) => {
      output[child.name] = (settled[i] as PromiseFulfilledResult<NodeResult>).value.output;
    });
    return output;
  }

  private async runLoop(node: WorkflowNode, scope: Scope): Promise<unknown[]> {
    const { maxIterations, endConditionCel } = node.loopConfig!;
    const outputs: unknown[] = [];
    let previous = scope.previous;
    for (let iteration = 1; iteration <= maxIterations; iteration++) {
      const loopState: LoopState = { iteration, maxIterations, outputs: [...outputs] };
      const iterationPath = scope.iterationPath ? `${scope.iterationPath}/${iteration}` : String(iteration);
      previous = await this.runSequence(node.children, { previous, iterationPath, loopState });
      outputs.push(previous);
      if (endConditionCel) {
        const vars = this.variables({ ...scope, previous }, { loop_state: { iteration, maxIterations, outputs: [...outputs] } });
        if (this.evaluate(node, 'endConditionCel', () => this.deps.cel.evaluateBool(endConditionCel, vars))) break;
      }
    }
    return outputs;
  }

  private async runBranching(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    const expression = node.conditionCel!;
    if (node.nodeType === 'condition') {
      const result = await this.decide(node, scope, () => this.deps.cel.evaluateBool(expression, this.variables(scope)));
      const branch = result ? 'trueSteps' : 'falseSteps';
      return this.runContainer(node, scope, { conditionCel: expression, result, branch }, () => this.runSequence(node[branch], scope));
    }
    const names = node.choices.map((c) => c.name);
    const selected = await this.decide(node, scope, () => this.deps.cel.evaluateString(expression, this.variables(scope, { step_choices: names })));
    const choice = node.choices.find((c) => c.name === selected);
    return this.runContainer(node, scope, { conditionCel: expression, selected }, async () => {
      if (!choice) throw new NodeFailedError(node.id, node.name, `router selected '${selected}', which is not one of its choices: ${names.join(', ')}`);
      return this.runSequence(choice.steps, scope);
    });
  }

  /** Evaluates a branching decision; when it cannot be evaluated, records the node as failed. */
  private async decide<T>(node: WorkflowNode, scope: Scope, evaluate: () => T): Promise<T> {
    try {
      return this.evaluate(node, 'conditionCel', evaluate);
    } catch (error) {
      const nodeRun = await this.deps.ledger.start(node, scope.iterationPath, { conditionCel: node.conditionCel });
      await this.deps.ledger.end(nodeRun, { status: 'failed', error: reasonOf(node, error) });
      throw error;
    }
  }

  /** Evaluates one of the node's expressions; an evaluation error fails the node (recorded). */
  private evaluate<T>(node: WorkflowNode, field: string, evaluate: () => T): T {
    try {
      return evaluate();
    } catch (error) {
      if (error instanceof CelEvaluationError) throw new NodeFailedError(node.id, node.name, `${field}: ${error.message}`);
      throw error;
    }
  }
}

function reused(nodeRun: NodeRunRecord): NodeResult {
  return { output: nodeRun.outputSnapshot ?? null, skipped: nodeRun.status === 'skipped' };
}

/** The error text to record on `node`'s own node run: the bare reason when the node itself failed. */
function reasonOf(node: WorkflowNode, error: unknown): string {
  return error instanceof NodeFailedError && error.nodeId === node.id ? error.reason : messageOf(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
