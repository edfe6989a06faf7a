/**
 * Following a run until it ends or a time budget runs out (watch_run, run_workflow's
 * waitForTerminal, the orchestrator's run_workflow): polls the run and its event log; each poll
 * that sees a new status or runState is recorded as a state change.
 */
import * as z from 'zod/v4';
import type { ToolContext } from '../tool.ts';
import { RunSummarySchema, TERMINAL_STATUSES, getRun, toRunSummary, type RestRun } from './shared.ts';

/** Smallest polling interval, ms. */
export const MIN_INTERVAL_MS = 200;

export const StateChangeSchema = z.object({
  observedAtMs: z.number().int(),
  status: z.string(),
  state: z.string(),
  blocked: z.record(z.string(), z.unknown()).optional(),
});

export const WatchResultSchema = z.object({
  runId: z.string(),
  intervalMs: z.number().int(),
  pollCount: z.number().int(),
  reachedTerminal: z.boolean(),
  timedOut: z.boolean(),
  finalRun: RunSummarySchema,
  changes: z.array(StateChangeSchema).describe('Every status/runState change seen, oldest first'),
});
export type WatchResult = z.infer<typeof WatchResultSchema>;

/** Polls `runId` every `intervalMs` (>= 200) until it ends or `timeoutMs` passed. Returns the last REST run too. */
export async function watchRun(
  context: ToolContext,
  runId: string,
  options: { intervalMs: number; timeoutMs: number; until?: (run: RestRun) => boolean },
): Promise<WatchResult & { last: RestRun }> {
  const intervalMs = Math.max(MIN_INTERVAL_MS, options.intervalMs);
  const deadline = context.now() + options.timeoutMs;
  const changes: WatchResult['changes'] = [];
  let pollCount = 0;
  let last: RestRun;
  for (;;) {
    last = await getRun(context.api, runId);
    pollCount += 1;
    const previous = changes.at(-1);
    if (!previous || previous.status !== last.status || previous.state !== last.runState.state) {
      changes.push({ observedAtMs: context.now(), status: last.status, state: last.runState.state, ...(last.runState.blocked ? { blocked: last.runState.blocked } : {}) });
    }
    const done = TERMINAL_STATUSES.includes(last.status) || (options.until?.(last) ?? false);
    if (done || context.now() >= deadline || context.signal.aborted) {
      return { runId, intervalMs, pollCount, reachedTerminal: TERMINAL_STATUSES.includes(last.status), timedOut: !done, finalRun: toRunSummary(last), changes, last };
    }
    await context.sleep(Math.min(intervalMs, Math.max(0, deadline - context.now())), context.signal);
  }
}
