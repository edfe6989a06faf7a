/**
 * One step's execution with retries (DESIGN.md "Retries"): attempts on one node run, exponential
 * backoff with jitter between them, `a2aPool` failover inside an attempt, and `stepConfig.onError`
 * after the last attempt.
 */
import type { NodeRunRecord, StepConfig, WorkflowNode } from '@switchyard/domain';
import { STEP_CONFIG_DEFAULTS, boundedText, jsonByteLength } from '@switchyard/domain';
import { backoffDelayMs } from './backoff.ts';
import type { Clock } from './clock.ts';
import { ExecutorError, isRetryable, type ExecutorRegistry } from './executors/types.ts';
import type { RunLedger } from './ledger.ts';
import { checkOutputSize, DEFAULT_MAX_OUTPUT_BYTES } from './output-limit.ts';
import { isDocumentTooLarge } from '@switchyard/store';

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

/** Result of one node: its output, and whether it was skipped (then it is no content for the next step). */
export interface NodeResult {
  output: unknown;
  skipped: boolean;
}

export interface StepRunnerDeps {
  ledger: RunLedger;
  executors: ExecutorRegistry;
  clock: Clock;
  /** Aborts executor calls (cancel, timeout, shutdown, lost lease). */
  signal: AbortSignal;
  /** Aborts at any stop, a pause too; ends retry backoff waits (default: `signal`). */
  boundary?: AbortSignal;
  random?: () => number;
  /**
   * Largest executor output (bytes of JSON) a step may produce; a larger one fails the attempt
   * without retry. Arguments larger than this are passed to the executor but not kept as the
   * input snapshot. Default {@link DEFAULT_MAX_OUTPUT_BYTES}.
   */
  maxOutputBytes?: number;
}


/** One execution of a step: its resolved arguments and where it runs. */
export interface StepExecution {
  node: WorkflowNode;
  iterationPath: string;
  arguments: Record<string, unknown>;
  /** The step input (previous content). */
  input: unknown;
  /** Leave the node run `awaiting_approval` with its output after success (an output review follows). */
  holdForReview: boolean;
}

export class StepRunner {
  readonly maxOutputBytes: number;

  constructor(private readonly deps: StepRunnerDeps) {
    this.maxOutputBytes = deps.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  }

  /**
   * Runs attempts until one succeeds or the policy gives up. Resolves with the output (or a skip
   * under `onError: skip`); rejects with NodeFailedError, or with the abort reason.
   */
  async execute(step: StepExecution): Promise<NodeResult> {
    const { ledger } = this.deps;
    const { node, iterationPath } = step;
    const policy = policyOf(node);
    const keys = node.executorKey ? [node.executorKey] : node.a2aPool;
    // The retry budget counts the attempts of this execution only: attempts of earlier review
    // rounds or of an owner that crashed do not use it up.
    const before = ledger.existing(node.id, iterationPath)?.attempt ?? 0;
    for (;;) {
      const nodeRun = await this.startAttempt(step);
      const tries = nodeRun.attempt - before;
      ledger.assertOwned();
      let output: unknown;
      try {
        output = await this.invokeWithFailover(keys, step, nodeRun.attempt);
      } catch (error) {
        this.deps.signal.throwIfAborted();
        const message = messageOf(error);
        if (!isRetryable(error) || tries > policy.maxRetries) return this.giveUp(node, nodeRun, message);
        await ledger.end(nodeRun, { status: 'failed', error: message });
        const delayMs = backoffDelayMs(tries, policy.backoffBaseSeconds, policy.backoffMaxSeconds, this.deps.random);
        await ledger.event('node.retrying', { nodeId: node.id, nodeName: node.name, iterationPath, attempt: nodeRun.attempt, delayMs, error: message });
        const boundary = this.deps.boundary ?? this.deps.signal;
        await ledger.waitForRetry(node.id, iterationPath, delayMs, () => this.deps.clock.sleep(delayMs, boundary));
        boundary.throwIfAborted();
        continue;
      }
      // Too large to keep and show: the same call would produce it again, so no retry.
      const { bytes: outputBytes, problem } = checkOutputSize(output, this.maxOutputBytes);
      if (problem !== null) return this.giveUp(node, nodeRun, problem);
      // Outside the try: a store error here is no executor failure and must not cause a retry.
      try {
        await ledger.end(nodeRun, { status: step.holdForReview ? 'awaiting_approval' : 'completed', outputSnapshot: output, outputBytes });
      } catch (error) {
        if (!isDocumentTooLarge(error)) throw error;
        // The workflow's own doing (an output MongoDB cannot store): the node fails, no retry.
        return this.giveUp(node, nodeRun, `output too large to store: ${messageOf(error)}`);
      }
      return { output, skipped: false };
    }
  }

  /** Starts an attempt; arguments too large to keep as the input snapshot are recorded as such, not stored. */
  private async startAttempt(step: StepExecution): Promise<NodeRunRecord> {
    const bytes = jsonByteLength(step.arguments);
    if (bytes > this.maxOutputBytes) {
      return this.deps.ledger.start(step.node, step.iterationPath, { argumentsTooLargeToStore: true, bytes, limit: this.maxOutputBytes });
    }
    try {
      return await this.deps.ledger.start(step.node, step.iterationPath, step.arguments, bytes);
    } catch (error) {
      if (!isDocumentTooLarge(error)) throw error;
      return this.deps.ledger.start(step.node, step.iterationPath, { argumentsTooLargeToStore: true });
    }
  }

  /** Records a step that cannot even start (its arguments failed to evaluate) and applies `onError`. */
  async failBeforeExecution(node: WorkflowNode, iterationPath: string, message: string): Promise<NodeResult> {
    const nodeRun = await this.deps.ledger.start(node, iterationPath, null);
    return this.giveUp(node, nodeRun, message);
  }

  /** Final failure: `onError: skip` skips the step, anything else fails the node. */
  private async giveUp(node: WorkflowNode, nodeRun: NodeRunRecord, message: string): Promise<NodeResult> {
    if (policyOf(node).onError === 'skip') {
      await this.deps.ledger.end(nodeRun, { status: 'skipped', error: message });
      return { output: null, skipped: true };
    }
    await this.deps.ledger.end(nodeRun, { status: 'failed', error: message });
    throw new NodeFailedError(node.id, node.name, message);
  }

  /** One attempt: tries each executor key in order, returning the first success. */
  private async invokeWithFailover(keys: readonly string[], step: StepExecution, attempt: number): Promise<unknown> {
    const failures: Array<{ key: string; error: unknown }> = [];
    const { ledger } = this.deps;
    for (const key of keys) {
      try {
        return await this.deps.executors.get(key).invoke({
          arguments: step.arguments,
          input: step.input,
          attempt,
          signal: this.deps.signal,
          context: {
            runId: ledger.run.id,
            nodeId: step.node.id,
            nodeName: step.node.name,
            iterationPath: step.iterationPath,
            identity: { userId: ledger.run.triggeringUserId, username: ledger.run.triggeringUsername, scopes: ledger.run.triggeringScopes },
          },
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
}

function policyOf(node: WorkflowNode): StepConfig {
  return node.stepConfig ?? STEP_CONFIG_DEFAULTS;
}

/** The message of any thrown value, cut to `MAX_ERROR_CHARS` (it is stored on node runs, events and the run). */
export function messageOf(error: unknown): string {
  return boundedText(error instanceof Error ? error.message : String(error));
}
