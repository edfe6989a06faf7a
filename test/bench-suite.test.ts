/**
 * `npm run bench -- --quick` in CI (issue 10 item 6): the suite still measures every figure of the
 * performance table in one process. It asserts no speed (figures of a shared CI machine are noise);
 * only that every workload ran and that the /approve race had exactly one winner per gate.
 */
import { describe, expect, it } from 'vitest';
import { runSuite } from '../bench/suite/run-suite.ts';

describe('benchmark suite, quick', () => {
  it('measures every figure of the table in one process', async () => {
    const report = await runSuite({ quick: true });
    expect(report.errors).toEqual([]);
    expect(report.figures.map((f) => f.key)).toEqual([
      'chain.nodeRunsPerSecond', 'longChain.rateRatio', 'loop.nodeRunsPerSecond', 'loop.peakRssMb',
      'loop.megabytesWritten', 'parallel.nodeRunsPerSecond', 'cel.worstEvaluationMs', 'http.runsPerSecond', 'http.detailRatio',
      'approve.p99Ms', 'approve.gatesWithOneWinner', 'directives.pauseP99Ms', 'directives.cancelP99Ms', 'http.bytesPerRun', 'reads.peakRssGrowthMb', 'process.peakRssMb',
    ]);
    for (const f of report.figures) expect(f.measured, f.key).toEqual(expect.any(Number));
    expect(report.figures.find((f) => f.key === 'approve.gatesWithOneWinner')!.measured).toBe(1);
    expect(report.dataDirBytes).toBeGreaterThan(0);
  }, 120_000);
});
