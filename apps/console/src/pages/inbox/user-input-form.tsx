/** A gate's form, generated from its `userInputSchema` (resolution `user_input`). */
import { useState } from 'preact/hooks';
import { collectInput, fieldKind, initialText } from './form-fields.ts';
import { useId } from './ids.ts';
import type { InputField } from './types.ts';

/** One generated field: its label (required marked), its control, its description and its problem. */
function FormField({ field, id, text, problem, onText }: { field: InputField; id: string; text: string; problem: string | undefined; onText: (text: string) => void }) {
  const kind = fieldKind(field);
  const describedBy = [field.description ? `${id}-desc` : '', problem ? `${id}-problem` : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, 'aria-describedby': describedBy, 'aria-invalid': problem ? true : undefined, 'aria-required': field.required && kind !== 'boolean' ? true : undefined };
  const value = (event: Event) => onText((event.target as HTMLInputElement).value);
  let control;
  if (kind === 'boolean') {
    control = <input {...common} type="checkbox" checked={text === 'true'} onChange={(event) => onText((event.target as HTMLInputElement).checked ? 'true' : 'false')} />;
  } else if (kind === 'choice') {
    control = (
      <select {...common} required={field.required} value={text} onChange={value}>
        <option value="">— choose —</option>
        {(field.allowedValues ?? []).map((allowed, index) => (
          <option key={index} value={String(index)}>
            {typeof allowed === 'string' ? allowed : JSON.stringify(allowed)}
          </option>
        ))}
      </select>
    );
  } else if (kind === 'array' || kind === 'object') {
    control = <textarea {...common} rows={3} required={field.required} spellcheck={false} value={text} onInput={value} />;
  } else {
    control = <input {...common} type={kind === 'string' ? 'text' : 'number'} step={kind === 'number' ? 'any' : undefined} required={field.required} value={text} onInput={value} />;
  }
  const hint = kind === 'array' ? 'one item per line, or a JSON array' : kind === 'object' ? 'a JSON object' : null;
  return (
    <div class={kind === 'boolean' ? 'field field-check' : 'field'}>
      <label for={id}>
        {kind === 'boolean' && control}
        {field.name}
        {field.required && kind !== 'boolean' && <span class="required"> (required)</span>}
        {hint && <span class="muted"> ({hint})</span>}
      </label>
      {kind !== 'boolean' && control}
      {field.description && (
        <p class="muted field-desc" id={`${id}-desc`}>
          {field.description}
        </p>
      )}
      {problem && (
        <p class="field-problem" id={`${id}-problem`}>
          {problem}
        </p>
      )}
    </div>
  );
}

/**
 * The form of `fields`: text, number, checkbox, list or select controls prefilled with the
 * defaults; required fields are marked and checked before `onSubmit(userInput)` is called.
 */
export function UserInputForm({ fields, busy, submitLabel = 'Submit', onSubmit }: { fields: InputField[]; busy: boolean; submitLabel?: string; onSubmit: (userInput: Record<string, unknown>) => void }) {
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(fields.map((field) => [field.name, initialText(field)])));
  const [problems, setProblems] = useState<Record<string, string>>({});
  const id = useId('input');
  const count = Object.keys(problems).length;
  return (
    <form
      class="user-input-form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        const result = collectInput(fields, texts);
        if (result.ok) {
          setProblems({});
          onSubmit(result.value);
        } else setProblems(result.problems);
      }}
    >
      <fieldset>
        <legend>Input</legend>
        {fields.map((field, index) => (
          <FormField
            key={field.name}
            field={field}
            id={`${id}-${index}`}
            text={texts[field.name] ?? ''}
            problem={problems[field.name]}
            onText={(text) => {
              setTexts((current) => ({ ...current, [field.name]: text }));
              if (problems[field.name]) setProblems(({ [field.name]: _gone, ...rest }) => rest);
            }}
          />
        ))}
      </fieldset>
      {count > 0 && (
        <p class="field-problem" role="alert">
          {count === 1 ? 'One field needs attention.' : `${count} fields need attention.`}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}
