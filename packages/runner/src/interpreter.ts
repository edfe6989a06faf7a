/**
 * The tree interpreter (DESIGN.md "Execution model: memoized re-traversal").
 *
 * It walks a run's definition snapshot from the top. A node whose node run is already settled
 * (completed or skipped) is not executed again: its stored output is reused. A HITL gate whose
 * requirement is already decided is not asked again: its decision is reused. Everything else
 * runs and is recorded. Continuing a run after a crash, a human decision, a resume, a retry or a
 * rerun is the same walk over more history.
 *
 * Semantics (what users see, also documented in the README):
 * - Sequences (root nodes, a loop body, a condition branch, a router choice) run in order; each
 *   step sees the previous one's output as `previous_step_content`.
 * - step: arguments = `config` with `{"$cel": ...}` expressions evaluated; executor call with
 *   retries per `stepConfig` (step-runner.ts). Output: the executor's result.
 * - parallel: children run concurrently (at most `parallelLimit` at once), all from the same
 *   `previous_step_content`. Output: `{ [child name]: child output }`. One failed child fails the
 *   node after every sibling has settled; a child waiting at a gate holds the node until decided.
 * - loop: children run per iteration (iteration path `i`, nested loops `i/j`, an iteration
 *   re-run after a rejected review `iR<n>`); `endConditionCel` is evaluated after each iteration
 *   with `loop_state`; stops when true or at `maxIterations`. Output: the list of iteration outputs.
 * - condition: `conditionCel` must be a bool: true runs `trueSteps`, false runs `falseSteps`.
 *   router: `conditionCel` must be the name of one of its choices, whose steps run; a human may
 *   pick one or several choices instead (route selection). Output: the branch's last output. The
 *   decision is recorded in the node run's input snapshot.
 * - HITL (humanReview): gates before a step/loop (confirmation, user input), on a condition or
 *   router decision, after a step/router (output review, `edit` replaces the output downstream)
 *   and after each loop iteration (iteration review). Rejections follow `onReject`.
 */
import type { RequirementRecord, WorkflowNode } from '@switchyard/domain';
import { gateKeyOf, type GateRequest } from '@switchyard/domain';
import { CelEvaluationError, type CelEngine, resolveArguments } from './cel/index.ts';
import type { Clock } from './clock.ts';
import { sharedSlice } from './event-loop-slice.ts';
import { checkOutputSize } from './output-limit.ts';
import { settleWithConcurrency } from './concurrency.ts';
import type { ExecutorRegistry } from './executors/types.ts';
import { GateBlocked, RunCancelled, actionOf, gateOutcomeText, passGate, type GateAction } from './gates.ts';
import type { RunLedger } from './ledger.ts';
import { NodeFailedError, StepRunner, messageOf, type NodeResult } from './step-runner.ts';
import { ExecutionStopped } from './stop-reason.ts';

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
}

/** Unwinds the traversal once a node rerun's target has executed (see {@link Interpreter.run}). */
class TargetReached extends Error {
  override readonly name = 'TargetReached';
  constructor() {
    super('the node rerun reached its target');
  }
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

type GateFlags = Partial<Pick<GateRequest, 'requiresConfirmation' | 'requiresUserInput' | 'requiresOutputReview' | 'requiresRouteSelection' | 'stepOutput' | 'iteration'>>;

/** Runs (or re-traverses) one run's tree. One instance per traversal. */
export class Interpreter {
  /** `previous_step_outputs`: node name -> output of every node finished so far. */
  private readonly outputs: Record<string, unknown> = {};
  private readonly input: Record<string, unknown>;
  private readonly steps: StepRunner;

  constructor(private readonly deps: InterpreterDeps) {
    this.input = deps.ledger.run.initialInput;
    this.steps = new StepRunner(deps);
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

  private execute(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    switch (node.nodeType) {
      case 'step':
        return this.runStep(node, scope);
      case 'parallel':
        return this.runContainer(node, scope, null, async () => ({ output: await this.runParallel(node, scope), skipped: false }));
      case 'loop':
        return this.runLoop(node, scope);
      case 'condition':
        return this.runCondition(node, scope);
      case 'router':
        return this.runRouter(node, scope);
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
    const review = node.humanReview;
    const path = scope.iterationPath;
    let feedback: string | null = null;
    for (let round = 0; ; round++) {
      let userInput: Record<string, unknown> | null = null;
      if (review && (review.requiresConfirmation || review.requiresUserInput)) {
        const decided = await this.gate(node, path, 'pre', round, { requiresConfirmation: review.requiresConfirmation, requiresUserInput: review.requiresUserInput });
        const action = actionOf(decided);
        if (action !== 'proceed') {
          const outcome = await this.rejected(node, path, decided, action, round);
          if (outcome === 'retry') {
            feedback = decided.rejectionFeedback;
            continue;
          }
          return outcome;
        }
        userInput = decided.userInput;
      }

      const reviewed = review?.requiresOutputReview === true;
      const earlier = reviewed ? this.reviewRaised(node, path, round) : undefined;
      const held = this.deps.ledger.existing(node.id, path);
      let output: unknown;
      if (earlier) {
        output = earlier.stepOutput;
      } else if (reviewed && held?.status === 'awaiting_approval' && held.attempt > 0 && held.outputSnapshot !== null) {
        output = held.outputSnapshot; // executed, but the process died before its review was raised
      } else {
        const vars = this.variables(scope, {
          user_input: userInput,
          additional_data: { triggerSource: this.deps.ledger.run.triggerSource, rejectionFeedback: feedback, retryCount: round },
        });
        let args: Record<string, unknown>;
        await sharedSlice.yield(); // expressions may take a while: let others in first if due
        try {
          args = resolveArguments(node.config as Record<string, unknown>, vars, this.deps.cel);
        } catch (error) {
          return this.steps.failBeforeExecution(node, path, messageOf(error));
        }
        const result = await this.steps.execute({ node, iterationPath: path, arguments: args, input: scope.previous, holdForReview: reviewed });
        if (result.skipped || !reviewed) return result;
        output = result.output;
      }

      const reviewedResult = await this.reviewOutput(node, path, round, output);
      if (reviewedResult !== 'retry') return reviewedResult;
      feedback = this.reviewRaised(node, path, round)?.rejectionFeedback ?? null;
    }
  }

  /** The output review raised in this round, if the node already executed in it (its output is in `stepOutput`). */
  private reviewRaised(node: WorkflowNode, path: string, round: number): RequirementRecord | undefined {
    return this.deps.ledger.requirement(gateKeyOf(node.id, path, 'post', round));
  }

  /**
   * Output review after a step or router executed (its node run holds `awaiting_approval` with the
   * output): confirm keeps the output, edit replaces it downstream (the node run keeps both),
   * anything else follows the rejection policy.
   */
  private async reviewOutput(node: WorkflowNode, path: string, round: number, output: unknown): Promise<NodeResult | 'retry'> {
    const decided = await this.gate(node, path, 'post', round, { requiresOutputReview: true, stepOutput: output }, async () => {});
    const action = actionOf(decided);
    if (action !== 'proceed') {
      const outcome = await this.rejected(node, path, decided, action, round);
      // The rejected output's attempt ends failed; the next round starts a new attempt.
      if (outcome === 'retry') await this.settleNode(node, path, 'failed', `output rejected: ${gateOutcomeText(decided)}`);
      return outcome;
    }
    const edited = decided.resolution === 'edit';
    const final = edited ? decided.editedOutput : output;
    await this.deps.ledger.end(this.nodeRunOf(node, path), { status: 'completed', outputSnapshot: final, originalOutputSnapshot: edited ? output : undefined });
    return { output: final, skipped: false };
  }

  // ---- HITL -------------------------------------------------------------------------------

  /**
   * Passes the gate (returns its decided requirement) or stops this branch with GateBlocked.
   * By default a blocked gate marks the node run `awaiting_approval`.
   */
  private gate(node: WorkflowNode, path: string, phase: GateRequest['phase'], round: number, flags: GateFlags, onBlocked?: () => Promise<void>): Promise<RequirementRecord> {
    const request = {
      node,
      iterationPath: path,
      phase,
      round,
      requiresConfirmation: false,
      requiresUserInput: false,
      requiresOutputReview: false,
      requiresRouteSelection: false,
      ...flags,
    };
    return passGate(this.deps.ledger, this.deps.clock, request, onBlocked ?? (() => this.deps.ledger.awaiting(node, path)));
  }

  /**
   * Applies a rejection (or a timeout) that does not proceed: skip settles the node as skipped,
   * cancel stops the run, retry asks for another round unless `maxRetries` rounds were spent
   * (then the node fails).
   */
  private async rejected(node: WorkflowNode, path: string, decided: RequirementRecord, action: Exclude<GateAction, 'proceed'>, round: number): Promise<NodeResult | 'retry'> {
    const reason = gateOutcomeText(decided);
    switch (action) {
      case 'retry':
        if (retryAllowed(decided, round)) return 'retry';
        await this.settleNode(node, path, 'failed', `${reason} (after ${round + 1} rounds)`);
        throw new NodeFailedError(node.id, node.name, `${reason}; no retries left (maxRetries ${decided.maxRetries ?? 0})`);
      case 'cancel':
        await this.settleNode(node, path, 'cancelled', reason);
        throw new RunCancelled(`Run cancelled: ${reason}`);
      case 'skip':
      case 'else_branch':
        await this.settleNode(node, path, 'skipped', reason);
        return { output: null, skipped: true };
    }
  }

  /** Ends a node run that a gate stopped (it exists: every gate marks or starts it first). */
  private async settleNode(node: WorkflowNode, path: string, status: 'failed' | 'cancelled' | 'skipped', error: string): Promise<void> {
    await this.deps.ledger.end(this.nodeRunOf(node, path), { status, error });
  }

  private nodeRunOf(node: WorkflowNode, path: string) {
    const nodeRun = this.deps.ledger.existing(node.id, path);
    if (!nodeRun) throw new Error(`no node run for ${node.id}@${path}`);
    return nodeRun;
  }

  // ---- containers -------------------------------------------------------------------------

  /**
   * Records a container node run around `body`. A failure inside fails the container too; a
   * branch waiting at a gate leaves it running until the next traversal. `holdForReview` leaves
   * it `awaiting_approval` with its output (an output review follows).
   */
  private async runContainer(node: WorkflowNode, scope: Scope, inputSnapshot: unknown, body: () => Promise<NodeResult>, holdForReview = false): Promise<NodeResult> {
    // A container left running (or held at an iteration review) by an earlier traversal resumes
    // its node run; one held for an output review is entered again only for a new round.
    const nodeRun = await this.deps.ledger.enter(node, scope.iterationPath, inputSnapshot, holdForReview ? ['running'] : ['running', 'awaiting_approval']);
    try {
      const result = await body();
      const { bytes: outputBytes, problem } = checkOutputSize(result.output, this.steps.maxOutputBytes);
      if (problem !== null) throw new NodeFailedError(node.id, node.name, problem);
      const status = holdForReview && !result.skipped ? 'awaiting_approval' : result.skipped ? 'skipped' : 'completed';
      await this.deps.ledger.end(nodeRun, { status, outputSnapshot: result.output, outputBytes });
      return result;
    } catch (error) {
      this.deps.signal.throwIfAborted();
      // A branch waiting at a gate, or stopped by a pause: the container stays open for the next traversal.
      if (error instanceof GateBlocked || error instanceof ExecutionStopped || error instanceof TargetReached) throw error;
      if (error instanceof RunCancelled) {
        await this.deps.ledger.end(nodeRun, { status: 'cancelled', error: error.message });
        throw error;
      }
      await this.deps.ledger.end(nodeRun, { status: 'failed', error: reasonOf(node, error) });
      throw error instanceof NodeFailedError ? error : new NodeFailedError(node.id, node.name, messageOf(error));
    }
  }

  private async runParallel(node: WorkflowNode, scope: Scope): Promise<Record<string, unknown>> {
    const settled = await settleWithConcurrency(node.children, this.deps.parallelLimit, (child) => this.runNode(child, scope));
    this.deps.signal.throwIfAborted();
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

  private async runLoop(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    const review = node.humanReview;
    if (review?.requiresConfirmation) {
      for (let round = 0; ; round++) {
        const decided = await this.gate(node, scope.iterationPath, 'pre', round, { requiresConfirmation: true });
        const action = actionOf(decided);
        if (action === 'proceed') break;
        const outcome = await this.rejected(node, scope.iterationPath, decided, action, round);
        if (outcome !== 'retry') return outcome;
      }
    }
    return this.runContainer(node, scope, null, async () => ({ output: await this.iterate(node, scope), skipped: false }));
  }

  /** The loop body, iteration by iteration, with iteration reviews when configured. */
  private async iterate(node: WorkflowNode, scope: Scope): Promise<unknown[]> {
    const { maxIterations, endConditionCel } = node.loopConfig!;
    const reviewed = node.humanReview?.requiresIterationReview === true;
    const outputs: unknown[] = [];
    let previous = scope.previous;
    for (let iteration = 1; iteration <= maxIterations; iteration++) {
      const loopState: LoopState = { iteration, maxIterations, outputs: [...outputs] };
      let output: unknown;
      for (let round = 0; ; round++) {
        const segment = round === 0 ? String(iteration) : `${iteration}r${round}`;
        const iterationPath = scope.iterationPath ? `${scope.iterationPath}/${segment}` : segment;
        output = await this.runSequence(node.children, { previous, iterationPath, loopState });
        if (!reviewed) break;
        const decided = await this.gate(node, scope.iterationPath, 'iteration', round, { requiresConfirmation: true, stepOutput: output, iteration });
        const action = actionOf(decided);
        if (action === 'proceed') break;
        if (action === 'cancel') throw new RunCancelled(`Run cancelled: ${gateOutcomeText(decided)} (iteration ${iteration})`);
        if (action === 'retry' && retryAllowed(decided, round)) continue;
        if (action === 'retry') throw new NodeFailedError(node.id, node.name, `${gateOutcomeText(decided)} (iteration ${iteration}); no retries left`);
        return outputs; // skip: the rejected iteration is dropped and the loop ends
      }
      outputs.push(output);
      previous = output;
      if (endConditionCel) {
        const vars = this.variables({ ...scope, previous }, { loop_state: { iteration, maxIterations, outputs: [...outputs] } });
        if (this.evaluate(node, 'endConditionCel', () => this.deps.cel.evaluateBool(endConditionCel, vars))) break;
      }
    }
    return outputs;
  }

  private async runCondition(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    const expression = node.conditionCel!;
    for (let round = 0; ; round++) {
      const result = await this.decide(node, scope, () => this.deps.cel.evaluateBool(expression, this.variables(scope)));
      let branch: 'trueSteps' | 'falseSteps' = result ? 'trueSteps' : 'falseSteps';
      if (node.humanReview?.requiresConfirmation) {
        const decided = await this.gate(node, scope.iterationPath, 'decision', round, { requiresConfirmation: true, stepOutput: { result, branch } });
        const action = actionOf(decided);
        if (action === 'else_branch') branch = result ? 'falseSteps' : 'trueSteps';
        else if (action !== 'proceed') {
          const outcome = await this.rejected(node, scope.iterationPath, decided, action, round);
          if (outcome === 'retry') continue;
          return outcome;
        }
      }
      const chosen = branch;
      return this.runContainer(node, scope, { conditionCel: expression, result, branch: chosen }, async () => ({ output: await this.runSequence(node[chosen], scope), skipped: false }));
    }
  }

  private async runRouter(node: WorkflowNode, scope: Scope): Promise<NodeResult> {
    const review = node.humanReview;
    const names = node.choices.map((c) => c.name);
    const path = scope.iterationPath;
    const expression = node.conditionCel;
    for (let round = 0; ; round++) {
      const reviewed = review?.requiresOutputReview === true;
      const earlier = reviewed ? this.reviewRaised(node, path, round) : undefined;
      let output: unknown;
      if (earlier) {
        output = earlier.stepOutput;
      } else {
        const suggested = expression ? await this.decide(node, scope, () => this.deps.cel.evaluateString(expression, this.variables(scope, { step_choices: names }))) : null;
        let selected = suggested === null ? null : [suggested];
        if (review && (review.requiresConfirmation || review.requiresUserInput)) {
          const decided = await this.gate(node, path, 'decision', round, {
            requiresConfirmation: review.requiresConfirmation,
            requiresUserInput: review.requiresUserInput,
            requiresRouteSelection: review.requiresUserInput,
            stepOutput: suggested === null ? null : { suggestedChoice: suggested },
          });
          const action = actionOf(decided);
          if (action !== 'proceed') {
            const outcome = await this.rejected(node, path, decided, action, round);
            if (outcome === 'retry') continue;
            return outcome;
          }
          selected = decided.selectedChoices ?? selected;
        }
        const branchPath = round === 0 ? path : `${path ? `${path}/` : ''}r${round}`;
        const result = await this.runContainer(node, scope, { conditionCel: expression, selected }, () => this.runChoices(node, selected, { ...scope, iterationPath: branchPath }), reviewed);
        if (!reviewed) return result;
        output = result.output;
      }
      const reviewedResult = await this.reviewOutput(node, path, round, output);
      if (reviewedResult !== 'retry') return reviewedResult;
    }
  }

  /** Runs the selected choices' steps in definition order. */
  private async runChoices(node: WorkflowNode, selected: readonly string[] | null, scope: Scope): Promise<NodeResult> {
    const names = node.choices.map((c) => c.name);
    if (!selected) throw new NodeFailedError(node.id, node.name, 'no route was selected (the router has no conditionCel and the decision named no choice)');
    const unknown = selected.filter((name) => !names.includes(name));
    if (unknown.length > 0) throw new NodeFailedError(node.id, node.name, `router selected '${unknown.join("', '")}', which is not one of its choices: ${names.join(', ')}`);
    let previous = scope.previous;
    for (const choice of node.choices) {
      if (selected.includes(choice.name)) previous = await this.runSequence(choice.steps, { ...scope, previous });
    }
    return { output: previous, skipped: false };
  }

  /** Evaluates a branching decision; when it cannot be evaluated, records the node as failed. */
  private async decide<T>(node: WorkflowNode, scope: Scope, evaluate: () => T): Promise<T> {
    await sharedSlice.yield();
    try {
      return this.evaluate(node, 'conditionCel', evaluate);
    } catch (error) {
      const nodeRun = await this.deps.ledger.start(node, scope.iterationPath, { conditionCel: node.conditionCel });
      await this.deps.ledger.end(nodeRun, { status: 'failed', error: reasonOf(node, error) });
      throw error;
    }
  }

  /** Evaluates one of the node's expressions; an evaluation error fails the node. */
  private evaluate<T>(node: WorkflowNode, field: string, evaluate: () => T): T {
    try {
      return evaluate();
    } catch (error) {
      if (error instanceof CelEvaluationError) throw new NodeFailedError(node.id, node.name, `${field}: ${error.message}`);
      throw error;
    }
  }
}

/** True when a rejection in `round` may be retried: fewer than `maxRetries` rounds were retried so far. */
function retryAllowed(decided: RequirementRecord, round: number): boolean {
  return round + 1 <= (decided.maxRetries ?? 0);
}

/** Sets an own, enumerable property, also for names such as `__proto__` (node names are free text). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The error text to record on `node`'s own node run: the bare reason when the node itself failed. */
function reasonOf(node: WorkflowNode, error: unknown): string {
  return error instanceof NodeFailedError && error.nodeId === node.id ? error.reason : messageOf(error);
}
