/**
 * Human-readable paths into JSON data, used in error messages: `config.user.email`,
 * `input.items[2]`, `config["content-type"]`.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * The path of the child `key` of the value at `parent`: `.key` for identifier-like keys,
 * `["key"]` (JSON-quoted) for other object keys, `[index]` for array indices.
 */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}
