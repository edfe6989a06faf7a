/**
 * One workflow (issue #19 item 2): its node tree drawn as a graph; with a run selected (`?run=`),
 * every node's status in that run, live from the run's event stream, and a side panel per node.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, runPath, workflowPath } from '../api.ts';
import { useRunEvents } from '../live.ts';
import { href, navigate } from '../router.ts';
import { ErrorBox, PageTitle, Status, formatTime, useAsync, useThrottled } from '../ui.tsx';
import { WorkflowGraph, type NodeState } from '../graph/graph.tsx';
import { allNodes } from '../graph/layout.ts';
import { NodePanel } from './workflow/node-panel.tsx';
import { TriggerForm } from './workflow/trigger-form.tsx';
import type { NodeRun, Pagination, RunDetail, RunSummary, WorkflowDetail } from './workflow/types.ts';
import './workflow.css';

/** Most pages of node runs read for one run (100 each). */
const MAX_NODE_RUN_PAGES = 10;

/** Every node run of a run, page by page, up to {@link MAX_NODE_RUN_PAGES} pages. */
async function loadNodeRuns(workflowId: string, runId: string): Promise<{ nodeRuns: NodeRun[]; truncated: boolean }> {
  const nodeRuns: NodeRun[] = [];
  for (let page = 1; page <= MAX_NODE_RUN_PAGES; page++) {
    const answer = await api<{ nodeRuns: NodeRun[]; pagination: Pagination }>('GET', runPath(workflowId, runId, `/nodes?page=${page}&perPage=100`));
    nodeRuns.push(...answer.nodeRuns);
    if (page >= answer.pagination.totalPages) return { nodeRuns, truncated: false };
  }
  return { nodeRuns, truncated: true };
}

/** Rank of a status when a node has several node runs: what is happening now wins. */
const STATUS_WEIGHT: Record<string, number> = { awaiting_approval: 6, running: 5, failed: 4, pending: 3, cancelled: 2, completed: 1, skipped: 0 };

/** What each node's box shows: the most pressing status of its node runs, the highest attempt. */
function nodeStates(nodeRuns: NodeRun[]): Map<string, NodeState> {
  const states = new Map<string, NodeState>();
  for (const nodeRun of nodeRuns) {
    const state = states.get(nodeRun.nodeId);
    if (!state) {
      states.set(nodeRun.nodeId, { status: nodeRun.status, attempt: nodeRun.attempt, count: 1 });
      continue;
    }
    state.count += 1;
    state.attempt = Math.max(state.attempt, nodeRun.attempt);
    if ((STATUS_WEIGHT[nodeRun.status] ?? 0) > (STATUS_WEIGHT[state.status] ?? 0)) state.status = nodeRun.status;
  }
  return states;
}

/** The "Run" select: the workflow's 20 newest runs (and the selected one, when older). */
function RunPicker({ workflowId, runId }: { workflowId: string; runId: string | null }) {
  const runs = useAsync(() => api<{ runs: RunSummary[] }>('GET', workflowPath(workflowId, '/runs?perPage=20&includeNodeRuns=false')), [workflowId, runId]);
  const list = runs.value?.runs ?? [];
  return (
    <div class="field run-picker">
      <label for="run-picker">Run</label>
      <select id="run-picker" value={runId ?? ''} onChange={(event) => navigate(href(['workflows', workflowId], { run: (event.target as HTMLSelectElement).value }))}>
        <option value="">No run (definition only)</option>
        {runId !== null && !list.some((run) => run.id === runId) && <option value={runId}>Run {runId}</option>}
        {list.map((run) => (
          <option key={run.id} value={run.id}>
            {`${formatTime(run.startedAt)} · ${run.status.replace(/_/g, ' ')} · ${run.id.slice(-6)}`}
          </option>
        ))}
      </select>
      {runs.error ? <ErrorBox error={runs.error} /> : null}
    </div>
  );
}


/** `#/workflows/<id>?run=<runId>` */
export function WorkflowPage({ workflowId, runId }: { workflowId: string; runId: string | null }) {
  const workflow = useAsync(() => api<WorkflowDetail>('GET', workflowPath(workflowId)), [workflowId]);
  const run = useAsync(() => (runId === null ? Promise.resolve(null) : api<RunDetail>('GET', runPath(workflowId, runId))), [workflowId, runId]);
  const nodeRuns = useAsync(() => (runId === null ? Promise.resolve({ nodeRuns: [], truncated: false }) : loadNodeRuns(workflowId, runId)), [workflowId, runId]);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [triggering, setTriggering] = useState(false);
  // At most one refetch a second however many events arrive (a stream replays the run's history first).
  const refresh = useThrottled(() => {
    nodeRuns.reload();
    run.reload();
  }, 1_000);
  useRunEvents(workflowId, runId, refresh);

  // The run's own definition when one is selected (it may be an older version), else the current one.
  const nodes = (runId !== null && run.value?.definitionSnapshot?.nodes) || workflow.value?.nodes || [];
  const states = useMemo(() => nodeStates(nodeRuns.value?.nodeRuns ?? []), [nodeRuns.value]);
  const selected = useMemo(() => allNodes(nodes).find((node) => node.id === selectedId) ?? null, [nodes, selectedId]);
  const name = workflow.value?.name ?? 'Workflow';
  const currentRun = run.value ?? null;

  return (
    <>
      <PageTitle
        actions={
          <>
            <button type="button" aria-expanded={triggering} onClick={() => setTriggering(!triggering)} disabled={workflow.value !== undefined && !workflow.value.enabled} title={workflow.value && !workflow.value.enabled ? 'Enable the workflow to run it' : undefined}>
              Trigger run
            </button>
            {runId !== null && <a href={href(['runs', runId])}>Open the run's page</a>}
          </>
        }
      >
        {name}
      </PageTitle>
      <ErrorBox error={workflow.error} />
      {workflow.value && (
        <p class="muted workflow-meta">
          Version {workflow.value.version} · {workflow.value.enabled ? 'enabled' : 'disabled'}
          {workflow.value.description ? ` · ${workflow.value.description}` : ''}
        </p>
      )}
      {triggering && workflow.value && <TriggerForm workflowId={workflowId} workflowName={workflow.value.name} onClose={() => setTriggering(false)} />}
      <div class="run-bar">
        <RunPicker workflowId={workflowId} runId={runId} />
        {currentRun && (
          <p class="run-state" aria-live="polite">
            Run <Status status={currentRun.status} /> started {formatTime(currentRun.startedAt)}
            {currentRun.finishedAt ? `, finished ${formatTime(currentRun.finishedAt)}` : ''}
            {currentRun.workflowVersion !== workflow.value?.version ? ` (definition version ${currentRun.workflowVersion})` : ''}
          </p>
        )}
      </div>
      <ErrorBox error={run.error} />
      <ErrorBox error={nodeRuns.error} />
      {nodeRuns.value?.truncated && <p class="muted">This run has more node runs than the graph reads ({MAX_NODE_RUN_PAGES * 100}); statuses may be incomplete.</p>}
      <div class={`workflow-body${selected ? ' with-panel' : ''}`}>
        <section class="workflow-graph" aria-labelledby="graph-title">
          <h2 id="graph-title">Graph</h2>
          {workflow.value === undefined && !workflow.error ? (
            <p class="muted">Loading…</p>
          ) : (
            <WorkflowGraph nodes={nodes} states={states} withRun={runId !== null} selectedId={selectedId} onSelect={(id) => setSelectedId(id === selectedId ? null : id)} label={`Nodes of ${name}`} />
          )}
        </section>
        {selected && (
          <NodePanel
            workflowId={workflowId}
            runId={runId}
            node={selected}
            nodeRuns={(nodeRuns.value?.nodeRuns ?? []).filter((nodeRun) => nodeRun.nodeId === selected.id)}
            requirements={(currentRun?.requirements ?? []).filter((requirement) => requirement.nodeId === selected.id)}
            onClose={() => setSelectedId(null)}
          />
        )}
      </div>
    </>
  );
}
