/**
 * The benchmark suite (issue #10, item 6): every figure of the table, one workload after
 * another, each next to its goal. The service under test is a process of its own
 * (service-child.ts): engine workloads run there, the app listens there; this process only
 * generates load, so the service's peak RSS and CPU are its own.
 */
import type { ProfileSummary } from './cpu-profile.ts';
import type { WorkloadResult } from './engine-figures.ts';
import { peakRssMb, withTimeout, type Figure, type Goal } from './figure.ts';
import { measureCelBudget } from './cel-figures.ts';
import { measureDirectives } from './directive-figures.ts';
import { measureLargeReads, type LargeReadResult } from './read-figures.ts';
import { measureApproveRace, measureRunDetail, measureTriggers } from './http-figures.ts';
import { describeMachine, judged, type SuiteReport } from './report.ts';
import { ServiceProcess, type WorkloadPart } from './service-process.ts';

/** Sizes of the workloads; counts are runs, steps, requests; durations in milliseconds. */
export interface SuiteSizes {
  /** Size of each part (chain, loop, parallel) of the unmeasured warm-up workload, and its runs. */
  readonly warmUpSteps: number;
  readonly warmUpRuns: number;
  readonly chainSteps: number;
  readonly chainRuns: number;
  /** Steps of the long chain compared per node with the `chainSteps` one (2,000 vs 500 in full). */
  readonly longChainSteps: number;
  readonly longChainRuns: number;
  readonly loopIterations: number;
  readonly loopRuns: number;
  readonly parallelChildren: number;
  readonly parallelRuns: number;
  /** Concurrent connections of the trigger and run-detail loads. */
  readonly connections: number;
  readonly triggerMs: number;
  readonly triggerMax: number;
  /** Duration of each of the two run-detail loads (app, bare route). */
  readonly detailMs: number;
  readonly detailMax: number;
  readonly gates: number;
  readonly racers: number;
  /** Measured evaluations of each hostile CEL expression (after one warm-up). */
  readonly celRuns: number;
  /** Runs of each directive series (pause, cancel), after one warm-up run. */
  readonly directiveRuns: number;
  /** The large run read at once by `largeReaders` clients: parallel echo children and bytes each. */
  readonly largeSteps: number;
  readonly largeStepBytes: number;
  readonly largeReaders: number;
  /** Bound of one engine run, and of each HTTP workload's waits. */
  readonly timeoutMs: number;
}

/** The workloads. */
export const FULL_SIZES: SuiteSizes = {
  warmUpSteps: 100,
  warmUpRuns: 5,
  chainSteps: 500,
  chainRuns: 10,
  longChainSteps: 2_000,
  longChainRuns: 2,
  loopIterations: 1_000,
  loopRuns: 3,
  parallelChildren: 100,
  parallelRuns: 3,
  connections: 50,
  triggerMs: 10_000,
  triggerMax: 100_000,
  detailMs: 5_000,
  detailMax: 500_000,
  gates: 10,
  racers: 100,
  celRuns: 5,
  directiveRuns: 30,
  largeSteps: 40,
  largeStepBytes: 450_000,
  largeReaders: 24,
  timeoutMs: 180_000,
};

/** Shrunk workloads: the suite runs in a few seconds, and its figures mean nothing. */
export const QUICK_SIZES: SuiteSizes = {
  warmUpSteps: 20,
  warmUpRuns: 1,
  chainSteps: 20,
  chainRuns: 1,
  longChainSteps: 80,
  longChainRuns: 1,
  loopIterations: 20,
  loopRuns: 1,
  parallelChildren: 10,
  parallelRuns: 1,
  connections: 10,
  triggerMs: 400,
  triggerMax: 200,
  detailMs: 200,
  detailMax: 2_000,
  gates: 1,
  racers: 10,
  celRuns: 1,
  directiveRuns: 2,
  largeSteps: 4,
  largeStepBytes: 100_000,
  largeReaders: 6,
  timeoutMs: 30_000,
};

/** Where the definition node limit lives (reported when it refuses the long chain). */
const NODE_LIMIT_SOURCE = 'SWITCHYARD_MAX_NODES (DefinitionChecks.maxNodes, default DEFAULT_MAX_NODES in packages/domain/src/validation.ts)';

/** The error summary of a run whose output exceeded SWITCHYARD_MAX_OUTPUT_BYTES. */
const OUTPUT_TOO_LARGE = /output too large/;

const atLeast = (value: number): Goal => ({ op: '>=', value });
const atMost = (value: number): Goal => ({ op: '<=', value });

/**
 * Runs every workload of `sizes` (quick ones when `quick`), in order: engine figures (chain,
 * long chain, loop, parallel), the CEL budget figure, then HTTP figures (triggers and bytes per
 * run, run detail, /approve race, pause and cancel), the large reads. A workload that fails leaves its figures null and its error in
 * `report.errors`; the suite goes on. Never rejects for a workload's failure.
 */
export async function runSuite(options: { quick: boolean; profile?: boolean; log?: (line: string) => void }): Promise<SuiteReport> {
  const profile = options.profile ?? !options.quick;
  const sizes = options.quick ? QUICK_SIZES : FULL_SIZES;
  const log = options.log ?? (() => undefined);
  const startedAt = new Date();
  const figures: Figure[] = [];
  const errors: string[] = [];
  let dataDirBytes = 0;
  const service = await ServiceProcess.start();
  const servicePeakRssMb = () => service.peakRssMb();

  /** Runs `work`; on failure records the error and returns undefined. */
  const attempt = async <T>(name: string, work: () => Promise<T>): Promise<T | undefined> => {
    log(`${name}...`);
    const started = performance.now();
    try {
      const result = await work();
      log(`${name}: ${((performance.now() - started) / 1000).toFixed(1)} s, peak RSS of the service ${(await servicePeakRssMb()).toFixed(0)} MB`);
      return result;
    } catch (error) {
      errors.push(`${name}: ${(error as Error).message}`);
      log(`${name} FAILED: ${(error as Error).message}`);
      return undefined;
    }
  };
  const run = (parts: WorkloadPart[], runs: number, tolerate?: RegExp, on = service) => on.workload({ parts, runs, timeoutMs: sizes.timeoutMs, tolerate: tolerate?.source });
  /** A measured workload (in `on`, the suite's service by default), profiled when profiling: its result and profile, or undefined when it failed. */
  const workload = async (name: string, parts: WorkloadPart[], runs: number, tolerate?: RegExp, on = service) => {
    const measured = await attempt(name, () => on.profiled(profile, () => run(parts, runs, tolerate, on)));
    if (measured) dataDirBytes += measured.result.bytesWritten;
    return measured;
  };
  const rate = (measured: { result: WorkloadResult } | undefined) => measured?.result.nodeRunsPerSecond ?? null;

  try {
    // Unmeasured warm-up, so that the figures do not pay for the JIT compiling the engine.
    // One workflow per kind: nested `echo` outputs grow fast (a loop over ~140 iterations passes
    // the output limit, and so does a parallel node given a loop's output).
    const warmUp = (on: ServiceProcess) =>
      attempt('warm-up', async () => {
        for (const kind of ['chain', 'loop', 'parallel'] as const) await run([{ kind, size: Math.min(sizes.warmUpSteps, 100) }], sizes.warmUpRuns, undefined, on);
      });
    await warmUp(service);

    const chainResult = await workload(`chain of ${sizes.chainSteps}`, [{ kind: 'chain', size: sizes.chainSteps }], sizes.chainRuns);
    figures.push({ key: 'chain.nodeRunsPerSecond', label: `node runs/s, ${sizes.chainSteps}-step linear chain of builtin echo`, measured: rate(chainResult), unit: 'node runs/s', goal: atLeast(5_000), profile: chainResult?.profile });

    log(`chain of ${sizes.longChainSteps}...`);
    figures.push(
      await longChainFigure(sizes, chainResult?.result, errors, () => service.profiled(profile, () => run([{ kind: 'chain', size: sizes.longChainSteps }], sizes.longChainRuns)), (result) => (dataDirBytes += result.bytesWritten)),
    );

    // `echo` nests its input, so the loop's collected output outgrows the default output limit
    // (1 MiB) after its last iteration: the run fails then, its iterations all ran and count.
    // The loop's memory is its own: a service process of its own runs it (after the warm-up and one
    // unmeasured run of the loop), so that its peak RSS is not the high-water mark of the chains.
    const loopService = await ServiceProcess.start();
    let loopResult: Awaited<ReturnType<typeof workload>>;
    let loopRss: number;
    try {
      await warmUp(loopService);
      await attempt('loop warm-up', () => run([{ kind: 'loop', size: sizes.loopIterations }], 1, OUTPUT_TOO_LARGE, loopService));
      loopResult = await workload(`loop of ${sizes.loopIterations}`, [{ kind: 'loop', size: sizes.loopIterations }], sizes.loopRuns, OUTPUT_TOO_LARGE, loopService);
      loopRss = await loopService.peakRssMb();
    } finally {
      await loopService.close();
    }
    figures.push(
      { key: 'loop.nodeRunsPerSecond', label: `node runs/s, loop of ${sizes.loopIterations} iterations × 1 echo step`, measured: rate(loopResult), unit: 'node runs/s', goal: atLeast(5_000), note: loopResult?.result.tolerated.length ? `the run then failed: ${loopResult.result.tolerated[0]}` : undefined, profile: loopResult?.profile },
      { key: 'loop.peakRssMb', label: 'peak RSS of a service that ran the loop (after the warm-up and one unmeasured loop)', measured: loopResult ? loopRss : null, unit: 'MB', goal: atMost(300) },
      { key: 'loop.megabytesWritten', label: 'DATA_DIR bytes written by the loop', measured: loopResult ? loopResult.result.bytesWritten / 1024 / 1024 : null, unit: 'MB', goal: null },
    );

    const parallelResult = await workload(`parallel of ${sizes.parallelChildren}`, [{ kind: 'parallel', size: sizes.parallelChildren }], sizes.parallelRuns);
    figures.push({ key: 'parallel.nodeRunsPerSecond', label: `node runs/s, parallel node with ${sizes.parallelChildren} echo children`, measured: rate(parallelResult), unit: 'node runs/s', goal: atLeast(5_000), profile: parallelResult?.profile });

    const cel = await attempt('hostile CEL under the budget', async () => measureCelBudget(sizes.celRuns));
    figures.push({
      key: 'cel.worstEvaluationMs',
      label: 'longest evaluation of a hostile or heavy CEL expression under the default cost budget',
      measured: cel?.worstMs ?? null,
      unit: 'ms',
      goal: atMost(50),
      note: cel ? `median ${cel.medianMs.toFixed(1)} ms; ${cel.overBudget} of ${cel.evaluations} stopped by the budget; worst: ${cel.worstExpression}` : undefined,
    });

    figures.push(...(await httpFigures(sizes, service, profile, attempt, (bytes) => (dataDirBytes += bytes))));

    // Its peak RSS must be the reads' own: a service process of its own, as for the loop.
    const readService = await ServiceProcess.start();
    let reads: LargeReadResult | undefined;
    let readsRss = 0;
    try {
      const app = { baseUrl: await readService.openHttp() };
      reads = await attempt(`${sizes.largeReaders} concurrent reads of a large run`, () =>
        measureLargeReads(readService, app, { steps: sizes.largeSteps, stepBytes: sizes.largeStepBytes, readers: sizes.largeReaders, timeoutMs: sizes.timeoutMs }),
      );
      readsRss = await readService.peakRssMb();
    } finally {
      await readService.close();
    }
    figures.push({
      key: 'reads.peakRssGrowthMb',
      label: `the service's peak RSS after ${sizes.largeReaders} concurrent GETs of a run whose node runs hold over ${((sizes.largeSteps * sizes.largeStepBytes) / 1e6).toFixed(1)} MB, minus its RSS before them`,
      measured: reads?.peakRssGrowthMb ?? null,
      unit: 'MB',
      goal: atMost(400),
      note: reads ? `largest answer ${reads.largestResponseBytes} bytes` : undefined,
    });

    const peak = Math.max(await servicePeakRssMb(), loopRss, readsRss);
    figures.push({ key: 'process.peakRssMb', label: 'peak RSS of the service through every figure', measured: peak, unit: 'MB', goal: atMost(300), note: `load generator: ${peakRssMb().toFixed(0)} MB` });
    return {
      quick: options.quick,
      startedAt: startedAt.toISOString(),
      seconds: (Date.now() - startedAt.getTime()) / 1000,
      machine: describeMachine(),
      figures: judged(figures, !options.quick),
      peakRssMb: peak,
      dataDirBytes,
      errors,
    };
  } finally {
    await service.close();
  }
}

/**
 * The per-node rate of the long chain relative to the chain's. When the definition limit
 * refuses the long chain, the figure is null and its note names the limit and where it lives.
 */
async function longChainFigure(
  sizes: SuiteSizes,
  chainResult: WorkloadResult | undefined,
  errors: string[],
  runLongChain: () => Promise<{ result: WorkloadResult; profile?: ProfileSummary }>,
  written: (result: WorkloadResult) => void,
): Promise<Figure> {
  const label = `per-node rate, ${sizes.longChainSteps}-step chain ÷ ${sizes.chainSteps}-step chain`;
  const base = { key: 'longChain.rateRatio', label, unit: 'ratio', goal: atLeast(0.7) } as const;
  try {
    const { result, profile } = await runLongChain();
    written(result);
    return { ...base, measured: chainResult ? result.nodeRunsPerSecond / chainResult.nodeRunsPerSecond : null, note: `${Math.round(result.nodeRunsPerSecond)} node runs/s`, profile };
  } catch (error) {
    const message = (error as Error).message;
    if (/at most \d+ nodes/.test(message)) return { ...base, measured: null, note: `refused by the node limit (${NODE_LIMIT_SOURCE}): ${message}` };
    errors.push(`chain of ${sizes.longChainSteps}: ${message}`);
    return { ...base, measured: null, note: 'failed, see errors' };
  }
}

/**
 * The HTTP figures, on one app over one engine and fresh data directory: triggers (and bytes
 * per run), run detail ratio, /approve race, pause and cancel latencies. `written` receives the directory's bytes at the end.
 */
async function httpFigures(
  sizes: SuiteSizes,
  service: ServiceProcess,
  profile: boolean,
  attempt: <T>(name: string, work: () => Promise<T>) => Promise<T | undefined>,
  written: (bytes: number) => void,
): Promise<Figure[]> {
  const app = { baseUrl: await service.openHttp() };
  try {
    const measuredTriggers = await attempt(`triggers over ${sizes.connections} connections`, () =>
      service.profiled(profile, () => measureTriggers(service, app, { connections: sizes.connections, durationMs: sizes.triggerMs, maxRequests: sizes.triggerMax, settleMs: sizes.timeoutMs })),
    );
    const triggers = measuredTriggers?.result;
    let detailProfile: ProfileSummary | undefined;
    const detail = triggers
      ? await attempt('run detail vs bare route', () =>
          measureRunDetail(service, app, triggers.workflowId, triggers.runId, { connections: sizes.connections, durationMs: sizes.detailMs, maxRequests: sizes.detailMax }, async (load) => {
            // Only the app's load is profiled, not the bare route's.
            const measured = await service.profiled(profile, load);
            detailProfile = measured.profile;
            return measured.result;
          }),
        )
      : undefined;
    const measuredRace = await attempt(`approve race of ${sizes.racers}`, () =>
      service.profiled(profile, () => withTimeout(measureApproveRace(app, { gates: sizes.gates, racers: sizes.racers, timeoutMs: sizes.timeoutMs }), sizes.timeoutMs, 'approve race')),
    );
    const race = measuredRace?.result;
    const measuredDirectives = await attempt(`pause and cancel, ${sizes.directiveRuns} runs each`, () =>
      service.profiled(profile, () => withTimeout(measureDirectives(app, { runs: sizes.directiveRuns, timeoutMs: sizes.timeoutMs }), sizes.timeoutMs, 'directives')),
    );
    const directives = measuredDirectives?.result;
    return [
      { key: 'http.runsPerSecond', label: `single-step runs/s sustained over HTTP triggers (${sizes.connections} connections)`, measured: triggers?.runsPerSecond ?? null, unit: 'runs/s', goal: atLeast(2_000), note: triggers ? `${triggers.runs} runs` : undefined, profile: measuredTriggers?.profile },
      { key: 'http.detailRatio', label: 'GET run detail req/s ÷ a bare Fastify route returning the same body', measured: detail?.ratio ?? null, unit: 'ratio', goal: atLeast(0.5), note: detail ? `${Math.round(detail.appPerSecond)} vs ${Math.round(detail.barePerSecond)} req/s` : undefined, profile: detailProfile },
      { key: 'approve.p99Ms', label: `/approve with ${sizes.racers} concurrent racers on one gate, p99`, measured: race?.p99Ms ?? null, unit: 'ms', goal: atMost(20), note: race ? `p50 ${race.p50Ms.toFixed(1)} ms, ${Math.round(race.decisionsPerSecond)} decisions/s` : undefined, profile: measuredRace?.profile },
      { key: 'approve.gatesWithOneWinner', label: 'gates with exactly one winner', measured: race?.gatesWithOneWinner ?? null, unit: 'gates', goal: atLeast(sizes.gates) },
      { key: 'directives.pauseP99Ms', label: `/pause of a running 200-step chain until no node starts any more, p99 of ${sizes.directiveRuns}`, measured: directives?.pauseP99Ms ?? null, unit: 'ms', goal: atMost(50), note: directives ? `p50 ${directives.pauseP50Ms.toFixed(1)} ms` : undefined, profile: measuredDirectives?.profile },
      { key: 'directives.cancelP99Ms', label: `/cancel of a run with a call in flight until it is cancelled, p99 of ${sizes.directiveRuns}`, measured: directives?.cancelP99Ms ?? null, unit: 'ms', goal: atMost(100), note: directives ? `p50 ${directives.cancelP50Ms.toFixed(1)} ms` : undefined },
      { key: 'http.bytesPerRun', label: 'DATA_DIR bytes per completed single-step run', measured: triggers?.bytesPerRun ?? null, unit: 'bytes', goal: atMost(2_048) },
    ];
  } finally {
    written(await service.dataDirBytes());
  }
}
