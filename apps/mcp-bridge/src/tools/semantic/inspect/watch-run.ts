import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { id } from '../../shared.ts';
import { MIN_INTERVAL_MS, WatchResultSchema, watchRun } from '../../watch.ts';

export const watchRunTool = defineTool({
  name: 'watch_run',
  title: 'Watch a run',
  description:
    'Waits for a run to end: polls it every `intervalMs` (at least 200, default 1000) until it is completed, failed or cancelled, or ' +
    'until `timeoutMs` (default 30000, at most 600000) has passed. Returns `reachedTerminal`, `timedOut`, `finalRun` (the run summary ' +
    'with its runState) and `changes` (every status/runState change seen, oldest first). A run held at a human gate does not end by ' +
    'itself: when `timedOut` is true and finalRun.runState.state is waiting-approval, call explain_run or list_pending_approvals ' +
    'instead of watching again.',
  kind: 'read',
  input: z.object({
    runId: id('Run id'),
    intervalMs: z.number().int().min(MIN_INTERVAL_MS).max(60_000).optional().describe(`Poll interval, ms (default 1000, at least ${MIN_INTERVAL_MS})`),
    timeoutMs: z.number().int().min(0).max(600_000).optional().describe('How long to wait at most, ms (default 30000)'),
  }),
  output: WatchResultSchema,
  async run(args, context) {
    const { last: _last, ...result } = await watchRun(context, args.runId, { intervalMs: args.intervalMs ?? 1000, timeoutMs: args.timeoutMs ?? 30_000 });
    return result;
  },
});
