/**
 * The per-call time limit of the step runner (issue 9 item 4) on executors other than `http`
 * (those are in `http-steps.test.ts`): a hanging call fails its attempt with a retryable
 * `executor "<key>" timed out after N s`, retried per the step's policy, also when the executor
 * ignores its signal. The limit runs on the engine's clock: a manual one here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkflowNodeInput } from '@switchyard/domain';
import { openHarness, type Harness } from './testing/harness.ts';
import { ManualClock } from './testing/manual-clock.ts';
import type { Executor } from './executors/types.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Resolves once `check` holds (it is polled between I/O turns; a bound, not a margin). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** An executor that never settles and ignores its signal. */
const stubborn: Executor = { kind: 'test', key: 'stubborn', timeoutMs: 60_000, invoke: () => new Promise(() => {}) };

async function open(clock: ManualClock): Promise<Harness> {
  h = await openHarness({ clock }, { doubles: { stubborn } });
  return h;
}

async function runOf(harness: Harness, node: WorkflowNodeInput): Promise<string> {
  const wf = await harness.createWorkflow([node]);
  const run = await harness.createRun(wf.id);
  harness.engine.start(run.id);
  return run.id;
}

describe('step time limits', () => {
  it('fails a hanging builtin sleep after stepConfig.timeoutSeconds and retries it per the policy', async () => {
    const clock = new ManualClock(Date.now());
    const harness = await open(clock);
    const runId = await runOf(harness, {
      name: 'Hang',
      nodeType: 'step',
      executorKey: 'sleep',
      config: { ms: 3_600_000 },
      stepConfig: { timeoutSeconds: 1, maxRetries: 1, backoffBaseSeconds: 2 },
    });
    await until(() => harness.executors.count('sleep') === 1, 'the first call');
    await clock.advance(999);
    expect((await harness.repos.nodeRuns.listByRun(runId))[0]).toMatchObject({ status: 'running', attempt: 1 });
    await clock.advance(1);
    await clock.untilSleepers(1); // the backoff: 1 s (half of 2 s; harness random() is 0)
    await clock.advance(1_000);
    await until(() => harness.executors.count('sleep') === 2, 'the retry');
    await clock.advance(1_000);
    await harness.engine.idle();

    const run = (await harness.repos.runs.get(runId))!;
    expect(run.status).toBe('failed');
    expect(run.errorSummary).toBe(`Node 'Hang' failed: executor "sleep" timed out after 1 s`);
    expect((await harness.repos.nodeRuns.listByRun(runId))[0]).toMatchObject({ status: 'failed', attempt: 2 });
    const retrying = (await harness.repos.events.listByRun(runId)).filter((e) => e.type === 'node.retrying');
    expect(retrying.map((e) => e.payload)).toMatchObject([{ attempt: 1, delayMs: 1_000, error: 'executor "sleep" timed out after 1 s' }]);
  });

  it("uses the executor's own limit without a step override (60 s for built-ins)", async () => {
    const clock = new ManualClock(Date.now());
    const harness = await open(clock);
    const runId = await runOf(harness, { name: 'Hang', nodeType: 'step', executorKey: 'sleep', config: { ms: 3_600_000 } });
    await until(() => harness.executors.count('sleep') === 1, 'the call');
    await clock.advance(59_999);
    expect((await harness.repos.runs.get(runId))!.status).toBe('running');
    await clock.advance(1);
    await harness.engine.idle();
    expect((await harness.repos.runs.get(runId))!.errorSummary).toBe(`Node 'Hang' failed: executor "sleep" timed out after 60 s`);
  });

  it('fails the attempt of an executor that ignores its signal all the same', async () => {
    const clock = new ManualClock(Date.now());
    const harness = await open(clock);
    const runId = await runOf(harness, { name: 'Stuck', nodeType: 'step', executorKey: 'stubborn', stepConfig: { timeoutSeconds: 5, onError: 'skip' } });
    await until(() => harness.executors.count('stubborn') === 1, 'the call');
    await clock.advance(5_000);
    await harness.engine.idle();
    const run = (await harness.repos.runs.get(runId))!;
    expect(run.status).toBe('completed');
    expect((await harness.repos.nodeRuns.listByRun(runId))[0]).toMatchObject({ status: 'skipped', error: 'executor "stubborn" timed out after 5 s' });
  });

  it('keeps stepConfig.timeoutSeconds on the saved definition (null when not set)', async () => {
    const harness = await open(new ManualClock(Date.now()));
    // Values outside 1..86400 never get here: the API's body schema answers 400 (test/http-executor.e2e.test.ts).
    const wf = await harness.createWorkflow([
      { name: 'A', nodeType: 'step', executorKey: 'echo', stepConfig: { timeoutSeconds: 30 } },
      { name: 'B', nodeType: 'step', executorKey: 'echo', stepConfig: { maxRetries: 1 } },
    ]);
    expect(wf.nodes.map((node) => node.stepConfig?.timeoutSeconds)).toEqual([30, null]);
  });
});
