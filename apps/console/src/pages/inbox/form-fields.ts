/**
 * A gate's `userInputSchema` field as an HTML form field: its kind, its initial text, and how the
 * text becomes the value sent in `userInput` (checked like the API: types, required, allowed values).
 */
import type { InputField } from './types.ts';

/** How a field is edited. */
export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'choice';

/** The field's kind: `choice` when it has allowed values, else from its type (agno's or the authoring names). */
export function fieldKind(field: InputField): FieldKind {
  if (field.allowedValues && field.allowedValues.length > 0) return 'choice';
  switch (field.fieldType) {
    case 'int':
      return 'integer';
    case 'float':
    case 'number':
      return 'number';
    case 'bool':
    case 'boolean':
      return 'boolean';
    case 'list':
    case 'array':
      return 'array';
    case 'dict':
    case 'object':
      return 'object';
    default:
      return 'string';
  }
}

/** The field's default value (`value` from the API, `defaultValue` in the authoring schema); undefined for none. */
export function defaultOf(field: InputField): unknown {
  const value = field.value !== undefined && field.value !== null ? field.value : field.defaultValue;
  return value === null ? undefined : value;
}

/**
 * The initial text of a field: for a choice the index of the default among the allowed values
 * ('' for none), for a boolean 'true'/'false', for an array one item per line when every item is
 * a string (else JSON), for an object JSON, else the default as text.
 */
export function initialText(field: InputField): string {
  const value = defaultOf(field);
  const kind = fieldKind(field);
  if (kind === 'choice') {
    const index = (field.allowedValues ?? []).findIndex((allowed) => JSON.stringify(allowed) === JSON.stringify(value));
    return index < 0 ? '' : String(index);
  }
  if (kind === 'boolean') return value === true ? 'true' : 'false';
  if (value === undefined) return '';
  if (kind === 'array') return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value.join('\n') : JSON.stringify(value, null, 2);
  if (kind === 'object') return JSON.stringify(value, null, 2);
  return String(value);
}

/** A field's value, or why its text is not one; `empty` when nothing was entered. */
export type Parsed = { ok: true; value: unknown } | { ok: true; empty: true } | { ok: false; problem: string };

/** The value `text` stands for in `field` (before the required check). */
export function parseField(field: InputField, text: string): Parsed {
  const kind = fieldKind(field);
  if (kind === 'boolean') return { ok: true, value: text === 'true' };
  if (kind === 'choice') {
    if (text === '') return { ok: true, empty: true };
    return { ok: true, value: (field.allowedValues ?? [])[Number(text)] };
  }
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, empty: true };
  if (kind === 'string') return { ok: true, value: text };
  if (kind === 'number' || kind === 'integer') {
    const number = Number(trimmed);
    if (!Number.isFinite(number)) return { ok: false, problem: 'Enter a number.' };
    if (kind === 'integer' && !Number.isInteger(number)) return { ok: false, problem: 'Enter a whole number.' };
    return { ok: true, value: number };
  }
  if (kind === 'array') {
    if (trimmed.startsWith('[')) {
      try {
        const value: unknown = JSON.parse(trimmed);
        return Array.isArray(value) ? { ok: true, value } : { ok: false, problem: 'Enter a JSON array or one item per line.' };
      } catch (error) {
        return { ok: false, problem: `Not a valid JSON array: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    return { ok: true, value: text.split('\n').map((line) => line.trim()).filter((line) => line !== '') };
  }
  try {
    const value: unknown = JSON.parse(trimmed);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? { ok: true, value } : { ok: false, problem: 'Enter a JSON object.' };
  } catch (error) {
    return { ok: false, problem: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The `userInput` of a form: every field's value (an empty optional field is left out, so its
 * default applies), or the problems by field name.
 */
export function collectInput(fields: InputField[], texts: Record<string, string>): { ok: true; value: Record<string, unknown> } | { ok: false; problems: Record<string, string> } {
  const value: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const parsed = parseField(field, texts[field.name] ?? '');
    if (!parsed.ok) problems[field.name] = parsed.problem;
    else if ('empty' in parsed) {
      if (field.required) problems[field.name] = 'Required: enter a value.';
    } else value[field.name] = parsed.value;
  }
  return Object.keys(problems).length > 0 ? { ok: false, problems } : { ok: true, value };
}
