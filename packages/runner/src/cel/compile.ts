/**
 * Turns CEL source text into a reusable program: size limits, parsing, static analysis and
 * planning, each failure reported as one message that points into the expression. Programs are
 * instrumented for the evaluation budget (`metering.ts`): `env` must hold `meteringFunctions`.
 */
import { parse, plan } from '@bufbuild/cel';
import type { CelEnv, CelInput, CelResult } from '@bufbuild/cel';
import { errorMessage } from './error-message.ts';
import { analyzeExpression } from './expression-analysis.ts';
import type { IdentifierReference, ParsedExpression } from './expression-analysis.ts';
import { checkSourceLimits } from './expression-limits.ts';
import type { CelExpressionLimits } from './expression-limits.ts';
import { addMetering } from './metering.ts';
import { describePosition } from './source-position.ts';

/** A compiled expression, independent of variable values. */
export interface CompiledExpression {
  /**
   * The identifiers the expression reads (first occurrence of each). Every one must be bound when
   * evaluating, except built-in type names such as `int` (see `undeclared-variables.ts`).
   */
  readonly identifiers: readonly IdentifierReference[];
  /** Evaluates the expression with `bindings` (CEL values by variable name). Returns a CelError instead of throwing. */
  readonly evaluate: (bindings: Readonly<Record<string, CelInput>>) => CelResult;
}

/** Outcome of {@link compileExpression}: the program, or why the expression is rejected. */
export type CompileResult = { readonly ok: true; readonly compiled: CompiledExpression } | { readonly ok: false; readonly message: string };

/**
 * Compiles `source` in `env`: rejects it when it exceeds `limits`, does not parse (message with
 * line, column and the parser's explanation), calls unknown functions, or cannot be planned.
 * Never throws.
 */
export function compileExpression(source: string, env: CelEnv, limits: CelExpressionLimits): CompileResult {
  const limitProblem = checkSourceLimits(source, limits);
  if (limitProblem !== undefined) return { ok: false, message: limitProblem };
  let parsed: ParsedExpression;
  try {
    parsed = parse(source);
  } catch (error) {
    return { ok: false, message: describeSyntaxError(source, error) };
  }
  const analysis = analyzeExpression(parsed, source, env, limits.maxTreeDepth);
  if (!analysis.ok) return analysis;
  try {
    return { ok: true, compiled: { identifiers: analysis.identifiers, evaluate: plan(env, addMetering(parsed, env)) } };
  } catch (error) {
    return { ok: false, message: `invalid expression: ${errorMessage(error)}` };
  }
}

/** The parser's errors carry the location and the message without the `<input>:1:5:` prefix. */
interface LocatedParseError {
  readonly rawMessage: string;
  readonly location: { readonly start: { readonly offset: number } };
}

function describeSyntaxError(source: string, error: unknown): string {
  if (isLocatedParseError(error)) {
    return `syntax error at ${describePosition(source, error.location.start.offset)}: ${error.rawMessage}`;
  }
  return `syntax error: ${errorMessage(error)}`;
}

function isLocatedParseError(error: unknown): error is LocatedParseError {
  const candidate = error as Partial<LocatedParseError> | null;
  return typeof candidate?.rawMessage === 'string' && typeof candidate.location?.start?.offset === 'number';
}
