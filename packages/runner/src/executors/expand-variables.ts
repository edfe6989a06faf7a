/** Variables available to `${...}` references, by name; undefined means unset. */
export type Variables = Readonly<Record<string, string | undefined>>;

/** A variable whose value was put into the text. */
export interface Substitution {
  name: string;
  value: string;
}

/**
 * The outcome of {@link expandVariables}: the expanded text and the variables substituted into it
 * (in order; a default used instead of a variable is not listed), or why it could not be expanded.
 */
export type Expansion = { ok: true; value: string; substitutions: Substitution[] } | { ok: false; problems: string[] };

const REFERENCE = /^(env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/**
 * Expands variable references in `text`:
 * - `${NAME}`: the value of NAME (may be empty); a problem when NAME is unset.
 * - `${NAME:-default}`: the value of NAME, or `default` when NAME is unset or empty. The default is
 *   literal text: it is not expanded itself and cannot contain `}`.
 * - `${env:NAME}` / `${env:NAME:-default}`: the same, but NAME is looked up in `environment` only
 *   (the process environment: never a built-in such as `REGISTRY_DIR`); its substitution is listed
 *   with the name `env:NAME`. Without `environment`, `variables` is used.
 * A `$` not followed by `{` is kept as is. Malformed references (`${}`, `${1X}`, `${env:}`, an
 * unclosed `${`) are problems. Never throws.
 */
export function expandVariables(text: string, variables: Variables, environment: Variables = variables): Expansion {
  const problems: string[] = [];
  const substitutions: Substitution[] = [];
  let value = '';
  let index = 0;
  for (let start = text.indexOf('${'); start !== -1; start = text.indexOf('${', index)) {
    value += text.slice(index, start);
    const end = text.indexOf('}', start + 2);
    if (end === -1) {
      problems.push(`unclosed variable reference "${text.slice(start)}"`);
      return { ok: false, problems };
    }
    const reference = text.slice(start + 2, end);
    const match = REFERENCE.exec(reference);
    if (match === null) {
      problems.push(`malformed variable reference "\${${reference}}" (expected \${NAME}, \${env:NAME} or \${NAME:-default})`);
    } else {
      const [, prefix = '', name = '', fallback] = match;
      const current = prefix === '' ? variables[name] : environment[name];
      if (fallback !== undefined && (current === undefined || current === '')) {
        value += fallback;
      } else if (current === undefined) {
        problems.push(`environment variable ${name} is not set (write \${${prefix}${name}:-default} to allow a default)`);
      } else {
        value += current;
        substitutions.push({ name: `${prefix}${name}`, value: current });
      }
    }
    index = end + 1;
  }
  value += text.slice(index);
  return problems.length === 0 ? { ok: true, value, substitutions } : { ok: false, problems };
}
