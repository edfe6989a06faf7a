/** Editing a step's output under review (resolution `edit`, `editedOutput`). */
import { useState } from 'preact/hooks';
import { JsonEditor } from '../../ui.tsx';

/**
 * "Edit output" opens a JSON editor prefilled with `stepOutput` (pretty-printed); "Save edited
 * output" sends the parsed value, enabled only while the text is valid JSON.
 */
export function OutputEditor({ stepOutput, busy, onSave }: { stepOutput: unknown; busy: boolean; onSave: (edited: unknown) => void }) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(stepOutput ?? null, null, 2));
  const [parsed, setParsed] = useState<{ ok: true; value: unknown } | { ok: false; error: string }>({ ok: true, value: stepOutput ?? null });
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)} aria-expanded="false">
        Edit output
      </button>
    );
  }
  const valid = parsed.ok && parsed.value !== undefined;
  return (
    <form
      class="output-editor"
      onSubmit={(event) => {
        event.preventDefault();
        if (parsed.ok && parsed.value !== undefined) onSave(parsed.value);
      }}
    >
      <JsonEditor
        label="Edited output (JSON)"
        value={text}
        rows={10}
        onChange={(next, result) => {
          setText(next);
          setParsed(result);
        }}
      />
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy || !valid}>
          Save edited output
        </button>
        <button type="button" onClick={() => setOpen(false)} aria-expanded="true">
          Cancel editing
        </button>
      </div>
    </form>
  );
}
