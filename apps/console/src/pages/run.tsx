/**
 * One run, live (issue #19 item 3): header, controls, lineage, gates, node runs, input and output,
 * and the event timeline. The run's Server-Sent Events stream drives every update: each new event
 * is appended to the timeline and the run detail is fetched again (no timers, no polling).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { API, api, runPath } from '../api.ts';
import { useRunEvents, type RunEvent } from '../live.ts';
import { href } from '../router.ts';
import { ErrorBox, Json, PageTitle, Status, formatTime } from '../ui.tsx';
import { RunControls } from './run/controls.tsx';
import { Lineage } from './run/lineage.tsx';
import { NodeRuns } from './run/node-runs.tsx';
import { Requirements } from './run/requirements.tsx';
import { RunStateText } from './run/run-state.tsx';
import { MAX_SHOWN_EVENTS, Timeline, loadEvents, mergeEvents } from './run/timeline.tsx';
import { actorName, hasEnded, type Pagination, type RunDetail, type RunSummary } from './run/types.ts';
import './runs.css';
import './run.css';

/** What the page loads about the run: its detail (with workflowName) and its children. */
interface RunData {
  run: RunDetail;
  children: RunSummary[];
  childTotal: number;
}

/** Fetches the run detail and its first page of children. */
async function loadRun(runId: string): Promise<RunData> {
  const run = await api<RunDetail>('GET', `${API}/runs/${encodeURIComponent(runId)}`);
  const children = await api<{ runs: RunSummary[]; pagination: Pagination }>('GET', runPath(run.workflowDefinitionId, run.id, '/children?perPage=50&includeNodeRuns=false')).catch(
    () => ({ runs: [], pagination: { total: 0 } as Pagination }),
  );
  return { run, children: children.runs, childTotal: children.pagination.total };
}

/**
 * The run's data with a `refresh()` that coalesces: while a fetch runs, further calls ask for one
 * more fetch after it, so a burst of events costs at most two requests.
 */
function useRunData(runId: string): { data: RunData | undefined; error: unknown; refresh: () => void } {
  const [data, setData] = useState<RunData | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const state = useRef({ inFlight: false, again: false, alive: true });
  const refresh = useCallback(() => {
    const s = state.current;
    if (s.inFlight) {
      s.again = true;
      return;
    }
    s.inFlight = true;
    loadRun(runId).then(
      (value) => {
        if (s.alive) {
          setData(value);
          setError(null);
        }
      },
      (failure: unknown) => s.alive && setError(failure),
    ).finally(() => {
      s.inFlight = false;
      if (s.again && s.alive) {
        s.again = false;
        refresh();
      }
    });
  }, [runId]);
  useEffect(() => {
    state.current.alive = true;
    refresh();
    return () => {
      state.current.alive = false;
    };
  }, [refresh]);
  return { data, error, refresh };
}

/** The events of the run: listed once the workflow is known, then merged with the live ones. */
function useRunTimeline(workflowId: string | null, runId: string, onNew: () => void): { events: RunEvent[]; error: unknown } {
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [error, setError] = useState<unknown>(null);
  // The stream starts after the last event listed (null until listed): no history twice.
  const [listedUpTo, setListedUpTo] = useState<number | null>(null);
  const lastSeq = useRef(0);
  useEffect(() => {
    if (workflowId === null) return;
    let alive = true;
    loadEvents(workflowId, runId).then(
      ({ events: listed }) => {
        if (!alive) return;
        const last = listed.length === 0 ? 0 : listed[listed.length - 1]!.seq;
        lastSeq.current = Math.max(lastSeq.current, last);
        setEvents((current) => mergeEvents(current, listed));
        setListedUpTo(last);
      },
      (failure: unknown) => {
        if (!alive) return;
        setError(failure);
        setListedUpTo(0);
      },
    );
    return () => {
      alive = false;
    };
  }, [workflowId, runId]);
  useRunEvents(
    workflowId,
    runId,
    (event) => {
      if (event.seq <= lastSeq.current) return;
      lastSeq.current = event.seq;
      setEvents((current) => mergeEvents(current, [event]));
      onNew();
    },
    { afterSeq: listedUpTo },
  );
  return { events, error };
}

/** The facts of the run: workflow, status, state, who and when, errors, cancel. */
function RunHeader({ run }: { run: RunDetail }) {
  return (
    <section class="panel run-header" aria-labelledby="run-summary-title">
      <h2 id="run-summary-title" class="visually-hidden">
        Summary
      </h2>
      <dl class="facts">
        <dt>Workflow</dt>
        <dd>
          <a href={href(['workflows', run.workflowDefinitionId], { run: run.id })}>{run.workflowName ?? run.definitionSnapshot?.name ?? run.workflowDefinitionId}</a>
        </dd>
        <dt>Status</dt>
        <dd aria-live="polite" aria-atomic="true">
          <Status status={run.status} />
          {run.pendingDirective && <span class="muted"> ({run.pendingDirective} requested, not yet honoured)</span>}
        </dd>
        <dt>Run state</dt>
        <dd aria-live="polite" aria-atomic="true">
          <RunStateText runState={run.runState} />
        </dd>
        <dt>Trigger</dt>
        <dd>
          {run.triggerSource} by {actorName(run.triggeredBy)}
        </dd>
        <dt>Started</dt>
        <dd>{formatTime(run.startedAt)}</dd>
        <dt>Finished</dt>
        <dd>{formatTime(run.finishedAt)}</dd>
        {run.errorSummary && (
          <>
            <dt>Error</dt>
            <dd class="run-error">{run.errorSummary}</dd>
          </>
        )}
        {(run.cancelReason || run.cancelledBy) && (
          <>
            <dt>Cancelled</dt>
            <dd>
              by {actorName(run.cancelledBy)}
              {run.cancelReason && <>: “{run.cancelReason}”</>}
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}

/** `#/runs/<id>` */
export function RunPage({ runId }: { runId: string }) {
  const { data, error, refresh } = useRunData(runId);
  const run = data?.run;
  const timeline = useRunTimeline(run?.workflowDefinitionId ?? null, runId, refresh);
  return (
    <>
      <PageTitle>{`Run ${runId}`}</PageTitle>
      <ErrorBox error={error} />
      {run === undefined && !error && <p class="muted">Loading the run…</p>}
      {run && (
        <div class="run-page">
          <RunHeader run={run} />
          <RunControls key={run.status} run={run} />
          <Lineage parentRunId={run.parentRunId} children={data?.children} childTotal={data?.childTotal ?? 0} />
          <Requirements requirements={run.requirements ?? []} runId={run.id} decidable={!hasEnded(run.status)} />
          <NodeRuns workflowId={run.workflowDefinitionId} runId={run.id} nodeRuns={run.nodeRuns} total={run.nodeRunCount} />
          <section class="panel" aria-labelledby="run-io-title">
            <h2 id="run-io-title">Input and output</h2>
            <Json label="Initial input" value={run.initialInput} />
            <Json label="Final output" value={run.finalOutput} />
          </section>
          <section class="panel" aria-labelledby="run-events-title">
            <h2 id="run-events-title">Event timeline</h2>
            {/* Not a live region: the status above announces what matters, a count of events would not stop talking. */}
            <p class="muted">
              {timeline.events.length >= MAX_SHOWN_EVENTS ? `The newest ${MAX_SHOWN_EVENTS} events` : `${timeline.events.length} events`}
              {hasEnded(run.status) ? '' : ', following live'}
            </p>
            <ErrorBox error={timeline.error} />
            <Timeline events={timeline.events} />
          </section>
        </div>
      )}
    </>
  );
}
