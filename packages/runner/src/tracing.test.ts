/**
 * The runner's spans (tracing.ts) with the OpenTelemetry SDK registered and an in-memory exporter:
 * the span tree of a run (execution → node → attempt), its attributes, executions of one run joined
 * in one trace across a HITL park, the trigger's context as their parent, and the attempt's context
 * on the webhook request.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import type { WorkflowNodeInput } from '@switchyard/domain';
import { openHarness, type Harness } from './testing/harness.ts';
import { WebhookServer } from './testing/webhook-server.ts';
import { MAX_TRACEPARENT_CHARS, MAX_TRACESTATE_CHARS, TRACE_ATTRIBUTES as A, traceContextFromHeaders } from './tracing.ts';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let server: WebhookServer;
let h: Harness;

beforeAll(async () => {
  provider.register(); // AsyncLocalStorage context, W3C trace-context propagator
  server = await WebhookServer.start();
});
afterAll(async () => {
  await server.close();
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});
beforeEach(async () => {
  exporter.reset();
  h = await openHarness({}, { executors: { hook: { kind: 'http', url: server.url('/hook') } } });
});
afterEach(async () => {
  await h.close();
});

const fast = { backoffBaseSeconds: 0.001, backoffMaxSeconds: 0.001 };
const step = (name: string, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'echo', ...extra });

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((s) => s.name === name);
const one = (name: string): ReadableSpan => {
  const found = named(name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
type Tree = { id: string; name: string; children?: Tree[] | null };
const find = (nodes: readonly Tree[], name: string): Tree | undefined => {
  for (const node of nodes) {
    const found = node.name === name ? node : find(node.children ?? [], name);
    if (found) return found;
  }
  return undefined;
};
const nodeIdOf = (wf: { nodes: readonly Tree[] }, name: string): string => find(wf.nodes, name)!.id;

describe('the span tree of a run', () => {
  it('parallel, loop, a retried step and a HITL gate: execution → node → attempt spans, two executions in one trace, linked', async () => {
    const wf = await h.createWorkflow([
      {
        name: 'P',
        nodeType: 'parallel',
        children: [step('ok'), step('flaky', { executorKey: 'fail', config: { times: 1 }, stepConfig: { maxRetries: 2, ...fast } })],
      },
      { name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [step('body')] },
      step('gated', { humanReview: { requiresConfirmation: true } }),
    ]);
    const run = await h.createRun(wf.id);
    await h.engine.start(run.id);
    expect((await h.repos.runs.get(run.id))!.status).toBe('awaiting_approval');

    const first = one(`run wf-1`);
    expect(first.attributes).toMatchObject({ [A.runId]: run.id, [A.workflowId]: wf.id, [A.outcome]: 'awaiting_approval', [A.triggerSource]: 'test' });
    expect(parentOf(first)).toBeUndefined();
    const traceId = first.spanContext().traceId;
    expect(spans().every((s) => s.spanContext().traceId === traceId)).toBe(true);
    // The run keeps the first execution's context for the next ones.
    expect((await h.repos.runs.get(run.id))!.traceParent).toBe(`00-${traceId}-${first.spanContext().spanId}-01`);

    const node = (name: string) => one(`node ${nodeIdOf(wf, name)}`);
    expect(parentOf(node('P'))).toBe(first.spanContext().spanId);
    expect(parentOf(node('L'))).toBe(first.spanContext().spanId);
    expect(parentOf(node('ok'))).toBe(node('P').spanContext().spanId);
    expect(parentOf(node('flaky'))).toBe(node('P').spanContext().spanId);
    const bodies = named(`node ${nodeIdOf(wf, 'body')}`);
    expect(bodies.map((s) => s.attributes[A.iterationPath]).sort()).toEqual(['1', '2']);
    expect(bodies.every((s) => parentOf(s) === node('L').spanContext().spanId)).toBe(true);
    const [okRun] = (await h.repos.nodeRuns.listByRun(run.id)).filter((r) => r.nodeName === 'ok');
    expect(node('ok').attributes).toMatchObject({ [A.nodeId]: nodeIdOf(wf, 'ok'), [A.nodeName]: 'ok', [A.nodeType]: 'step', [A.nodeRunId]: okRun!.id });
    // The gate blocked: its node span ends without an error, with the gate as its outcome.
    expect(node('gated').attributes[A.outcome]).toBe('GateBlocked');
    expect(node('gated').status.code).not.toBe(SpanStatusCode.ERROR);

    // The retried step: two attempts, the first failed, both children of the step's span.
    const attempts = named('attempt fail').sort((a, b) => Number(a.attributes[A.attempt]) - Number(b.attributes[A.attempt]));
    expect(attempts.map((s) => [s.attributes[A.attempt], s.status.code])).toEqual([
      [1, SpanStatusCode.ERROR],
      [2, SpanStatusCode.UNSET],
    ]);
    expect(attempts.every((s) => parentOf(s) === node('flaky').spanContext().spanId)).toBe(true);
    expect(attempts[0]!.attributes).toMatchObject({ [A.executor]: 'fail', [A.nodeId]: nodeIdOf(wf, 'flaky') });
    expect(attempts[0]!.attributes[A.nodeRunId]).toEqual(expect.any(String));
    expect(node('flaky').status.code).toBe(SpanStatusCode.UNSET);

    // The decision continues the run in a second execution: same trace, child of and linked to the first.
    exporter.reset();
    const [gate] = await h.pending(run.id);
    await h.decide(run.id, { stepId: gate!.stepId, resolution: 'confirm' });
    await h.engine.idle();
    expect((await h.repos.runs.get(run.id))!.status).toBe('completed');
    const second = one('run wf-1');
    expect(second.spanContext().traceId).toBe(traceId);
    expect(parentOf(second)).toBe(first.spanContext().spanId);
    expect(second.links.map((l) => l.context.spanId)).toEqual([first.spanContext().spanId]);
    expect(second.attributes[A.outcome]).toBe('completed');
    // Only the gated step executes again; the settled nodes are reused and make no span.
    expect(spans().filter((s) => s.name.startsWith('node ')).map((s) => s.attributes[A.nodeName])).toEqual(['gated']);
  });

  it('a failing step: error status on its attempt, node and execution spans', async () => {
    const wf = await h.createWorkflow([step('bad', { executorKey: 'fail', config: { message: 'boom' } })]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('failed');
    expect(one('attempt fail').status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(one(`node ${nodeIdOf(wf, 'bad')}`).status.code).toBe(SpanStatusCode.ERROR);
    const execution = one('run wf-1');
    expect(execution.status.code).toBe(SpanStatusCode.ERROR);
    expect(execution.attributes[A.outcome]).toBe('failed');
  });

  it("executions continue the trigger's trace: its span is their parent and their link", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const wf = await h.createWorkflow([step('A')]);
    const run = await h.createRun(wf.id, {}, undefined, { traceParent: `00-${traceId}-${parentId}-01` });
    await h.engine.start(run.id);
    const execution = one('run wf-1');
    expect(execution.spanContext().traceId).toBe(traceId);
    expect(parentOf(execution)).toBe(parentId);
    expect(execution.links.map((l) => l.context.spanId)).toEqual([parentId]);
    // The stored context stays the trigger's.
    expect((await h.repos.runs.get(run.id))!.traceParent).toBe(`00-${traceId}-${parentId}-01`);
  });
});

describe('propagation to executors', () => {
  it("a webhook receives the attempt span's traceparent", async () => {
    const wf = await h.createWorkflow([step('Notify', { executorKey: 'hook', config: { x: 1 } })]);
    const run = await h.runToEnd(wf.id);
    expect(run.status).toBe('completed');
    const attempt = one('attempt hook');
    const sent = server.requests.at(-1)!.headers.traceparent;
    expect(sent).toBe(`00-${attempt.spanContext().traceId}-${attempt.spanContext().spanId}-01`);
  });
});

describe('traceContextFromHeaders (the trigger)', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('keeps a valid traceparent and its tracestate', () => {
    expect(traceContextFromHeaders({ traceparent: valid, tracestate: 'vendor=abc' })).toEqual({ traceParent: valid, traceState: 'vendor=abc' });
  });

  it.each([
    ['malformed', 'not-a-traceparent'],
    ['zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['zero span id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['upper-case hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01'],
    ['oversized (a future version, whose extra fields are allowed)', `01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-${'a'.repeat(MAX_TRACEPARENT_CHARS)}`],
  ])('ignores a %s traceparent', (_what, traceparent) => {
    expect(traceContextFromHeaders({ traceparent })).toBeNull();
  });

  it('ignores a repeated traceparent header and a missing one', () => {
    expect(traceContextFromHeaders({ traceparent: [valid, valid] })).toBeNull();
    expect(traceContextFromHeaders({})).toBeNull();
  });

  it('drops an oversized tracestate, keeping the traceparent', () => {
    expect(traceContextFromHeaders({ traceparent: valid, tracestate: `a=${'b'.repeat(MAX_TRACESTATE_CHARS)}` })).toEqual({ traceParent: valid, traceState: null });
  });
});
