/**
 * Run events written outside an execution — a decision, a directive, a human request — after
 * the change they report is stored: best effort, in order, and a failed write is logged, never
 * thrown (what the event reports already happened).
 */
import type { RunRecord, TypedRunEvent } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import type { Logger } from './logger.ts';

/** Appends `events` to `run`'s log in order; stops at and logs the first write that fails. */
export async function appendReported(
  deps: { repos: Repositories; logger?: Logger },
  run: Pick<RunRecord, 'id' | 'workflowDefinitionId'>,
  events: readonly TypedRunEvent[],
  now: Date,
): Promise<void> {
  for (const event of events) {
    try {
      await deps.repos.events.append({ runId: run.id, workflowDefinitionId: run.workflowDefinitionId, ...event }, now);
    } catch (error) {
      deps.logger?.warn({ err: error, runId: run.id, type: event.type }, 'run event not written');
      return;
    }
  }
}
