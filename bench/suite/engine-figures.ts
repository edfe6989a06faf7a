/**
 * The engine's figures, measured without HTTP: node runs per second of a linear chain of `echo`
 * steps, of a loop of one `echo` step, of a parallel node of `echo` children, and the per-node
 * rate of a 2,000-step chain relative to a 500-step one. Each workload runs on its own engine
 * over a fresh data directory (compaction off, so the directory's size is the bytes written).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowNodeInput } from '@switchyard/domain';
import { createBenchRun, createBenchWorkflow, directoryBytes, echoStep, openBenchServices } from '../support.ts';
import { withTimeout } from './figure.ts';

/** What running one workload measured. */
export interface WorkloadResult {
  /** Node runs recorded, over all runs of the workload. */
  readonly nodeRuns: number;
  /** Wall-clock seconds of the runs (engine start to completion). */
  readonly seconds: number;
  /** `nodeRuns / seconds`. */
  readonly nodeRunsPerSecond: number;
  /** Bytes the runs added to the data directory (journal). */
  readonly bytesWritten: number;
  /** Error summaries of the runs that failed with a tolerated error (see {@link runWorkload}). */
  readonly tolerated: readonly string[];
}

/**
 * Saves `nodes` as a workflow on a fresh engine and data directory, runs it `runs` times one
 * after another, each bounded by `timeoutMs` milliseconds, and measures node runs per second and
 * bytes written. A run that fails with an error summary matching `tolerate` still counts (its
 * node runs ran); its summary is returned. Rejects with the definition's InvalidRequestError
 * when it is refused (e.g. over the node limit), with a timeout Error, or with an Error when a
 * run does not complete otherwise.
 */
export async function runWorkload(nodes: readonly WorkflowNodeInput[], runs: number, timeoutMs: number, tolerate?: RegExp): Promise<WorkloadResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-suite-'));
  const services = await openBenchServices({ dataDir, compactionMinEntries: Number.MAX_SAFE_INTEGER, compactionMinBytes: Number.MAX_SAFE_INTEGER });
  try {
    const workflow = await createBenchWorkflow(services, 'suite', nodes);
    const bytesBefore = directoryBytes(dataDir);
    let nodeRuns = 0;
    let milliseconds = 0;
    const tolerated: string[] = [];
    for (let i = 0; i < runs; i++) {
      const runId = await createBenchRun(services, workflow, { seed: i });
      const started = performance.now();
      await withTimeout(services.engine.start(runId), timeoutMs, `run ${i + 1} of ${runs}`);
      milliseconds += performance.now() - started;
      const run = await services.repos.runs.get(runId);
      if (run?.status !== 'completed') {
        const summary = run?.errorSummary ?? '';
        if (!tolerate?.test(summary)) throw new Error(`run ${runId} ended ${run?.status ?? 'missing'}, not completed: ${summary}`);
        tolerated.push(summary);
      }
      nodeRuns += (await services.repos.nodeRuns.listByRun(runId)).length;
    }
    const seconds = milliseconds / 1000;
    return { nodeRuns, seconds, nodeRunsPerSecond: nodeRuns / seconds, bytesWritten: directoryBytes(dataDir) - bytesBefore, tolerated };
  } finally {
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A linear chain of `steps` `echo` steps (`echo` returns `{ arguments, input }`, so each output nests the previous one). */
export function chain(steps: number): WorkflowNodeInput[] {
  return Array.from({ length: steps }, (_, i) => echoStep(`S${i}`, { i }));
}

/** One loop node of `iterations` iterations around one `echo` step. */
export function loop(iterations: number): WorkflowNodeInput[] {
  return [{ name: 'L', nodeType: 'loop', loopConfig: { maxIterations: iterations }, children: [echoStep('Body', { i: { $cel: 'loop_state.iteration' } })] } as WorkflowNodeInput];
}

/** One parallel node of `children` `echo` steps. */
export function parallel(children: number): WorkflowNodeInput[] {
  return [{ name: 'P', nodeType: 'parallel', children: Array.from({ length: children }, (_, i) => echoStep(`C${i}`, { i })) } as WorkflowNodeInput];
}
