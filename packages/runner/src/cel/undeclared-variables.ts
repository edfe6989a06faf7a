/**
 * Judges the identifiers an expression reads against the variables available to it.
 */
import type { IdentifierReference } from './expression-analysis.ts';

/** Identifiers CEL resolves to types when no variable has that name, as in `type(x) == int`. */
const BUILT_IN_TYPE_NAMES: ReadonlySet<string> = new Set(['bool', 'bytes', 'double', 'int', 'list', 'map', 'null_type', 'string', 'type', 'uint']);

/**
 * Describes the identifiers in `references` that are neither `available` variables nor
 * built-in type names, e.g. `unknown variable 'inpt' (line 1, column 1); available variables:
 * input, session_state`.
 * @returns the message, or undefined when every identifier is declared.
 */
export function describeUndeclaredVariables(references: readonly IdentifierReference[], available: readonly string[]): string | undefined {
  const unknown = references.filter(({ name }) => !available.includes(name) && !BUILT_IN_TYPE_NAMES.has(name));
  if (unknown.length === 0) return undefined;
  const names = unknown.map(({ name, position }) => (position === undefined ? `'${name}'` : `'${name}' (${position})`));
  const choices = available.length === 0 ? '(none)' : available.join(', ');
  return `unknown variable${unknown.length === 1 ? '' : 's'} ${names.join(', ')}; available variables: ${choices}`;
}
