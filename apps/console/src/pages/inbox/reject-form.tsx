/** Rejecting a gate, with optional feedback (resolution `reject`). */
import { useState } from 'preact/hooks';
import { useId } from './ids.ts';

/** A "Feedback" field and a "Reject" button; `onReject(feedback)` gets null for no feedback. */
export function RejectForm({ busy, onReject }: { busy: boolean; onReject: (feedback: string | null) => void }) {
  const [feedback, setFeedback] = useState('');
  const id = useId('feedback');
  return (
    <form
      class="reject-form"
      onSubmit={(event) => {
        event.preventDefault();
        onReject(feedback.trim() === '' ? null : feedback);
      }}
    >
      <div class="field">
        <label for={id}>
          Feedback <span class="muted">(optional, sent with a rejection)</span>
        </label>
        <textarea id={id} rows={2} maxLength={10000} value={feedback} onInput={(event) => setFeedback((event.target as HTMLTextAreaElement).value)} />
      </div>
      <button type="submit" class="danger" disabled={busy}>
        Reject
      </button>
    </form>
  );
}
