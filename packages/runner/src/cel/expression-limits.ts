/**
 * Size limits applied to every CEL expression before it is parsed, planned or evaluated. They keep
 * expressions readable and protect the service: the parser and the evaluator are recursive, and
 * the parser exhausts the JavaScript stack at a few hundred nested parentheses.
 */
import { describePosition } from './source-position.ts';

/** Bounds on one expression. All are positive integers. */
export interface CelExpressionLimits {
  /** Longest accepted expression, in characters (UTF-16 code units). */
  readonly maxLength: number;
  /**
   * Deepest accepted nesting of `(...)`, `[...]` and `{...}` in the source, string literals and
   * comments excluded. Calls count, as their arguments are in parentheses: `f(g(x))` is 2 deep.
   * Measured on the source because the parser itself must be protected from deep nesting.
   */
  readonly maxNesting: number;
  /**
   * Deepest accepted syntax tree, in nodes from the root to the deepest leaf. Long chains of
   * binary operators (`a + b + c + ...`) nest without brackets; this bounds the recursion of the
   * evaluator. `&&` and `||` chains are balanced by the parser and stay shallow.
   */
  readonly maxTreeDepth: number;
}

/** The limits used when none are given: 4,096 characters, 32 levels of brackets, 128 tree levels. */
export const DEFAULT_CEL_LIMITS: CelExpressionLimits = { maxLength: 4096, maxNesting: 32, maxTreeDepth: 128 };

/**
 * Checks the length and bracket nesting of `source` against `limits`.
 * @returns why the expression is rejected, or undefined when it is within the limits.
 */
export function checkSourceLimits(source: string, limits: CelExpressionLimits): string | undefined {
  if (source.length > limits.maxLength) {
    return `expression is too long: ${source.length} characters (limit ${limits.maxLength})`;
  }
  let depth = 0;
  let deepest = 0;
  let excessOffset: number | undefined;
  for (const bracket of brackets(source)) {
    depth = bracket.opening ? depth + 1 : Math.max(0, depth - 1);
    deepest = Math.max(deepest, depth);
    if (depth > limits.maxNesting) excessOffset ??= bracket.offset;
  }
  if (excessOffset === undefined) return undefined;
  return (
    `expression is nested too deeply: ${deepest} levels of (), [] or {} ` +
    `(limit ${limits.maxNesting}, exceeded at ${describePosition(source, excessOffset)})`
  );
}

/**
 * The brackets of a CEL source text outside string literals and `//` comments, in order. String
 * literals follow CEL: single or double quotes, tripled for multi-line text, backslash escapes
 * except in raw strings (`r'...'`, `rb'...'`, `br'...'`). An unterminated literal ends the scan;
 * the parser reports it.
 */
function* brackets(source: string): Generator<{ opening: boolean; offset: number }> {
  let offset = 0;
  while (offset < source.length) {
    const char = source[offset] as string;
    if (char === '"' || char === "'") {
      offset = endOfStringLiteral(source, offset);
    } else if (source.startsWith('//', offset)) {
      const newline = source.indexOf('\n', offset);
      offset = newline === -1 ? source.length : newline + 1;
    } else {
      if ('([{'.includes(char)) yield { opening: true, offset };
      if (')]}'.includes(char)) yield { opening: false, offset };
      offset += 1;
    }
  }
}

/** Offset just after the string literal whose opening quote is at `start` (the source length if unterminated). */
function endOfStringLiteral(source: string, start: number): number {
  const quote = source[start] as string;
  const delimiter = source.startsWith(quote.repeat(3), start) ? quote.repeat(3) : quote;
  const raw = RAW_PREFIX.test(source.slice(Math.max(0, start - 3), start));
  let offset = start + delimiter.length;
  while (offset < source.length) {
    if (!raw && source[offset] === '\\') {
      offset += 2;
    } else if (source.startsWith(delimiter, offset)) {
      return offset + delimiter.length;
    } else {
      offset += 1;
    }
  }
  return source.length;
}

/** Matches the text just before a quote when it is a raw-string prefix (`r`, `R`, `rb`, `br`, ...). */
const RAW_PREFIX = /(^|[^A-Za-z0-9_])([bB]?[rR]|[rR][bB])$/;
