/**
 * The groups a caller belongs to (issue #18 item 1, "Principals"): each becomes the principal
 * `group:<name>` (domain access.ts). Every credential kind may carry groups — a JWT claim
 * (`SWITCHYARD_JWT_GROUPS_CLAIM`), an API key's `"groups"`, the `X-Switchyard-Groups` header of
 * a trusted proxy — and all are held to the same bounds: at most {@link MAX_GROUPS} names, each
 * 1–{@link MAX_GROUP_NAME_LENGTH} characters without whitespace or commas (what a principal's name
 * may be). A credential whose groups break a bound is refused (401), never trimmed to fit: a caller
 * silently missing a group it was given would be denied with no hint why.
 */
import Type from 'typebox';
import { AuthenticationError, MAX_PRINCIPAL_NAME_LENGTH } from '@switchyard/domain';

/** Most groups one caller may carry. */
export const MAX_GROUPS = 100;

/** Most characters of a group name: those of a principal's name (domain `MAX_PRINCIPAL_NAME_LENGTH`). */
export const MAX_GROUP_NAME_LENGTH = MAX_PRINCIPAL_NAME_LENGTH;

/** A group name, and equally an API key's subject: 1–200 characters, no whitespace, no commas. */
export const PRINCIPAL_NAME_PATTERN = `^[^\\s,]{1,${MAX_GROUP_NAME_LENGTH}}$`;
const PRINCIPAL_NAME = new RegExp(PRINCIPAL_NAME_PATTERN);

/** How the bounds read in messages and docs. */
export const GROUP_NAME_RULE = `1–${MAX_GROUP_NAME_LENGTH} characters without whitespace or commas`;

/** The schema of a list of group names (an API key's `"groups"`): at most {@link MAX_GROUPS}, each unique. */
export const GroupNames = Type.Array(Type.String({ pattern: PRINCIPAL_NAME_PATTERN, maxLength: MAX_GROUP_NAME_LENGTH }), {
  maxItems: MAX_GROUPS,
  uniqueItems: true,
  description: `Groups of the caller (principals \`group:<name>\`): at most ${MAX_GROUPS}, each ${GROUP_NAME_RULE}`,
});

/** True when `name` may be a group name (or an API key's subject): see {@link PRINCIPAL_NAME_PATTERN}. */
export function isPrincipalName(name: string): boolean {
  return PRINCIPAL_NAME.test(name);
}

/**
 * The group names `value` carries, duplicates dropped, in order: an array of strings, or one
 * string of names separated by commas and/or whitespace (Keycloak-style mappers, a proxy header);
 * `undefined` or `null` is none. `source` names where the value came from in the message
 * (`The token's 'groups' claim`, `The X-Switchyard-Groups header`).
 *
 * Throws {@link AuthenticationError} (401) for any other type, a non-string or invalid entry, or
 * more than {@link MAX_GROUPS} names; the message gives the entry's position and length, never
 * the entry itself (it may be 10 KB of anything).
 */
export function groupsOf(value: unknown, source: string): string[] {
  if (value === undefined || value === null) return [];
  let names: unknown[];
  if (typeof value === 'string') {
    // The limit bounds the work on a huge string: one name past the maximum is enough to refuse it.
    names = value.split(/[\s,]+/, MAX_GROUPS + 2).filter((name) => name !== '');
  } else if (Array.isArray(value)) {
    names = value;
  } else {
    throw new AuthenticationError(`${source} must be an array of group names or a string of them separated by commas, got ${typeName(value)}`);
  }
  if (names.length > MAX_GROUPS) throw new AuthenticationError(`${source} lists more than ${MAX_GROUPS} groups (the most accepted)`);
  names.forEach((name, index) => {
    if (typeof name !== 'string') throw new AuthenticationError(`${source}: entry ${index + 1} is ${typeName(name)}, not a group name`);
    if (!isPrincipalName(name)) {
      throw new AuthenticationError(`${source}: entry ${index + 1} (${name.length} characters) is not a group name (${GROUP_NAME_RULE})`);
    }
  });
  return [...new Set(names as string[])];
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  const type = Array.isArray(value) ? 'array' : typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}
