/**
 * The CEL engine of Switchyard: save-time checks and run-time evaluation of the expressions in
 * workflow definitions, on top of @bufbuild/cel (with the `strings` extension: `lowerAscii`,
 * `upperAscii`, `indexOf`, `lastIndexOf`, `replace`, `split`, `join`, `substring`, `trim`,
 * `charAt`, `format`, `strings.quote`).
 *
 * Numbers: workflow data is JSON, and every JSON number is a CEL `double`, integers included.
 * What users see:
 * - Comparisons mix numeric types freely: with `input.n` = 3, `input.n == 3`, `input.n == 3.0`,
 *   `input.n > 2` and `input.n in [1, 2, 3]` are all true (CEL's heterogeneous numeric equality).
 * - Arithmetic does not mix them: `input.n + 1` fails with "no matching overload for '_+_'
 *   applied to '(double, int)'"; write `input.n + 1.0`, or `int(input.n) + 1` for an int.
 * - Integral doubles index lists: `input.items[input.i]` works for `i` = 1.
 * - `size(...)` and int arithmetic give ints; results come back as JSON numbers either way.
 * Null: a map key whose value is null behaves as absent for `has(m.k)` and `'k' in m` (both
 * false, @bufbuild/cel 0.6 behaviour; the CEL spec says true), while `m.k == null` is true.
 *
 * Safety: `matches` uses an RE2 engine (linear time, no backtracking blow-up); map lookups only
 * see the data's own keys (no `__proto__`/`constructor` prototype access); expressions are
 * bounded in length, bracket nesting and syntax-tree depth ({@link CelExpressionLimits}).
 * Evaluation is synchronous, so every evaluation runs on a cost budget (`evaluation-budget.ts`):
 * past it the evaluation stops and fails with "evaluation exceeded its cost budget", and no
 * evaluation holds the event loop for much more than ~50 ms.
 */
import { celEnv, celType, isCelError } from '@bufbuild/cel';
import type { CelEnv, CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { CelEvaluationError } from './cel-evaluation-error.ts';
import { appendFunction } from './accumulator.ts';
import { replaceFunctions } from './safe-strings.ts';
import { celToJson } from './cel-to-json.ts';
import type { JsonValue } from './cel-to-json.ts';
import { compileExpression } from './compile.ts';
import type { CompiledExpression, CompileResult } from './compile.ts';
import { errorMessage } from './error-message.ts';
import { CelBudgetExceededError, DEFAULT_EVALUATION_BUDGET, EvaluationBudget, meteringFunctions, withBudget } from './evaluation-budget.ts';
import { DEFAULT_CEL_LIMITS } from './expression-limits.ts';
import type { CelExpressionLimits } from './expression-limits.ts';
import { toCelBindings } from './json-to-cel.ts';
import { LRUCache } from 'lru-cache';
import { describeUndeclaredVariables } from './undeclared-variables.ts';

/** Result of {@link CelEngine.check}: accepted, or rejected with a message that points into the expression. */
export type CelCheckResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** Options of a {@link CelEngine}. */
export interface CelEngineOptions {
  /** Most compiled expressions kept (least recently used ones are dropped first). Default 1,000. */
  readonly cacheSize?: number;
  /** Overrides of {@link DEFAULT_CEL_LIMITS}. */
  readonly limits?: Partial<CelExpressionLimits>;
  /** Work units one evaluation may spend (see `evaluation-budget.ts`). Default {@link DEFAULT_EVALUATION_BUDGET}. */
  readonly evaluationBudget?: number;
}

/** Counters of a {@link CelEngine}'s compile cache, for tests and metrics. */
export interface CelEngineStats {
  /** Expressions compiled (parsed, analysed and planned) so far, including rejected ones. */
  readonly compilations: number;
  /** Lookups answered from the cache. */
  readonly cacheHits: number;
  /** Compiled expressions currently cached. */
  readonly cachedExpressions: number;
}

const DEFAULT_CACHE_SIZE = 1000;

/**
 * Checks and evaluates CEL expressions. Compiled expressions are cached by source text in a
 * bounded LRU cache shared by {@link check} and the evaluate methods; expressions that fail to
 * compile are not cached. Variables are untyped (`dyn`): their values are JSON.
 */
export class CelEngine {
  readonly #env: CelEnv = celEnv({ funcs: [...strings.filter((func) => func.name !== 'replace'), ...replaceFunctions, ...meteringFunctions, appendFunction] });
  readonly #limits: CelExpressionLimits;
  readonly #budget: number;
  readonly #cache: LRUCache<string, CompiledExpression>;
  #compilations = 0;
  #cacheHits = 0;

  /** @throws RangeError when `cacheSize`, `evaluationBudget` or a limit is not a positive integer. */
  constructor(options: CelEngineOptions = {}) {
    this.#limits = { ...DEFAULT_CEL_LIMITS, ...options.limits };
    this.#budget = options.evaluationBudget ?? DEFAULT_EVALUATION_BUDGET;
    for (const [name, value] of Object.entries({ ...this.#limits, evaluationBudget: this.#budget })) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`CEL limit ${name} must be a positive integer, got ${value}`);
    }
    this.#cache = new LRUCache({ max: options.cacheSize ?? DEFAULT_CACHE_SIZE });
  }

  /**
   * Save-time check of `expression` for a context offering `variables`: rejects expressions over
   * the limits, syntax errors (with line, column and the parser's explanation), unknown
   * functions or wrong argument counts, and identifiers that are not among `variables` (the
   * message names them and lists `variables`). Comprehension variables (`x` in
   * `list.all(x, x > 0)`) are local, and `input.customerType` reads only `input`.
   * Types are not checked: variables are `dyn`. Never throws.
   */
  check(expression: string, variables: readonly string[]): CelCheckResult {
    const compilation = this.#compile(expression);
    if (!compilation.ok) return compilation;
    const undeclared = describeUndeclaredVariables(compilation.compiled.identifiers, variables);
    return undeclared === undefined ? { ok: true } : { ok: false, message: undeclared };
  }

  /**
   * Evaluates `expression` with `variables` (JSON values by name; `undefined` ones count as
   * absent) and returns the result as plain JSON (conversions in `cel-to-json.ts`). `budget`
   * (from {@link newBudget}) lets several evaluations share one budget, e.g. all the arguments of
   * a step; by default the evaluation gets a budget of its own.
   * @throws CelEvaluationError when the expression does not compile, reads a variable not given,
   *   fails (missing key, no matching overload, int division by zero, ...), exceeds its cost
   *   budget, or returns a value with no JSON form (NaN, ±Infinity, ...).
   */
  evaluate(expression: string, variables: Readonly<Record<string, unknown>>, budget?: EvaluationBudget): JsonValue {
    return this.#evaluate(expression, variables, (value) => celToJson(value, this.#env), budget);
  }

  /** A fresh budget of the configured size, to share between evaluations (see {@link evaluate}). */
  newBudget(): EvaluationBudget {
    return new EvaluationBudget(this.#budget);
  }

  /**
   * Evaluates a condition: like {@link evaluate}, but the result must be a bool.
   * @throws CelEvaluationError as {@link evaluate}, and with reason `expected bool, got <type>` otherwise.
   */
  evaluateBool(expression: string, variables: Readonly<Record<string, unknown>>): boolean {
    return this.#evaluate(expression, variables, (value) => {
      if (typeof value === 'boolean') return value;
      throw wrongType('bool', value);
    });
  }

  /**
   * Evaluates to a string (e.g. a router's choice): like {@link evaluate}, but the result must be a string.
   * @throws CelEvaluationError as {@link evaluate}, and with reason `expected string, got <type>` otherwise.
   */
  evaluateString(expression: string, variables: Readonly<Record<string, unknown>>): string {
    return this.#evaluate(expression, variables, (value) => {
      if (typeof value === 'string') return value;
      throw wrongType('string', value);
    });
  }

  /** Current cache counters. */
  stats(): CelEngineStats {
    return { compilations: this.#compilations, cacheHits: this.#cacheHits, cachedExpressions: this.#cache.size };
  }

  #compile(expression: string): CompileResult {
    const cached = this.#cache.get(expression);
    if (cached !== undefined) {
      this.#cacheHits += 1;
      return { ok: true, compiled: cached };
    }
    this.#compilations += 1;
    const result = compileExpression(expression, this.#env, this.#limits);
    if (result.ok) this.#cache.set(expression, result.compiled);
    return result;
  }

  /**
   * Compiles, binds, evaluates and hands the CEL result to `finish` (which may throw), all within
   * `budget`; every failure becomes a CelEvaluationError. An evaluation that ran out of budget
   * fails even when the expression absorbed the error (`... || true`).
   */
  #evaluate<T>(
    expression: string,
    variables: Readonly<Record<string, unknown>>,
    finish: (value: CelValue) => T,
    budget: EvaluationBudget = this.newBudget(),
  ): T {
    const compilation = this.#compile(expression);
    if (!compilation.ok) throw new CelEvaluationError({ expression, reason: compilation.message });
    const given = Object.keys(variables).filter((name) => variables[name] !== undefined);
    const undeclared = describeUndeclaredVariables(compilation.compiled.identifiers, given);
    if (undeclared !== undefined) throw new CelEvaluationError({ expression, reason: undeclared });
    try {
      return withBudget(budget, () => {
        const result = compilation.compiled.evaluate(toCelBindings(variables));
        if (budget.exceeded) throw new CelBudgetExceededError(budget.limit);
        if (isCelError(result)) throw new CelEvaluationError({ expression, reason: withNumberHint(result.message), cause: result });
        return finish(result);
      });
    } catch (error) {
      if (error instanceof CelEvaluationError) throw error;
      // Values that are not JSON (found while binding or converting lazily), and results with no JSON form.
      throw new CelEvaluationError({ expression, reason: errorMessage(error), cause: error });
    }
  }
}

/** The reason given when an expression's result has the wrong type. */
function wrongType(expected: string, value: CelValue): Error {
  return new Error(`expected ${expected}, got ${celType(value).name}`);
}

/** Adds advice to the error users hit when they mix JSON numbers (doubles) with int literals in arithmetic. */
function withNumberHint(message: string): string {
  return /no matching overload .*\((double, int|int, double)\)/.test(message)
    ? `${message} (JSON numbers are doubles: write 1.0 rather than 1, or convert with int(...) or double(...))`
    : message;
}
