/** A run's derived state (`runState`) told in words. */
import { Status, formatTime } from '../../ui.tsx';
import type { RunStateView } from './types.ts';

/** What holds the run up, in words; null when nothing does. */
export function blockedText(runState: RunStateView): string | null {
  const blocked = runState.blocked;
  if (!blocked) return null;
  if (blocked.kind === 'approval') return `waiting for approval at ${blocked.nodeId}`;
  return `waiting for retry until ${formatTime(blocked.wakeAt)}`;
}

/** The runState badge, with what blocks it and whether its engine looks stale. */
export function RunStateText({ runState }: { runState: RunStateView }) {
  const blocked = blockedText(runState);
  return (
    <span class="run-state">
      <Status status={runState.state} />
      {blocked && <span class="run-state-detail">{blocked}</span>}
      {runState.unhealthy && <span class="run-state-detail">engine heartbeat stale since {formatTime(runState.unhealthy.lastHeartbeatAt)}</span>}
    </span>
  );
}
