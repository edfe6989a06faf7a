/** One undecided gate of the inbox as a card: where it is, what it asks, and its decision UI. */
import { href } from '../../router.ts';
import { Json, Status, formatTime } from '../../ui.tsx';
import { DecisionPanel } from './decision-panel.tsx';
import type { DecisionCallbacks } from './decision.ts';
import { approversText, phaseLabel, type ApprovalRow } from './types.ts';

/** The gate's messages (confirmation, input, output review), as text. */
function Messages({ row }: { row: ApprovalRow }) {
  const { confirmationMessage, userInputMessage, outputReviewMessage } = row.requirement;
  const messages = [confirmationMessage, userInputMessage, outputReviewMessage].filter((message): message is string => typeof message === 'string' && message !== '');
  return (
    <>
      {[...new Set(messages)].map((message) => (
        <p class="prompt" key={message}>
          {message}
        </p>
      ))}
    </>
  );
}

/** Why the caller cannot decide the gate. */
function CannotDecide({ row }: { row: ApprovalRow }) {
  const who = approversText(row);
  const text = who
    ? `Only ${who} may decide this.`
    : row.requirement.allowSelfApproval === false
      ? 'You may not decide this (four-eyes: whoever triggered the run may not decide its gates).'
      : 'You may not decide this.';
  return <p class="muted cannot-decide">{text}</p>;
}

/** The card of `row`; its decisions go to `callbacks`. */
export function GateCard({ row, callbacks }: { row: ApprovalRow; callbacks: DecisionCallbacks }) {
  const requirement = row.requirement;
  const step = requirement.stepName || row.nodeId;
  const omitted = requirement.omittedFields?.stepOutput;
  const titleId = `gate-${row.runId}-${requirement.stepId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    <article class="gate-card" aria-labelledby={titleId}>
      <h2 id={titleId}>
        {step} <span class="phase">{phaseLabel(row.phase)}</span>
      </h2>
      <dl class="gate-meta">
        <dt>Workflow</dt>
        <dd>
          <a href={href(['workflows', row.workflowId], { run: row.runId })}>{row.workflowName ?? row.workflowId}</a>
        </dd>
        <dt>Run</dt>
        <dd>
          <a href={href(['runs', row.runId])}>{row.runId}</a> <Status status={row.runStatus} />
        </dd>
        {row.iterationPath !== '' && (
          <>
            <dt>Iteration</dt>
            <dd>{row.iterationPath}</dd>
          </>
        )}
        <dt>Requested</dt>
        <dd>{formatTime(row.requestedAt)}</dd>
        <dt>Timeout</dt>
        <dd>{requirement.timeoutAt ? `${formatTime(requirement.timeoutAt)} (then ${requirement.onTimeout ?? 'cancel'})` : 'none'}</dd>
      </dl>
      <Messages row={row} />
      {requirement.stepOutput !== null && requirement.stepOutput !== undefined && <Json label={requirement.requiresOutputReview ? 'Output under review' : 'Step output'} value={requirement.stepOutput} open={requirement.requiresOutputReview} />}
      {omitted !== undefined && <p class="muted">The output is too large to show here ({omitted} bytes); open the run to see it.</p>}
      {row.canDecide ? <DecisionPanel row={row} callbacks={callbacks} /> : <CannotDecide row={row} />}
    </article>
  );
}
