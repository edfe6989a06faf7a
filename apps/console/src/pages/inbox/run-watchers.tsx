/** Live refresh of the inbox: the event streams of the runs shown, and the tab regaining focus. */
import { useEffect, useRef } from 'preact/hooks';
import { useRunEvents } from '../../live.ts';

/**
 * Most runs followed at once. A browser opens at most 6 HTTP/1.1 connections to one origin, for
 * all its tabs together, and every event stream holds one open; following more would leave API
 * calls (a decision, the inbox's own refetch) of this or another tab waiting for a connection.
 * Hidden tabs close their streams (live.ts). The other rows refresh with these and on focus.
 */
export const MAX_WATCHED_RUNS = 2;

/** Follows one run's events, calling `onEvent` for each; renders nothing. */
function RunWatcher({ workflowId, runId, onEvent }: { workflowId: string; runId: string; onEvent: () => void }) {
  useRunEvents(workflowId, runId, onEvent);
  return null;
}

/** Follows the first {@link MAX_WATCHED_RUNS} distinct runs of `runs`; `onEvent` on any event of any. */
export function RunWatchers({ runs, onEvent }: { runs: { workflowId: string; runId: string }[]; onEvent: () => void }) {
  const seen = new Set<string>();
  const distinct = runs.filter((run) => !seen.has(run.runId) && seen.add(run.runId)).slice(0, MAX_WATCHED_RUNS);
  return (
    <>
      {distinct.map((run) => (
        <RunWatcher key={run.runId} workflowId={run.workflowId} runId={run.runId} onEvent={onEvent} />
      ))}
    </>
  );
}

/** Calls `onFocus` whenever the tab becomes visible again or the window regains focus. */
export function useFocusRefresh(onFocus: () => void): void {
  const handler = useRef(onFocus);
  handler.current = onFocus;
  useEffect(() => {
    const focus = () => handler.current();
    const visible = () => {
      if (document.visibilityState === 'visible') handler.current();
    };
    addEventListener('focus', focus);
    document.addEventListener('visibilitychange', visible);
    return () => {
      removeEventListener('focus', focus);
      document.removeEventListener('visibilitychange', visible);
    };
  }, []);
}
