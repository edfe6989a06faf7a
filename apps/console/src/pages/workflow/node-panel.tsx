/**
 * The side panel of a node of the workflow graph, for the selected run: its node runs (one per
 * iteration path) with their snapshots, and the decisions of its HITL gates.
 */
import { useState } from 'preact/hooks';
import { api, runPath } from '../../api.ts';
import { ErrorBox, Json, Status, formatTime } from '../../ui.tsx';
import type { NodeRun, Requirement, WorkflowNode } from './types.ts';

/** A size in bytes for people. */
function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A snapshot: the JSON when the list carried it, else its size and a button that loads the node run's detail. */
function Snapshot({ label, value, omitted, detail, onLoad, loading }: { label: string; value: unknown; omitted: number | undefined; detail: NodeRun | null; onLoad: () => void; loading: boolean }) {
  const key = label === 'Input' ? 'inputSnapshot' : 'outputSnapshot';
  if (value === null && omitted !== undefined) {
    if (detail) return <Json label={label} value={detail[key]} />;
    return (
      <p>
        {label}: left out of the list ({formatBytes(omitted)}).{' '}
        <button type="button" disabled={loading} onClick={onLoad}>
          Load {label.toLowerCase()}
        </button>
      </p>
    );
  }
  return <Json label={label} value={value} />;
}

/** One node run: status, attempt, times, error, input and output. */
function NodeRunItem({ workflowId, runId, nodeRun }: { workflowId: string; runId: string; nodeRun: NodeRun }) {
  const [detail, setDetail] = useState<NodeRun | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const load = async () => {
    setLoading(true);
    try {
      setDetail(await api<NodeRun>('GET', runPath(workflowId, runId, `/nodes/${encodeURIComponent(nodeRun.id)}`)));
      setError(null);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };
  const omitted = nodeRun.omittedSnapshots ?? {};
  return (
    <li class="node-run">
      <h4>
        {nodeRun.iterationPath ? `Iteration ${nodeRun.iterationPath}` : 'Node run'} <Status status={nodeRun.status} />
      </h4>
      <dl class="facts">
        <dt>Attempt</dt>
        <dd>{nodeRun.attempt}</dd>
        <dt>Started</dt>
        <dd>{formatTime(nodeRun.startedAt)}</dd>
        <dt>Finished</dt>
        <dd>{formatTime(nodeRun.finishedAt)}</dd>
      </dl>
      {nodeRun.error && <p class="node-run-error">Error: {nodeRun.error}</p>}
      <Snapshot label="Input" value={nodeRun.inputSnapshot} omitted={omitted.inputSnapshot} detail={detail} onLoad={load} loading={loading} />
      <Snapshot label="Output" value={nodeRun.outputSnapshot} omitted={omitted.outputSnapshot} detail={detail} onLoad={load} loading={loading} />
      <ErrorBox error={error} />
    </li>
  );
}

/** Who decided a gate: the person's username, else their id, else how it was decided. */
function decider(requirement: Requirement): string {
  const user = requirement.decidedByUser;
  if (user) return user.username || user.userId || 'someone';
  return requirement.decidedBy ?? '—';
}

/** The gates (and human requests) the node raised in the run, with their decisions. */
function Decisions({ requirements }: { requirements: Requirement[] }) {
  if (requirements.length === 0) return <p class="muted">No gate of this node in this run.</p>;
  return (
    <div class="table-wrap">
      <table class="decisions">
        <thead>
          <tr>
            <th scope="col">Iteration</th>
            <th scope="col">Resolution</th>
            <th scope="col">Decided by</th>
            <th scope="col">Decided at</th>
          </tr>
        </thead>
        <tbody>
          {requirements.map((requirement, index) => (
            <tr key={`${requirement.stepId ?? ''}${requirement.iterationPath}:${requirement.round}:${index}`}>
              <td>{requirement.iterationPath || '—'}{requirement.round > 0 ? ` (round ${requirement.round + 1})` : ''}</td>
              <td>{requirement.resolution ?? <Status status="awaiting_approval" />}</td>
              <td>
                {decider(requirement)}
                {requirement.decidedByUser?.via ? <span class="muted"> via {requirement.decidedByUser.via}</span> : null}
                {requirement.decidedByUser && requirement.decidedBy && requirement.decidedBy !== 'human' ? <span class="muted"> ({requirement.decidedBy})</span> : null}
              </td>
              <td>{formatTime(requirement.decidedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The panel of `node`: without a run, what the node is; with run `runId`, its node runs and
 * gate decisions. `onClose` closes it.
 */
export function NodePanel({ workflowId, runId, node, nodeRuns, requirements, onClose }: { workflowId: string; runId: string | null; node: WorkflowNode; nodeRuns: NodeRun[]; requirements: Requirement[]; onClose: () => void }) {
  return (
    <aside class="node-panel panel" aria-labelledby="node-panel-title">
      <div class="node-panel-head">
        <h2 id="node-panel-title">{node.name}</h2>
        <button type="button" onClick={onClose} aria-label={`Close the panel of ${node.name}`}>
          Close
        </button>
      </div>
      <p class="muted">
        {node.nodeType}
        {node.executorKey ? ` · executor ${node.executorKey}` : ''} · id {node.id}
      </p>
      {runId === null ? (
        <p>Select a run to see what this node did.</p>
      ) : (
        <>
          <h3>Node runs</h3>
          {nodeRuns.length === 0 ? (
            <p class="muted">Not started in this run.</p>
          ) : (
            <ul class="node-runs">
              {nodeRuns.map((nodeRun) => (
                <NodeRunItem key={nodeRun.id} workflowId={workflowId} runId={runId} nodeRun={nodeRun} />
              ))}
            </ul>
          )}
          <h3>Gate decisions</h3>
          <Decisions requirements={requirements} />
        </>
      )}
    </aside>
  );
}
