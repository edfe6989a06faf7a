/** Answering an agent's free-text question (a human request: resolution `user_input`, `userInput.response`). */
import { useState } from 'preact/hooks';
import { useId } from './ids.ts';

/** A required "Answer" text area and a "Send answer" button; `onAnswer(text)` gets the text. */
export function AnswerForm({ busy, onAnswer }: { busy: boolean; onAnswer: (response: string) => void }) {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState(false);
  const id = useId('answer');
  return (
    <form
      class="answer-form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        if (text.trim() === '') setProblem(true);
        else onAnswer(text);
      }}
    >
      <div class="field">
        <label for={id}>
          Answer <span class="required">(required)</span>
        </label>
        <textarea
          id={id}
          rows={3}
          required
          aria-required="true"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${id}-problem` : undefined}
          value={text}
          onInput={(event) => {
            setText((event.target as HTMLTextAreaElement).value);
            setProblem(false);
          }}
        />
        {problem && (
          <p class="field-problem" id={`${id}-problem`} role="alert">
            Required: write an answer (or reject the question).
          </p>
        )}
      </div>
      <button type="submit" class="primary" disabled={busy}>
        Send answer
      </button>
    </form>
  );
}
