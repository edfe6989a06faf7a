/**
 * The one error type CEL evaluation throws, for the runner to record as a node failure.
 */

/** Longest part of an expression quoted in an error message; the full text is on the error. */
const QUOTED_EXPRESSION_LIMIT = 200;

/**
 * A CEL expression could not be evaluated: it does not compile, reads an unknown variable or a
 * missing key, applies an operator to the wrong types, divides an int by zero, returns the wrong
 * type, or returns a value with no JSON form.
 *
 * The message reads `[<path>: ]CEL expression \`<expression>\` failed: <reason>`, e.g.
 * ``config.user.email: CEL expression `input.user.email` failed: field not found: email``.
 */
export class CelEvaluationError extends Error {
  override readonly name = 'CelEvaluationError';
  /** Stable error code. */
  readonly code = 'CEL_EVALUATION_FAILED';
  /** The expression, in full. */
  readonly expression: string;
  /** Why it failed, without the expression (e.g. `expected bool, got double`). */
  readonly reason: string;
  /** Where the expression sits in a step's `config` (e.g. `config.user.email`), when it comes from there. */
  readonly path: string | undefined;

  /** `cause` is the underlying error (a CelError from @bufbuild/cel, or the Error of a conversion), when there is one. */
  constructor(details: { expression: string; reason: string; path?: string; cause?: unknown }) {
    const quoted =
      details.expression.length > QUOTED_EXPRESSION_LIMIT ? `${details.expression.slice(0, QUOTED_EXPRESSION_LIMIT)}…` : details.expression;
    const location = details.path === undefined ? '' : `${details.path}: `;
    super(`${location}CEL expression \`${quoted}\` failed: ${details.reason}`, { cause: details.cause });
    this.expression = details.expression;
    this.reason = details.reason;
    this.path = details.path;
  }

  /** The same failure, located at `path` in a step's config. */
  atPath(path: string): CelEvaluationError {
    return new CelEvaluationError({ expression: this.expression, reason: this.reason, path, cause: this.cause });
  }
}
