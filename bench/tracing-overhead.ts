/**
 * What tracing costs the engine (docs/operations/tracing.md): a chain of 1,000 `echo` steps run
 * in-process on the embedded store (the runner's test harness), first with tracing off (no SDK:
 * the API's no-ops), then with the SDK registered as the service registers it (AsyncLocalStorage
 * context, W3C propagator) and a BatchSpanProcessor whose exporter drops the spans (the export
 * itself is off the engine's path). One warm-up run, then the median of 5 runs each. Prints a table.
 *
 * `npx tsx bench/tracing-overhead.ts`
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { openHarness } from '../packages/runner/src/testing/harness.ts';

const STEPS = 1_000;
const RUNS = 5;

/** Drops every span (counts them). */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: ExportResultCode }) => void): void {
    this.spans += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

/** Median wall time of {@link RUNS} runs of the chain, ms (after one warm-up run). */
async function measure(): Promise<number> {
  const h = await openHarness();
  try {
    const wf = await h.createWorkflow(Array.from({ length: STEPS }, (_, i) => ({ name: `s${i}`, nodeType: 'step' as const, executorKey: 'echo', config: { i } })));
    const times: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const started = performance.now();
      const run = await h.runToEnd(wf.id);
      if (run.status !== 'completed') throw new Error(`run ${run.status}`);
      if (i > 0) times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  } finally {
    await h.close();
  }
}

const off = await measure();
const exporter = new DroppingExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 100_000, maxExportBatchSize: 2_048 })] });
provider.register();
const on = await measure();
await provider.shutdown();
trace.disable();
propagation.disable();
context.disable();

const row = (name: string, ms: number) => `| ${name} | ${ms.toFixed(0)} | ${((ms * 1000) / STEPS).toFixed(0)} |`;
console.log(`${STEPS}-step echo chain, median of ${RUNS} runs (Node ${process.version})\n`);
console.log('| tracing | ms per run | µs per step |\n| --- | ---: | ---: |');
console.log(row('off', off));
console.log(row('on (spans dropped by the exporter)', on));
console.log(`\nspans made with tracing on: ${exporter.spans} (${(on / off - 1) * 100 > 0 ? '+' : ''}${((on / off - 1) * 100).toFixed(0)} % time)`);
