/**
 * The large-read figure (issue "Reliability" item 5, no read can exhaust memory): how much a burst
 * of concurrent reads of a large run raises the service's peak RSS. The run: one parallel node of
 * `steps` `builtin.echo` children, each echoing a `stepBytes` string of the trigger's input, so
 * that its node runs hold at least `steps × stepBytes` bytes in all (the parallel node's collected
 * output is over the output limit, so the run then fails: its children ran and are stored, which
 * is what is read). Then `readers`
 * GETs at once, in turn of the run detail, its node runs and the workflow's run list.
 *
 * Measured on a service process of its own, after the run ended: its peak RSS after the reads
 * (`maxRSS`) minus its RSS just before them. When running the large run itself set a higher peak
 * than the reads, this is that peak's distance from the RSS before the reads: an upper bound of
 * what the reads cost. Unbounded reads held each large snapshot several
 * times per request (24 readers of an 18 MB run: gigabytes); bounded ones leave snapshots out of
 * lists and page node runs. The test (test/bounded-reads.e2e.test.ts) checks the bounds of the
 * answers; this figure is the memory they cost.
 */
import type { WorkflowNodeInput } from '@switchyard/domain';
import { API_PREFIX } from '@switchyard/api';
import { echoStep } from '../support.ts';
import { createEnabledWorkflow, request, type AppUnderTest } from './http-figures.ts';
import type { ServiceProcess } from './service-process.ts';

/** What {@link measureLargeReads} measured. */
export interface LargeReadResult {
  /** The service's peak RSS after the reads minus its RSS just before them, MB. */
  readonly peakRssGrowthMb: number;
  /** The largest answer, bytes. */
  readonly largestResponseBytes: number;
  readonly readers: number;
}

/**
 * Runs the large run on `service` (its app at `app`), waits at most `timeoutMs` for it to end,
 * then sends `readers` GETs at once and measures the peak RSS growth. Rejects when the run does
 * not end in time or a read is not answered 200.
 */
export async function measureLargeReads(
  service: ServiceProcess,
  app: AppUnderTest,
  options: { steps: number; stepBytes: number; readers: number; timeoutMs: number },
): Promise<LargeReadResult> {
  // The blob comes with the trigger (a definition or request body is at most 1 MiB) and each child echoes it.
  const children = Array.from({ length: options.steps }, (_, i) => echoStep(`Read ${i}`, { blob: { $cel: 'input.blob' } }));
  const workflowId = await createEnabledWorkflow(app, 'suite large reads', [{ name: 'P', nodeType: 'parallel', children } as WorkflowNodeInput]);
  const triggered = await request(app, 'POST', `${API_PREFIX}/${workflowId}/runs`, { initialInput: { blob: 'x'.repeat(options.stepBytes) } });
  if (triggered.status !== 202) throw new Error(`trigger: ${triggered.status} ${triggered.text.slice(0, 500)}`);
  const runId = (triggered.json as { runId: string }).runId;
  const deadline = performance.now() + options.timeoutMs;
  while ((await service.runsOf(workflowId)).unfinished > 0) {
    if (performance.now() > deadline) throw new Error(`large run ${runId} did not end in time`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const base = `${API_PREFIX}/${workflowId}/runs/${runId}`;
  const paths = [base, `${base}/nodes`, `${API_PREFIX}/${workflowId}/runs`];
  const before = await service.rssMb();
  const answers = await Promise.all(Array.from({ length: options.readers }, (_, i) => request(app, 'GET', paths[i % paths.length]!)));
  const after = await service.peakRssMb();
  const failed = answers.find((answer) => answer.status !== 200);
  if (failed) throw new Error(`read: ${failed.status} ${failed.text.slice(0, 500)}`);
  return { peakRssGrowthMb: after - before, largestResponseBytes: Math.max(...answers.map((answer) => answer.text.length)), readers: options.readers };
}
