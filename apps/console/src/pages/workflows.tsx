/** The workflow list (issue #19 item 1): search and filters, last run, enable/disable, trigger. */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { API, api, workflowPath } from '../api.ts';
import { href } from '../router.ts';
import { ErrorBox, Pager, PageTitle, Status, formatTime, useAsync } from '../ui.tsx';
import { TriggerForm } from './workflow/trigger-form.tsx';
import type { Pagination, RunSummary, WorkflowSummary } from './workflow/types.ts';
import './workflows.css';

/** The list's filters, as the API takes them. */
interface Filters {
  query: string;
  tag: string;
  enabled: '' | 'true' | 'false';
}

/** `value`, changing only once it has stayed the same for `ms` (typing in a search box). */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** The filter form: "Search" (name, description), "Tag" (exact) and "Enabled". */
function FilterBar({ filters, onChange }: { filters: Filters; onChange: (filters: Filters) => void }) {
  return (
    <form class="filters" role="search" onSubmit={(event) => event.preventDefault()}>
      <div class="field">
        <label for="wf-search">Search</label>
        <input id="wf-search" type="search" value={filters.query} onInput={(event) => onChange({ ...filters, query: (event.target as HTMLInputElement).value })} />
      </div>
      <div class="field">
        <label for="wf-tag">Tag</label>
        <input id="wf-tag" type="text" value={filters.tag} onInput={(event) => onChange({ ...filters, tag: (event.target as HTMLInputElement).value })} />
      </div>
      <div class="field">
        <label for="wf-enabled">Enabled</label>
        <select id="wf-enabled" value={filters.enabled} onChange={(event) => onChange({ ...filters, enabled: (event.target as HTMLSelectElement).value as Filters['enabled'] })}>
          <option value="">All</option>
          <option value="true">Enabled</option>
          <option value="false">Disabled</option>
        </select>
      </div>
    </form>
  );
}

/** The status of a workflow's newest run (one small request per listed row), linked to the run. */
function LastRun({ workflowId }: { workflowId: string }) {
  const runs = useAsync(() => api<{ runs: RunSummary[] }>('GET', `${API}/runs?${new URLSearchParams({ workflowId, perPage: '1', includeNodeRuns: 'false' })}`), [workflowId]);
  if (runs.error) return <span class="muted">unavailable</span>;
  if (runs.value === undefined) return <span class="muted">…</span>;
  const last = runs.value.runs[0];
  if (!last) return <span class="muted">never run</span>;
  return (
    <a href={href(['runs', last.id])} title={`Started ${formatTime(last.startedAt)}`}>
      <Status status={last.status} />
    </a>
  );
}

/** The "Enable"/"Disable" button of a row: POST …/toggle, then `onDone(message)` (or the error). */
function ToggleButton({ workflow, onDone }: { workflow: WorkflowSummary; onDone: (message: string | null, error: unknown) => void }) {
  const [busy, setBusy] = useState(false);
  const label = workflow.enabled ? 'Disable' : 'Enable';
  return (
    <button
      type="button"
      disabled={busy}
      aria-label={`${label} ${workflow.name}`}
      onClick={async () => {
        setBusy(true);
        try {
          await api('POST', workflowPath(workflow.id, '/toggle'), { enabled: !workflow.enabled });
          onDone(`${workflow.name} ${workflow.enabled ? 'disabled' : 'enabled'}.`, null);
        } catch (error) {
          onDone(null, error);
        } finally {
          setBusy(false);
        }
      }}
    >
      {label}
    </button>
  );
}

/** One workflow row, and below it the trigger form when "Run" is open. */
function WorkflowRow({ workflow, triggering, onTrigger, onToggled }: { workflow: WorkflowSummary; triggering: boolean; onTrigger: (open: boolean) => void; onToggled: (message: string | null, error: unknown) => void }) {
  return (
    <Fragment>
      <tr>
        <td data-label="Name">
          <a href={href(['workflows', workflow.id])}>{workflow.name}</a>
        </td>
        <td data-label="Description">{workflow.description ?? <span class="muted">—</span>}</td>
        <td data-label="Tags">
          {workflow.tags.length === 0 ? (
            <span class="muted">—</span>
          ) : (
            <ul class="tags">
              {workflow.tags.map((tag) => (
                <li key={tag}>{tag}</li>
              ))}
            </ul>
          )}
        </td>
        <td data-label="Nodes" class="num">{workflow.numNodes}</td>
        <td data-label="Enabled">{workflow.enabled ? 'yes' : 'no'}</td>
        <td data-label="Last run">
          <LastRun workflowId={workflow.id} />
        </td>
        <td data-label="Running" class="num">{workflow.runningCount ?? '—'}</td>
        <td data-label="Actions">
          <div class="row-actions">
          <ToggleButton workflow={workflow} onDone={onToggled} />
          <button type="button" aria-expanded={triggering} aria-label={`Run ${workflow.name}`} disabled={!workflow.enabled} title={workflow.enabled ? undefined : 'Enable the workflow to run it'} onClick={() => onTrigger(!triggering)}>
            Run
          </button>
          </div>
        </td>
      </tr>
      {triggering && (
        <tr class="trigger-row">
          <td colSpan={8}>
            <TriggerForm workflowId={workflow.id} workflowName={workflow.name} onClose={() => onTrigger(false)} />
          </td>
        </tr>
      )}
    </Fragment>
  );
}

/** `#/workflows` */
export function WorkflowsPage() {
  const [filters, setFilters] = useState<Filters>({ query: '', tag: '', enabled: '' });
  const settled = useDebounced(filters, 300);
  const [page, setPage] = useState(1);
  const [triggering, setTriggering] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [actionError, setActionError] = useState<unknown>(null);
  useEffect(() => setPage(1), [settled.query, settled.tag, settled.enabled]);
  const list = useAsync(() => {
    const query = new URLSearchParams({ includeRunning: 'true', page: String(page), perPage: '20' });
    if (settled.query.trim()) query.set('query', settled.query.trim());
    if (settled.tag.trim()) query.set('tag', settled.tag.trim());
    if (settled.enabled) query.set('enabled', settled.enabled);
    return api<{ workflows: WorkflowSummary[]; pagination: Pagination }>('GET', `${API}/workflows?${query}`);
  }, [settled.query, settled.tag, settled.enabled, page]);
  const onToggled = (message: string | null, error: unknown) => {
    setActionError(error);
    setNotice(message ?? '');
    if (message) list.reload();
  };
  return (
    <>
      <PageTitle>Workflows</PageTitle>
      <FilterBar filters={filters} onChange={setFilters} />
      <p class="visually-hidden" aria-live="polite">
        {notice}
      </p>
      <ErrorBox error={actionError} />
      <ErrorBox error={list.error} />
      {list.value === undefined && !list.error && <p class="muted">Loading…</p>}
      {list.value && list.value.workflows.length === 0 && <p>No workflow matches.</p>}
      {list.value && list.value.workflows.length > 0 && (
        <div class="table-wrap">
          <table class="workflows-table">
            <caption class="visually-hidden">Workflows</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Tags</th>
                <th scope="col">Nodes</th>
                <th scope="col">Enabled</th>
                <th scope="col">Last run</th>
                <th scope="col">Running</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.value.workflows.map((workflow) => (
                <WorkflowRow
                  key={workflow.id}
                  workflow={workflow}
                  triggering={triggering === workflow.id}
                  onTrigger={(open) => setTriggering(open ? workflow.id : null)}
                  onToggled={onToggled}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.value && <Pager pagination={list.value.pagination} onPage={setPage} />}
    </>
  );
}
