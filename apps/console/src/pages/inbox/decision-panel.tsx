/**
 * The decision UI a gate calls for: confirm; edit an output under review; a form; a route
 * choice; an agent's question (free text or one of its choices); and reject, always.
 */
import { ErrorBox } from '../../ui.tsx';
import { AnswerForm } from './answer-form.tsx';
import { forbiddenReason, useDecision, type DecisionCallbacks } from './decision.ts';
import { OutputEditor } from './output-editor.tsx';
import { RejectForm } from './reject-form.tsx';
import { RouteSelect } from './route-select.tsx';
import type { ApprovalRow } from './types.ts';
import { UserInputForm } from './user-input-form.tsx';

/** The router's suggested choice (`stepOutput.suggestedChoice`), which `confirm` takes; null for none. */
function suggestedChoice(row: ApprovalRow): string | null {
  const output = row.requirement.stepOutput as { suggestedChoice?: unknown } | null | undefined;
  return output && typeof output === 'object' && typeof output.suggestedChoice === 'string' ? output.suggestedChoice : null;
}

/** The controls that approve `row` (everything but reject). */
function ApproveControls({ row, busy, submit }: { row: ApprovalRow; busy: boolean; submit: ReturnType<typeof useDecision>['submit'] }) {
  const requirement = row.requirement;
  const choices = requirement.availableChoices ?? [];
  if (row.phase === 'ask') {
    if (requirement.requiresRouteSelection && choices.length > 0) {
      return <RouteSelect choices={choices} multiple={false} legend="Answer" submitLabel="Send answer" busy={busy} onChoose={(selected) => submit({ resolution: 'route_select', selectedChoices: selected })} />;
    }
    return <AnswerForm busy={busy} onAnswer={(response) => submit({ resolution: 'user_input', userInput: { response } })} />;
  }
  if (requirement.requiresRouteSelection && choices.length > 0) {
    const suggested = suggestedChoice(row);
    return (
      <>
        <RouteSelect
          choices={choices}
          multiple={requirement.allowMultipleSelections}
          legend="Route"
          submitLabel="Choose route"
          busy={busy}
          onChoose={(selected) => submit({ resolution: 'route_select', selectedChoices: selected })}
        />
        {suggested !== null && (
          <button type="button" disabled={busy} onClick={() => submit({ resolution: 'confirm' })}>
            Confirm the suggested route ({suggested})
          </button>
        )}
      </>
    );
  }
  const fields = requirement.requiresUserInput ? (requirement.userInputSchema ?? []) : [];
  if (fields.length > 0) {
    return <UserInputForm fields={fields} busy={busy} onSubmit={(userInput) => submit({ resolution: 'user_input', userInput })} />;
  }
  return (
    <div class="buttons">
      <button type="button" class="primary" disabled={busy} onClick={() => submit({ resolution: 'confirm' })}>
        Confirm
      </button>
      {requirement.requiresOutputReview && requirement.stepOutput !== null && requirement.stepOutput !== undefined && (
        <OutputEditor stepOutput={requirement.stepOutput} busy={busy} onSave={(editedOutput) => submit({ resolution: 'edit', editedOutput })} />
      )}
    </div>
  );
}

/** Every decision `row` allows, with the answer to the last attempt (403 reason, 400 problems). */
export function DecisionPanel({ row, callbacks }: { row: ApprovalRow; callbacks: DecisionCallbacks }) {
  const { state, submit } = useDecision(row, callbacks);
  const busy = state.kind === 'busy';
  const forbidden = state.kind === 'error' ? forbiddenReason(state.error, row) : null;
  return (
    <div class="decision" aria-busy={busy}>
      <ApproveControls row={row} busy={busy} submit={submit} />
      <RejectForm busy={busy} onReject={(feedback) => submit({ resolution: 'reject', feedback })} />
      {busy && (
        <p class="muted" role="status">
          Sending…
        </p>
      )}
      {forbidden !== null ? (
        <div class="error" role="alert">
          <strong>Not allowed</strong>: {forbidden}
        </div>
      ) : (
        state.kind === 'error' && <ErrorBox error={state.error} />
      )}
    </div>
  );
}
