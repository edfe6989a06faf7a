/**
 * The trigger form shared by the workflow list and the workflow page: the run's initial input as
 * JSON (it must be an object), POST …/runs `{ initialInput }`, then the new run's page.
 */
import { useState } from 'preact/hooks';
import { api, workflowPath } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { ErrorBox, JsonEditor } from '../../ui.tsx';

/** What is wrong with `value` as an initial input; null when it is a JSON object. */
function objectProblem(value: unknown): string | null {
  if (value === undefined) return null; // empty text: {}
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'The initial input must be a JSON object ({ … }).';
  return null;
}

/**
 * Starts a run of `workflowId` with the JSON object typed in; "Start run" stays disabled (and the
 * form says why) while the text is not a JSON object. The API's 400 problems show in place; on 202
 * the console goes to the run's page. `onClose`, when given, adds a "Cancel" button.
 */
export function TriggerForm({ workflowId, workflowName, onClose }: { workflowId: string; workflowName: string; onClose?: () => void }) {
  const [text, setText] = useState('{}');
  const [parsed, setParsed] = useState<{ ok: true; value: unknown } | { ok: false; error: string }>({ ok: true, value: {} });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const shapeProblem = parsed.ok ? objectProblem(parsed.value) : null;
  const valid = parsed.ok && shapeProblem === null;
  return (
    <form
      class="trigger-form panel"
      aria-label={`Start a run of ${workflowName}`}
      onSubmit={async (event) => {
        event.preventDefault();
        if (!valid || busy) return;
        setBusy(true);
        setError(null);
        try {
          const initialInput = parsed.value === undefined ? {} : parsed.value;
          const answer = await api<{ runId: string }>('POST', workflowPath(workflowId, '/runs'), { initialInput });
          navigate(href(['runs', answer.runId]));
        } catch (failure) {
          setError(failure);
        } finally {
          setBusy(false);
        }
      }}
    >
      <JsonEditor
        label={`Initial input of ${workflowName} (JSON object)`}
        value={text}
        rows={6}
        onChange={(next, result) => {
          setText(next);
          setParsed(result);
        }}
      />
      {shapeProblem && <p class="field-problem">{shapeProblem}</p>}
      <ErrorBox error={error} />
      <div class="form-actions">
        <button type="submit" class="primary" disabled={!valid || busy}>
          {busy ? 'Starting…' : 'Start run'}
        </button>
        {onClose && (
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
