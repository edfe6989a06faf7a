/**
 * One step's execution with retries (DESIGN.md "Retries"): attempts on one node run, exponential
 * backoff with jitter between them (at least as long as a `Retry-After` the executor reports),
 * `a2aPool` failover inside an attempt, a time limit on every executor call, and
 * `stepConfig.onError` after the last attempt.
 */
import type { NodeRunRecord, PoolAttempt, StepConfig, WorkflowNode } from '@switchyard/domain';
import { STEP_CONFIG_DEFAULTS, boundedText, immutable, jsonByteLength } from '@switchyard/domain';
import { backoffDelayMs } from './backoff.ts';
import type { Clock } from './clock.ts';
import { formatSeconds, linkedAbortController, timeoutReason } from './executors/shared/abort.ts';
import { ExecutorError, isRetryable, type Executor, type ExecutorRegistry } from './executors/types.ts';
import type { RunLedger } from './ledger.ts';
import { checkOutputSize, DEFAULT_MAX_OUTPUT_BYTES } from './output-limit.ts';
import { isDocumentTooLarge } from '@switchyard/store';
import type { DownstreamTokenMinter } from './downstream-token.ts';
import { startAttemptSpan } from './tracing.ts';

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
  /** Mints each executor call's downstream token from the run's identity (none when absent). */
  downstreamTokens?: DownstreamTokenMinter;
  /**
   * Rewrites failure text before it is stored where the API shows it (node run `error`, events,
   * `errorSummary`): see public-text.ts. Default: unchanged.
   */
  publicText?: (text: string) => string;
}


/**
 * Which executor served one attempt, as the node run records it: `executorKey` the key that served
 * (the step's `executorKey` whatever the outcome; the pool member that succeeded, else null), and
 * `poolAttempts` the pool members that failed before (null for a single `executorKey`).
 */
interface ServedBy {
  executorKey: string | null;
  poolAttempts: PoolAttempt[] | null;
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

  /** The message of `error` as the API may show it (bounded, see {@link StepRunnerDeps.publicText}). */
  private publicMessage(error: unknown): string {
    const message = messageOf(error);
    return this.deps.publicText === undefined ? message : this.deps.publicText(message);
  }

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
      const attempt = ledger.nextAttempt(node.id, iterationPath);
      const tries = attempt - before;
      ledger.assertOwned();
      const served = servedBy(node);
      // The attempt's span (tracing.ts): active while the executor calls out, ended before a retry's backoff.
      const span = startAttemptSpan(node.id, node.executorKey ?? 'a2aPool', attempt);
      try {
        // Aborts this attempt's call alone (when its start cannot be recorded).
        const attemptAbort = new AbortController();
        // Immutable from here on: the store, later steps and size checks share it instead of copying it.
        const call = span.run(() => this.invokeWithFailover(keys, step, attempt, served, attemptAbort.signal)).then(immutable);
        // An answer within this turn of the event loop (a builtin, a cached result) is recorded with
        // its start in one write; otherwise the start is recorded now, while the executor works.
        const quick = await answeredWithinTurn(call);
        if (quick?.answered) {
          const recorded = await this.recordAnswered(step, quick.output, served);
          if (recorded) return recorded;
        }
        let nodeRun: NodeRunRecord;
        try {
          nodeRun = await this.startAttempt(step);
        } catch (error) {
          // No call may go on unrecorded: recovery would run the step again beside it.
          attemptAbort.abort(error);
          await call.catch(() => undefined);
          throw error;
        }
        let output: unknown;
        try {
          output = await call;
        } catch (error) {
          this.deps.signal.throwIfAborted();
          const message = this.publicMessage(error);
          if (!isRetryable(error) || tries > policy.maxRetries) return await this.giveUp(node, nodeRun, message, served);
          span.failed(message);
          await ledger.end(nodeRun, { status: 'failed', error: message, ...served });
          span.end(nodeRun.id, served.executorKey);
          // The other side may have said how long to wait (HTTP Retry-After): never retry sooner.
          const backoffMs = backoffDelayMs(tries, policy.backoffBaseSeconds, policy.backoffMaxSeconds, this.deps.random);
          const delayMs = Math.max(backoffMs, retryAfterOf(error) ?? 0);
          await ledger.event('node.retrying', { nodeId: node.id, nodeName: node.name, iterationPath, attempt: nodeRun.attempt, nodeRunId: nodeRun.id, delayMs, error: message });
          const boundary = this.deps.boundary ?? this.deps.signal;
          await ledger.waitForRetry(node.id, iterationPath, delayMs, () => this.deps.clock.sleep(delayMs, boundary));
          boundary.throwIfAborted();
          continue;
        }
        return await this.finish(step, nodeRun, output, served);
      } catch (error) {
        if (error instanceof NodeFailedError) span.failed(error.reason);
        throw error;
      } finally {
        span.end(ledger.existing(node.id, iterationPath)?.id, served.executorKey);
      }
    }
  }

  /**
   * Records an attempt whose executor already answered with `output`, start and end in one write.
   * Resolves with the step's result, or with null when that cannot be (the output is over the
   * limit, or too large to store with the arguments): the caller then records the start alone
   * and {@link finish}es, which fails the step as it should.
   */
  private async recordAnswered(step: StepExecution, output: unknown, served: ServedBy): Promise<NodeResult | null> {
    const { bytes: outputBytes, problem } = checkOutputSize(output, this.maxOutputBytes);
    if (problem !== null) return null;
    const { snapshot, bytes } = this.inputSnapshot(step);
    const end = { status: step.holdForReview ? 'awaiting_approval' : 'completed', outputSnapshot: output, outputBytes, ...served } as const;
    try {
      await this.deps.ledger.startEnded(step.node, step.iterationPath, snapshot, bytes, end);
    } catch (error) {
      if (!isDocumentTooLarge(error)) throw error;
      return null;
    }
    return { output, skipped: false };
  }

  /** Records the successful end of the attempt `nodeRun` with `output`: fails the step instead when the output is too large to keep. */
  private async finish(step: StepExecution, nodeRun: NodeRunRecord, output: unknown, served: ServedBy): Promise<NodeResult> {
    const { node } = step;
    // Too large to keep and show: the same call would produce it again, so no retry.
    const { bytes: outputBytes, problem } = checkOutputSize(output, this.maxOutputBytes);
    if (problem !== null) return this.giveUp(node, nodeRun, problem, served);
    // A store error here is no executor failure and must not cause a retry.
    try {
      await this.deps.ledger.end(nodeRun, { status: step.holdForReview ? 'awaiting_approval' : 'completed', outputSnapshot: output, outputBytes, ...served });
    } catch (error) {
      if (!isDocumentTooLarge(error)) throw error;
      // The workflow's own doing (an output MongoDB cannot store): the node fails, no retry.
      return this.giveUp(node, nodeRun, `output too large to store: ${this.publicMessage(error)}`, served);
    }
    return { output, skipped: false };
  }

  /** The input snapshot of an attempt (its arguments, or a note saying they are too large to keep) and its JSON size when it is the arguments. */
  private inputSnapshot(step: StepExecution): { snapshot: unknown; bytes: number | undefined } {
    const bytes = jsonByteLength(step.arguments);
    if (bytes > this.maxOutputBytes) return { snapshot: { argumentsTooLargeToStore: true, bytes, limit: this.maxOutputBytes }, bytes: undefined };
    return { snapshot: step.arguments, bytes };
  }

  /** Starts an attempt; arguments too large to keep as the input snapshot are recorded as such, not stored. */
  private async startAttempt(step: StepExecution): Promise<NodeRunRecord> {
    const { snapshot, bytes } = this.inputSnapshot(step);
    try {
      return await this.deps.ledger.start(step.node, step.iterationPath, snapshot, bytes);
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

  /** Final failure: `onError: skip` skips the step, anything else fails the node. `served`: who served the attempt, when one ran. */
  private async giveUp(node: WorkflowNode, nodeRun: NodeRunRecord, message: string, served?: ServedBy): Promise<NodeResult> {
    if (policyOf(node).onError === 'skip') {
      await this.deps.ledger.end(nodeRun, { status: 'skipped', error: message, ...served });
      return { output: null, skipped: true };
    }
    await this.deps.ledger.end(nodeRun, { status: 'failed', error: message, ...served });
    throw new NodeFailedError(node.id, node.name, message);
  }

  /**
   * One attempt: tries each executor key in order, returning the first success. Records on
   * `served` the pool member that succeeded and each one that failed before (see {@link ServedBy}).
   * `attemptSignal` aborts this attempt alone (its calls get it besides the run's signal).
   */
  private async invokeWithFailover(keys: readonly string[], step: StepExecution, attempt: number, served: ServedBy, attemptSignal: AbortSignal): Promise<unknown> {
    const failures: Array<{ key: string; error: unknown }> = [];
    for (const key of keys) {
      try {
        const output = await this.invokeOne(key, step, attempt, attemptSignal);
        served.executorKey = key;
        return output;
      } catch (error) {
        this.deps.signal.throwIfAborted();
        attemptSignal.throwIfAborted();
        failures.push({ key, error });
        served.poolAttempts?.push({ executorKey: key, error: this.publicMessage(error) });
      }
    }
    if (failures.length === 1) throw failures[0]!.error;
    const retryable = failures.filter((f) => isRetryable(f.error));
    const retryAfters = retryable.map((f) => retryAfterOf(f.error)).filter((ms) => ms !== undefined);
    throw new ExecutorError(`every agent of the pool failed: ${failures.map((f) => `${f.key}: ${messageOf(f.error)}`).join('; ')}`, {
      retryable: retryable.length > 0,
      retryAfterMs: retryAfters.length > 0 ? Math.max(...retryAfters) : undefined,
    });
  }

  /**
   * One executor call, limited to the step's `stepConfig.timeoutSeconds`, else the executor's own
   * limit (its registry entry's). When the time is up the call's signal aborts (reason: a
   * `TimeoutError`, see `abort.ts`) and the attempt fails at once with a retryable
   * `executor "<key>" timed out after N s`, also when the executor ignores its signal. The limit is
   * a timer on the engine's clock, so tests drive it with a ManualClock.
   */
  private async invokeOne(key: string, step: StepExecution, attempt: number, attemptSignal: AbortSignal): Promise<unknown> {
    const { ledger, clock } = this.deps;
    const executor = this.deps.executors.get(key);
    const timeoutMs = callTimeoutMs(step.node, executor);
    const identity = { userId: ledger.run.triggeringUserId, username: ledger.run.triggeringUsername, scopes: ledger.run.triggeringScopes };
    // Minted per call from the stored identity, so a call after a long HITL pause gets a fresh one.
    // Bound to this executor: its audience (its target's origin by default), its key as `azp`, the scopes its entry declares.
    const binding = executor.token ?? { scopes: [] };
    const downstreamToken = await this.deps.downstreamTokens?.mint(identity, {
      runId: ledger.run.id,
      nodeId: step.node.id,
      executorKey: key,
      ...(binding.audience === undefined ? {} : { audience: binding.audience }),
      scopes: binding.scopes,
    });
    // The call's signal: the run's, the attempt's, and this call's time limit.
    const { controller, unlink } = linkedAbortController([this.deps.signal, attemptSignal]);
    const timeout: CallTimeout = { fired: false };
    const stopTimer = clock.after(timeoutMs, () => {
      timeout.fired = true;
      controller.abort(timeoutReason(timeoutMs));
      timeout.onFire?.();
    });
    try {
      const call = executor.invoke({
        arguments: step.arguments,
        input: step.input,
        attempt,
        signal: controller.signal,
        timeoutMs,
        ...(downstreamToken === undefined ? {} : { downstreamToken }),
        context: { runId: ledger.run.id, nodeId: step.node.id, nodeName: step.node.name, iterationPath: step.iterationPath, identity },
      });
      return await untilTimeout(call, timeout, () => new ExecutorError(`executor "${key}" timed out after ${formatSeconds(timeoutMs)} s`, { retryable: true }));
    } finally {
      stopTimer();
      unlink();
    }
  }
}

/** What a step's node run records of who served an attempt, before it runs: see {@link ServedBy}. */
function servedBy(node: WorkflowNode): ServedBy {
  return node.executorKey ? { executorKey: node.executorKey, poolAttempts: null } : { executorKey: null, poolAttempts: [] };
}

/** The limit of one call of `executor` for `node`, milliseconds: `stepConfig.timeoutSeconds`, else the executor's. */
function callTimeoutMs(node: WorkflowNode, executor: Executor): number {
  // Snapshots taken before the field existed lack it.
  const seconds = node.stepConfig?.timeoutSeconds ?? null;
  return seconds === null ? executor.timeoutMs : Math.round(seconds * 1000);
}

/** One call's time limit: whether it ran out, and what to do when it does (set by {@link untilTimeout}). */
interface CallTimeout {
  fired: boolean;
  onFire?: () => void;
}

/**
 * Settles like `call`, except that once `timeout` fires it rejects with `timedOut()` at once (the
 * executor may still be unwinding, or ignore its signal: its late result is dropped).
 */
function untilTimeout<T>(call: Promise<T>, timeout: CallTimeout, timedOut: () => ExecutorError): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    timeout.onFire = () => reject(timedOut());
    call.then(resolve, (error: unknown) => reject(timeout.fired ? timedOut() : error));
  });
}

/**
 * The outcome of `call` when it settles before the event loop's next turn (it did no I/O, or
 * found its answer at hand), else undefined once that turn came. A rejection is no answer here:
 * the caller records the attempt's start and handles it as any failure.
 */
function answeredWithinTurn<T>(call: Promise<T>): Promise<{ answered: true; output: T } | undefined> {
  return new Promise((resolve) => {
    const turn = setImmediate(() => resolve(undefined));
    call.then(
      (output) => {
        clearImmediate(turn);
        resolve({ answered: true, output });
      },
      () => {
        clearImmediate(turn);
        resolve(undefined);
      },
    );
  });
}

/** The least wait before another attempt the failure asks for (HTTP `Retry-After`), if any. */
function retryAfterOf(error: unknown): number | undefined {
  return error instanceof ExecutorError ? error.retryAfterMs : undefined;
}

function policyOf(node: WorkflowNode): StepConfig {
  return node.stepConfig ?? STEP_CONFIG_DEFAULTS;
}

/** The message of any thrown value, cut to `MAX_ERROR_CHARS` (it is stored on node runs, events and the run). */
export function messageOf(error: unknown): string {
  return boundedText(error instanceof Error ? error.message : String(error));
}
