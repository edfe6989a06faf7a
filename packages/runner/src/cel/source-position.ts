/**
 * Describes the position of character `offset` (0-based, UTF-16 code units) of `source` as
 * `line L, column C` (both 1-based), for error messages about expressions.
 */
export function describePosition(source: string, offset: number): string {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}
