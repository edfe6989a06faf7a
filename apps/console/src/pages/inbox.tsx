/**
 * The approvals inbox (`#/inbox`, issue #19 item 4): the undecided gates and human requests the
 * caller may decide (`?mine=true`, a toggle shows every gate it may see), oldest first, each with
 * the decision UI it calls for. Refreshes when an event arrives on any shown run's stream and when
 * the tab regains focus; a gate decided elsewhere first says who decided it and how.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { API, api } from '../api.ts';
import { href, navigate, useRoute } from '../router.ts';
import { ErrorBox, PageTitle, Pager, useAsync, useThrottled } from '../ui.tsx';
import { DecidedNotice, type Notice } from './inbox/decided-notice.tsx';
import type { DecisionCallbacks } from './inbox/decision.ts';
import { GateCard } from './inbox/gate-card.tsx';
import { RunWatchers, useFocusRefresh } from './inbox/run-watchers.tsx';
import type { ApprovalsPage } from './inbox/types.ts';
import './inbox.css';

/** Most notices kept on screen. */
const MAX_NOTICES = 5;

/** `#/inbox?all=1&page=N` */
export function InboxPage() {
  const { query } = useRoute();
  const mine = query.get('all') !== '1';
  const page = Math.max(1, Number(query.get('page')) || 1);
  const inbox = useAsync(() => api<ApprovalsPage>('GET', `${API}/approvals?mine=${mine}&page=${page}`), [mine, page]);
  const [notices, setNotices] = useState<Notice[]>([]);

  // Refresh on demand, coalescing a burst (a stream replaying a run's history) into one more load.
  const dirty = useRef(false);
  const refresh = () => {
    if (inbox.loading) dirty.current = true;
    else inbox.reload();
  };
  useEffect(() => {
    if (!inbox.loading && dirty.current) {
      dirty.current = false;
      inbox.reload();
    }
  }, [inbox.loading]);
  useFocusRefresh(refresh);
  // Events come in bursts (a stream replays its run's history when it opens): one refresh a second at most.
  const onEvent = useThrottled(refresh, 1_000);

  const addNotice = (notice: Notice) => setNotices((current) => [notice, ...current.filter((n) => n.key !== notice.key)].slice(0, MAX_NOTICES));
  const callbacks: DecisionCallbacks = {
    onDecided: (row, body) => {
      addNotice({ key: `${row.runId}/${row.requirement.stepId}`, row, kind: 'decided', body });
      refresh();
    },
    onConflict: (row, decided) => {
      addNotice({ key: `${row.runId}/${row.requirement.stepId}`, row, kind: 'conflict', decided });
      refresh();
    },
  };
  const go = (next: { all?: boolean; page?: number }) => navigate(href(['inbox'], { all: (next.all ?? !mine) ? '1' : undefined, page: next.page && next.page > 1 ? String(next.page) : undefined }));

  const rows = inbox.value?.approvals ?? [];
  const total = inbox.value?.pagination.total ?? 0;
  return (
    <>
      <PageTitle>Approvals</PageTitle>
      <div class="filters inbox-filters">
        <label class="field-check" for="inbox-mine">
          <input id="inbox-mine" type="checkbox" checked={mine} onChange={(event) => go({ all: !(event.target as HTMLInputElement).checked, page: 1 })} /> Only gates I may decide
        </label>
        <button type="button" onClick={() => inbox.reload()} disabled={inbox.loading}>
          Refresh
        </button>
      </div>
      <div class="notices" role="status" aria-live="polite">
        {notices.map((notice) => (
          <DecidedNotice key={notice.key} notice={notice} onDismiss={() => setNotices((current) => current.filter((n) => n !== notice))} />
        ))}
      </div>
      <ErrorBox error={inbox.error} />
      <p class="inbox-count" aria-live="polite">
        {inbox.value === undefined ? (inbox.error ? '' : 'Loading…') : total === 0 ? (mine ? 'Nothing waits for you.' : 'No gate waits.') : `${total} ${total === 1 ? 'gate waits' : 'gates wait'}${mine ? ' for you' : ''}, oldest first.`}
      </p>
      <RunWatchers runs={rows} onEvent={onEvent} />
      <div class="gate-list">
        {rows.map((row) => (
          <GateCard key={`${row.runId}/${row.requirement.stepId}`} row={row} callbacks={callbacks} />
        ))}
      </div>
      {inbox.value && inbox.value.pagination.totalPages > 1 && <Pager pagination={inbox.value.pagination} onPage={(next) => go({ page: next })} />}
    </>
  );
}
