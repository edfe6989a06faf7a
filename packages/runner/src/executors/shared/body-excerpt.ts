/** Quoting an answer's body (or any text) in a failure message, shortened. */

/** Most characters of a body excerpt in a failure message. */
const EXCERPT_CHARS = 500;

/** The start of a body (or any text) for a message: whitespace runs collapsed, at most {@link EXCERPT_CHARS} characters. */
export function bodyExcerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= EXCERPT_CHARS ? flat : `${flat.slice(0, EXCERPT_CHARS)}…`;
}
