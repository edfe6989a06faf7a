/** Picking a router's route(s) or a human request's answer (resolution `route_select`). */
import { useState } from 'preact/hooks';
import { useId } from './ids.ts';

/**
 * The `choices` as radio buttons (one) or checkboxes (`multiple`), and a submit button
 * (`submitLabel`); at least one must be picked. `onChoose` gets the picked names in the order offered.
 */
export function RouteSelect({ choices, multiple, legend, submitLabel, busy, onChoose }: { choices: string[]; multiple: boolean; legend: string; submitLabel: string; busy: boolean; onChoose: (selected: string[]) => void }) {
  const [picked, setPicked] = useState<string[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const name = useId('route');
  const toggle = (choice: string, on: boolean) => {
    setProblem(null);
    if (!multiple) setPicked(on ? [choice] : []);
    else setPicked((current) => choices.filter((c) => (c === choice ? on : current.includes(c))));
  };
  return (
    <form
      class="route-select"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        if (picked.length === 0) setProblem(multiple ? 'Pick at least one.' : 'Pick one.');
        else onChoose(picked);
      }}
    >
      <fieldset aria-describedby={problem ? `${name}-problem` : undefined}>
        <legend>
          {legend} <span class="muted">({multiple ? 'one or several' : 'pick one'}, required)</span>
        </legend>
        {choices.map((choice, index) => (
          <label key={choice} class="choice" for={`${name}-${index}`}>
            <input
              id={`${name}-${index}`}
              type={multiple ? 'checkbox' : 'radio'}
              name={name}
              value={choice}
              required={!multiple}
              checked={picked.includes(choice)}
              onChange={(event) => toggle(choice, (event.target as HTMLInputElement).checked)}
            />{' '}
            {choice}
          </label>
        ))}
        {problem && (
          <p class="field-problem" id={`${name}-problem`} role="alert">
            {problem}
          </p>
        )}
      </fieldset>
      <button type="submit" class="primary" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}
