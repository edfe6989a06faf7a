/**
 * OpenTelemetry spans of the runner (docs/operations/tracing.md). Only `@opentelemetry/api` is
 * used here: without a registered SDK (tracing off) every call is the API's no-op and nothing is
 * recorded, stored or sent. The SDK is set up by the service (apps/api `telemetry/tracing.ts`).
 *
 * Spans (tracer {@link TRACER_NAME}):
 * - `run <workflow name>`: one per execution of a run (each claim: the first, and every
 *   continuation after a HITL decision, a resume, a crash). Its parent is the run's stored trace
 *   context (`RunRecord.traceParent`: the trigger's `traceparent`, else the first traced
 *   execution's span), and it links to that context, so every execution of a run shares one trace.
 * - `node <node id>`: one per node executed in an execution (settled nodes that are reused make
 *   none); a node inside a container is a child of the container's span.
 * - `attempt <executor key>`: one per executor attempt of a step, child of the step's node span;
 *   it is the active span while the executor calls out, so executors propagate it as W3C
 *   `traceparent` (executors/shared/trace-headers.ts).
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

/** The tracer name (instrumentation scope) of every span the runner makes. */
export const TRACER_NAME = 'switchyard';

/** Attribute keys of the runner's spans. */
export const TRACE_ATTRIBUTES = {
  runId: 'switchyard.run.id',
  workflowId: 'switchyard.workflow.id',
  triggerSource: 'switchyard.run.trigger_source',
  /** How an execution ended: completed, failed, cancelled, awaiting_approval, stopped (paused, shut down, lease lost), error (internal). */
  outcome: 'switchyard.run.outcome',
  nodeId: 'switchyard.node.id',
  nodeName: 'switchyard.node.name',
  nodeType: 'switchyard.node.type',
  iterationPath: 'switchyard.node.iteration_path',
  nodeRunId: 'switchyard.node_run.id',
  attempt: 'switchyard.attempt',
  executor: 'switchyard.executor',
} as const;

/** Longest `traceparent` accepted from a trigger or stored on a run (version 00 has 55 characters). */
export const MAX_TRACEPARENT_CHARS = 256;
/** Longest `tracestate` kept (W3C asks to propagate at least 512 characters); a longer one is dropped. */
export const MAX_TRACESTATE_CHARS = 512;

/** A W3C trace context as the run stores it (`trace_parent`, `trace_state`). */
export interface StoredTraceContext {
  traceParent: string;
  traceState: string | null;
}

function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/**
 * The trace context carried by W3C headers (`traceparent`, `tracestate`; a header map with
 * lower-case names, as Node gives them), validated by the registered propagator and re-serialized;
 * null when tracing is off, the header is missing, repeated, longer than
 * {@link MAX_TRACEPARENT_CHARS} or invalid (W3C: an invalid `traceparent` is ignored, never an error).
 */
export function traceContextFromHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): StoredTraceContext | null {
  const traceParent = headers.traceparent;
  if (typeof traceParent !== 'string' || traceParent.length > MAX_TRACEPARENT_CHARS) return null;
  const traceState = headers.tracestate;
  const carrier: Record<string, string> = { traceparent: traceParent };
  if (typeof traceState === 'string' && traceState.length <= MAX_TRACESTATE_CHARS) carrier.tracestate = traceState;
  return storedContextOf(propagation.extract(ROOT_CONTEXT, carrier));
}

/** The W3C headers of `ctx`'s span as stored on a run, or null when it has no valid span context (or tracing is off). */
function storedContextOf(ctx: Context): StoredTraceContext | null {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  if (carrier.traceparent === undefined || carrier.traceparent.length > MAX_TRACEPARENT_CHARS) return null;
  const traceState = carrier.tracestate !== undefined && carrier.tracestate.length <= MAX_TRACESTATE_CHARS ? carrier.tracestate : null;
  return { traceParent: carrier.traceparent, traceState };
}

/** What an execution span needs of the run. */
export interface TracedRun {
  id: string;
  workflowDefinitionId: string;
  triggerSource: string;
  definitionSnapshot: { name: string };
  traceParent?: string | null;
  traceState?: string | null;
}

/** One execution's span: its context (the parent of its node spans), and the trace context to store on the run when it has none yet. */
export interface ExecutionSpan {
  span: Span;
  context: Context;
  /** Set when the run had no stored trace context and the SDK made this span (tracing on): store it so later executions join this trace. */
  toStore: StoredTraceContext | null;
}

/** Opens the span of one execution of `run` (see the module comment); the caller ends it with {@link endExecutionSpan}. */
export function startExecutionSpan(run: TracedRun): ExecutionSpan {
  const stored = run.traceParent
    ? propagation.extract(ROOT_CONTEXT, run.traceState ? { traceparent: run.traceParent, tracestate: run.traceState } : { traceparent: run.traceParent })
    : ROOT_CONTEXT;
  const parent = trace.getSpanContext(stored);
  const span = tracer().startSpan(
    `run ${run.definitionSnapshot.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: { [TRACE_ATTRIBUTES.runId]: run.id, [TRACE_ATTRIBUTES.workflowId]: run.workflowDefinitionId, [TRACE_ATTRIBUTES.triggerSource]: run.triggerSource },
      links: parent === undefined ? [] : [{ context: parent }],
    },
    stored,
  );
  const spanContext = trace.setSpan(ROOT_CONTEXT, span);
  return { span, context: spanContext, toStore: parent === undefined && made(span) ? storedContextOf(spanContext) : null };
}

/** Ends an execution span with how the execution ended (`outcome`, see {@link TRACE_ATTRIBUTES}); `failed` and `error` set the error status. */
export function endExecutionSpan(execution: ExecutionSpan, outcome: string, error?: unknown): void {
  const { span } = execution;
  span.setAttribute(TRACE_ATTRIBUTES.outcome, outcome);
  if (error !== undefined) span.recordException(error instanceof Error ? error : String(error));
  if (outcome === 'failed' || outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR, ...(error instanceof Error ? { message: error.message } : {}) });
  span.end();
}

/** Runs `fn` with `ctx` active (a plain call when `ctx` holds no span: tracing off). */
export function withContext<T>(ctx: Context, fn: () => T): T {
  const span = trace.getSpan(ctx);
  return span !== undefined && made(span) ? context.with(ctx, fn) : fn();
}

/**
 * Whether the SDK made `span`: it has a valid context, recorded or not (a span the sampler dropped
 * still propagates, with its sampled flag off). False for the API's no-op span (tracing off).
 */
function made(span: Span): boolean {
  return isSpanContextValid(span.spanContext());
}

/** What a node span records of the node. */
export interface TracedNode {
  id: string;
  name: string;
  nodeType: string;
}

/**
 * Runs `fn` (the execution of `node` at `iterationPath`) in a `node <id>` span, child of the
 * active span. `nodeRunId()` is read when it ends (the node run exists by then, if one was made);
 * an error for which `isFailure` is true sets the error status, any other (a gate that blocks, a
 * stop) is noted as `switchyard.run.outcome` only. Resolves or rejects like `fn`.
 */
export async function inNodeSpan<T>(node: TracedNode, iterationPath: string, nodeRunId: () => string | undefined, isFailure: (error: unknown) => boolean, fn: () => Promise<T>): Promise<T> {
  const attributes: Attributes = {
    [TRACE_ATTRIBUTES.nodeId]: node.id,
    [TRACE_ATTRIBUTES.nodeName]: node.name,
    [TRACE_ATTRIBUTES.nodeType]: node.nodeType,
    [TRACE_ATTRIBUTES.iterationPath]: iterationPath,
  };
  const span = tracer().startSpan(`node ${node.id}`, { kind: SpanKind.INTERNAL, attributes });
  if (!made(span)) return fn();
  try {
    return await context.with(trace.setSpan(context.active(), span), fn);
  } catch (error) {
    if (isFailure(error)) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    } else {
      span.setAttribute(TRACE_ATTRIBUTES.outcome, error instanceof Error ? error.name : 'stopped');
    }
    throw error;
  } finally {
    const id = nodeRunId();
    if (id !== undefined) span.setAttribute(TRACE_ATTRIBUTES.nodeRunId, id);
    span.end();
  }
}

/** The attempt span of a step (see {@link startAttemptSpan}). */
export interface AttemptSpan {
  /** Runs `fn` with this attempt's span active (executor calls made in it propagate it). */
  run<T>(fn: () => T): T;
  /** Notes the attempt failed with `message` (error status). */
  failed(message: string): void;
  /** Ends the span once, with the node run it recorded and the executor that served it, when known. */
  end(nodeRunId: string | undefined, servedBy: string | null): void;
}

/** Opens the span of attempt `attempt` of step `nodeId` calling `executorKey` (a pool: `a2aPool`), child of the active span. */
export function startAttemptSpan(nodeId: string, executorKey: string, attempt: number): AttemptSpan {
  const span = tracer().startSpan(`attempt ${executorKey}`, {
    kind: SpanKind.INTERNAL,
    attributes: { [TRACE_ATTRIBUTES.nodeId]: nodeId, [TRACE_ATTRIBUTES.attempt]: attempt, [TRACE_ATTRIBUTES.executor]: executorKey },
  });
  if (!made(span)) return NO_ATTEMPT_SPAN;
  const ctx = trace.setSpan(context.active(), span);
  let ended = false;
  return {
    run: (fn) => context.with(ctx, fn),
    failed: (message) => span.setStatus({ code: SpanStatusCode.ERROR, message }),
    end: (nodeRunId, servedBy) => {
      if (ended) return;
      ended = true;
      if (nodeRunId !== undefined) span.setAttribute(TRACE_ATTRIBUTES.nodeRunId, nodeRunId);
      if (servedBy !== null) span.setAttribute(TRACE_ATTRIBUTES.executor, servedBy);
      span.end();
    },
  };
}

/** The attempt span when tracing is off: does nothing. */
const NO_ATTEMPT_SPAN: AttemptSpan = { run: (fn) => fn(), failed: () => {}, end: () => {} };
