/** A run's HITL gates (and human requests), decided or not, with who decided. */
import { href } from '../../router.ts';
import { formatTime } from '../../ui.tsx';
import { actorName, type Requirement } from './types.ts';

/** What a gate asks for, in words. */
function gateKind(requirement: Requirement): string {
  const kinds: string[] = [];
  if (requirement.requiresConfirmation) kinds.push('confirmation');
  if (requirement.requiresUserInput) kinds.push('input');
  if (requirement.requiresOutputReview) kinds.push('output review');
  if (requirement.requiresRouteSelection) kinds.push('route selection');
  return kinds.join(', ') || 'question';
}

/** How a gate was decided, or a link to decide it. */
function Decision({ requirement, runId, decidable }: { requirement: Requirement; runId: string; decidable: boolean }) {
  if (requirement.resolution === null) {
    return decidable ? <a href={href(['inbox'], { runId })}>Undecided: decide in Approvals</a> : <span class="muted">undecided</span>;
  }
  const who = requirement.decidedBy === 'human' ? actorName(requirement.decidedByUser) : (requirement.decidedBy ?? '—');
  return (
    <span>
      {requirement.resolution} by {who}, {formatTime(requirement.decidedAt)}
    </span>
  );
}

/** The gates table; `decidable` when the run can still take decisions. */
export function Requirements({ requirements, runId, decidable }: { requirements: Requirement[]; runId: string; decidable: boolean }) {
  return (
    <section class="panel" aria-labelledby="run-gates-title">
      <h2 id="run-gates-title">Gates</h2>
      {requirements.length === 0 ? (
        <p class="muted">This run raised no gate.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack-table">
            <thead>
              <tr>
                <th scope="col">Gate</th>
                <th scope="col">Node</th>
                <th scope="col">Asks for</th>
                <th scope="col">Requested</th>
                <th scope="col">Decision</th>
              </tr>
            </thead>
            <tbody>
              {requirements.map((requirement) => (
                <tr key={`${requirement.stepId}:${requirement.iterationPath}:${requirement.round}`}>
                  <td data-label="Gate">
                    {requirement.stepName ?? requirement.stepId}
                    {requirement.round > 0 && <span class="muted"> (round {requirement.round})</span>}
                  </td>
                  <td data-label="Node">
                    <span class="mono">
                      {requirement.nodeId}
                      {requirement.iterationPath && ` @ ${requirement.iterationPath}`}
                    </span>
                  </td>
                  <td data-label="Asks for">{gateKind(requirement)}</td>
                  <td data-label="Requested">{formatTime(requirement.requestedAt)}</td>
                  <td data-label="Decision">
                    <Decision requirement={requirement} runId={runId} decidable={decidable} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
