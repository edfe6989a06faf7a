/** The run list across workflows (issue #19 item 3): filters by status and trigger source, kept in the hash query. */
import { useEffect, useState } from 'preact/hooks';
import { API, api } from '../api.ts';
import { href, navigate, useRoute } from '../router.ts';
import { ErrorBox, PageTitle, Pager, Status, formatTime, useAsync } from '../ui.tsx';
import { RunStateText } from './run/run-state.tsx';
import { RUN_STATUSES, actorName, type Pagination, type RunSummary } from './run/types.ts';
import './runs.css';

/** The filters of the list, as the hash query holds them. */
interface RunFilters {
  status: string;
  triggerSource: string;
  page: number;
}

/** Goes to the run list with `filters` (empty ones left out of the hash). */
function showFilters(filters: RunFilters): void {
  navigate(href(['runs'], { status: filters.status, triggerSource: filters.triggerSource, page: filters.page > 1 ? String(filters.page) : undefined }));
}

/** The filter form: status applies at once, trigger source on submit. */
function RunFilterForm({ filters }: { filters: RunFilters }) {
  const [source, setSource] = useState(filters.triggerSource);
  useEffect(() => setSource(filters.triggerSource), [filters.triggerSource]);
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter runs"
      onSubmit={(event) => {
        event.preventDefault();
        showFilters({ ...filters, triggerSource: source.trim(), page: 1 });
      }}
    >
      <div class="field">
        <label for="runs-status">Status</label>
        <select id="runs-status" value={filters.status} onChange={(event) => showFilters({ ...filters, status: (event.target as HTMLSelectElement).value, page: 1 })}>
          <option value="">any</option>
          {RUN_STATUSES.map((status) => (
            <option key={status} value={status}>
              {status.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="runs-trigger-source">Trigger source</label>
        <input id="runs-trigger-source" type="text" value={source} onInput={(event) => setSource((event.target as HTMLInputElement).value)} />
      </div>
      <button type="submit">Apply filters</button>
      {(filters.status || filters.triggerSource) && (
        <a class="clear-filters" href={href(['runs'])}>
          Clear filters
        </a>
      )}
    </form>
  );
}

/** One row of the run table. */
function RunRow({ run }: { run: RunSummary }) {
  return (
    <tr>
      <td data-label="Run">
        <a class="mono" href={href(['runs', run.id])}>
          {run.id}
        </a>
      </td>
      <td data-label="Workflow">
        <a href={href(['workflows', run.workflowDefinitionId], { run: run.id })}>{run.workflowName ?? run.workflowDefinitionId}</a>
      </td>
      <td data-label="Status">
        <Status status={run.status} />
      </td>
      <td data-label="Run state">
        <RunStateText runState={run.runState} />
      </td>
      <td data-label="Trigger source">{run.triggerSource}</td>
      <td data-label="Triggered by">{actorName(run.triggeredBy)}</td>
      <td data-label="Started">{formatTime(run.startedAt)}</td>
      <td data-label="Finished">{formatTime(run.finishedAt)}</td>
    </tr>
  );
}

/** The run table with its headers. */
export function RunTable({ runs, caption }: { runs: RunSummary[]; caption: string }) {
  return (
    <div class="table-wrap">
      <table class="runs-table stack-table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Run state</th>
            <th scope="col">Trigger source</th>
            <th scope="col">Triggered by</th>
            <th scope="col">Started</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <RunRow key={run.id} run={run} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `#/runs`: every run the caller may see, newest first. */
export function RunsPage() {
  const route = useRoute();
  const filters: RunFilters = {
    status: route.query.get('status') ?? '',
    triggerSource: route.query.get('triggerSource') ?? '',
    page: Math.max(1, Number(route.query.get('page')) || 1),
  };
  const query = new URLSearchParams({ includeNodeRuns: 'false', page: String(filters.page) });
  if (filters.status) query.set('status', filters.status);
  if (filters.triggerSource) query.set('triggerSource', filters.triggerSource);
  const list = useAsync(() => api<{ runs: RunSummary[]; pagination: Pagination }>('GET', `${API}/runs?${query}`), [query.toString()]);
  return (
    <>
      <PageTitle
        actions={
          <button type="button" onClick={list.reload} disabled={list.loading}>
            Refresh
          </button>
        }
      >
        Runs
      </PageTitle>
      <RunFilterForm filters={filters} />
      <ErrorBox error={list.error} />
      {list.value === undefined && list.loading && <p class="muted">Loading runs…</p>}
      {list.value && (
        <>
          {list.value.runs.length === 0 ? <p class="muted">No runs match.</p> : <RunTable runs={list.value.runs} caption="Runs, newest first" />}
          <Pager pagination={list.value.pagination} onPage={(page) => showFilters({ ...filters, page })} />
        </>
      )}
    </>
  );
}
