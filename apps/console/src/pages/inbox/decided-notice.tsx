/** What the inbox says after a decision: recorded, or "Already decided" with who decided and what. */
import { href } from '../../router.ts';
import { Json, formatTime } from '../../ui.tsx';
import type { ApprovalRow, DecidedRequirement, DecisionBody } from './types.ts';

/** A decision the inbox reports: the caller's own (`body`), or someone else's found after a 409 (`decided`). */
export interface Notice {
  key: string;
  row: ApprovalRow;
  kind: 'decided' | 'conflict';
  body?: DecisionBody;
  decided?: DecidedRequirement | null;
}

/** Who decided a gate, in words. */
function deciderText(decided: DecidedRequirement): string {
  if (decided.decidedBy === 'timeout') return 'its timeout';
  if (decided.decidedBy === 'run_ended') return 'the end of the run';
  const user = decided.decidedByUser;
  if (user) return user.username || user.userId;
  return decided.decidedBy ?? 'someone';
}

/** The decision's values worth showing (feedback, choices, input, edited output). */
function DecisionValues({ decided }: { decided: DecidedRequirement }) {
  return (
    <>
      {decided.rejectionFeedback && <p class="prompt">Feedback: {decided.rejectionFeedback}</p>}
      {decided.selectedChoices && decided.selectedChoices.length > 0 && <p>Chosen: {decided.selectedChoices.join(', ')}</p>}
      {decided.userInput && <Json label="Input given" value={decided.userInput} />}
      {decided.editedOutput !== undefined && decided.editedOutput !== null && <Json label="Edited output" value={decided.editedOutput} />}
    </>
  );
}

/** One notice, with a "Dismiss" button. */
export function DecidedNotice({ notice, onDismiss }: { notice: Notice; onDismiss: () => void }) {
  const { row } = notice;
  const step = row.requirement.stepName || row.nodeId;
  const where = (
    <>
      <strong>{step}</strong> in <a href={href(['runs', row.runId])}>{row.workflowName ?? row.workflowId}</a>
    </>
  );
  return (
    <div class={notice.kind === 'conflict' ? 'notice notice-conflict' : 'notice'}>
      {notice.kind === 'decided' ? (
        <p>
          Decided: {where} ({notice.body?.resolution.replace('_', ' ')}).
        </p>
      ) : notice.decided ? (
        <>
          <p>
            <strong>Already decided</strong>: {where} was decided by {deciderText(notice.decided)} ({notice.decided.resolution?.replace('_', ' ') ?? 'no resolution'}) at{' '}
            {formatTime(notice.decided.decidedAt)}.
          </p>
          <DecisionValues decided={notice.decided} />
        </>
      ) : (
        <p>
          <strong>Already decided</strong>: {where} was decided by someone else (the run could not be read to say who).
        </p>
      )}
      <button type="button" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}
