/** The node runs of a run (the first ones the run detail carries). */
import { href } from '../../router.ts';
import { Status, formatTime } from '../../ui.tsx';
import type { NodeRun } from './types.ts';

/** Node runs table, with a link to the run on the workflow's graph. */
export function NodeRuns({ workflowId, runId, nodeRuns, total }: { workflowId: string; runId: string; nodeRuns: NodeRun[]; total: number }) {
  return (
    <section class="panel" aria-labelledby="run-nodes-title">
      <h2 id="run-nodes-title">Node runs</h2>
      <p>
        <a href={href(['workflows', workflowId], { run: runId })}>See this run on the workflow graph</a>
        {total > nodeRuns.length && <span class="muted"> · the first {nodeRuns.length} of {total} node runs are listed</span>}
      </p>
      {nodeRuns.length === 0 ? (
        <p class="muted">No node has run yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack-table">
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">Type</th>
                <th scope="col">Iteration</th>
                <th scope="col">Status</th>
                <th scope="col">Attempt</th>
                <th scope="col">Started</th>
                <th scope="col">Finished</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {nodeRuns.map((nodeRun) => (
                <tr key={nodeRun.id}>
                  <td data-label="Node">
                    {nodeRun.nodeName} <span class="muted mono">{nodeRun.nodeId}</span>
                  </td>
                  <td data-label="Type">{nodeRun.nodeType}</td>
                  <td data-label="Iteration">{nodeRun.iterationPath || '—'}</td>
                  <td data-label="Status">
                    <Status status={nodeRun.status} />
                  </td>
                  <td data-label="Attempt">{nodeRun.attempt}</td>
                  <td data-label="Started">{formatTime(nodeRun.startedAt)}</td>
                  <td data-label="Finished">{formatTime(nodeRun.finishedAt)}</td>
                  <td data-label="Error">{nodeRun.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
