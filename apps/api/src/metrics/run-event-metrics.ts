/**
 * The metrics fed by the run-event seam: a listener for `RunEvents.onAppend` (the one writer of
 * run events) that turns each event this process appends into metric updates. Nothing in the
 * engine calls the metrics; what they count is what the run event logs record.
 *
 * | event | metric |
 * | --- | --- |
 * | `run.started` | `switchyard_runs_started_total{workflow}` |
 * | `run.started` / `run.resumed` with `takenOverFrom` | `switchyard_lease_takeovers_total` |
 * | `run.completed` / `run.failed` / `run.cancelled` | `switchyard_runs_finished_total{workflow,status}` |
 * | `node.started` … `node.<end>` with `executorKey` | `switchyard_node_attempt_duration_seconds{executor_kind,outcome}` |
 * | `node.retrying` | `switchyard_node_retries_total{workflow}` |
 * | `requirement.decided` by `timeout` | `switchyard_sweeper_actions_total{kind="gate_timeout"}` |
 * | `run.timed_out` | `switchyard_sweeper_actions_total{kind="run_timeout"}` |
 */
import type { AppendedRunEvent, RunEventListener } from '@switchyard/store';
import type { Metrics } from './metrics.ts';

/** Attempts started and not yet ended that are remembered for their duration; the oldest is forgotten past this. */
export const MAX_OPEN_ATTEMPTS = 10_000;

/** The executor kind label of an unknown executor key (removed from the registry since). */
export const UNKNOWN_EXECUTOR_KIND = 'unknown';

/** Node events that end an attempt (the outcome label is the part after `node.`). */
const ATTEMPT_ENDS = new Set(['node.completed', 'node.failed', 'node.skipped', 'node.cancelled', 'node.awaiting_approval']);

/**
 * The listener that feeds `metrics` from run events. `kindOf` names the executor kind of a
 * registry key (the registry's `kindOf`). Durations are the difference of the events' timestamps
 * (the engine's clock), so an attempt answered within one event-loop turn (recorded in one write)
 * measures 0 s.
 */
export function runEventMetrics(metrics: Metrics, kindOf: (executorKey: string) => string | undefined): RunEventListener {
  /** When each open attempt started (epoch ms), by `nodeRunId#attempt`, oldest first. */
  const started = new Map<string, number>();
  return (event: AppendedRunEvent) => {
    const payload = event.payload;
    switch (event.type) {
      case 'run.started':
      case 'run.resumed':
        if (event.type === 'run.started') metrics.runsStarted.inc({ workflow: metrics.workflowLabel(event.workflowDefinitionId) });
        if (typeof payload['takenOverFrom'] === 'string') metrics.leaseTakeovers.inc();
        return;
      case 'run.completed':
      case 'run.failed':
      case 'run.cancelled':
        metrics.runsFinished.inc({ workflow: metrics.workflowLabel(event.workflowDefinitionId), status: event.type.slice('run.'.length) });
        return;
      case 'node.started': {
        const key = attemptKey(payload);
        if (key === null) return;
        started.delete(key);
        started.set(key, event.createdAt.getTime());
        if (started.size > MAX_OPEN_ATTEMPTS) started.delete(started.keys().next().value!);
        return;
      }
      case 'node.retrying':
        metrics.retries.inc({ workflow: metrics.workflowLabel(event.workflowDefinitionId) });
        return;
      case 'requirement.decided':
        if (payload['decidedBy'] === 'timeout') metrics.sweeperAction('gate_timeout');
        return;
      case 'run.timed_out':
        metrics.sweeperAction('run_timeout');
        return;
      default:
        if (!ATTEMPT_ENDS.has(event.type)) return;
    }
    const key = attemptKey(payload);
    const startedAt = key === null ? undefined : started.get(key);
    if (key === null || startedAt === undefined) return;
    started.delete(key);
    const executorKey = payload['executorKey'];
    if (typeof executorKey !== 'string') return;
    const seconds = Math.max(0, event.createdAt.getTime() - startedAt) / 1000;
    metrics.nodeDuration.observe({ executor_kind: kindOf(executorKey) ?? UNKNOWN_EXECUTOR_KIND, outcome: event.type.slice('node.'.length) }, seconds);
  };
}

/** `nodeRunId#attempt` of a node event, or null when the payload lacks them. */
function attemptKey(payload: Record<string, unknown>): string | null {
  const nodeRunId = payload['nodeRunId'];
  const attempt = payload['attempt'];
  return typeof nodeRunId === 'string' && typeof attempt === 'number' ? `${nodeRunId}#${attempt}` : null;
}
