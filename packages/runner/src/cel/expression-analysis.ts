/**
 * Static analysis of a parsed CEL expression, before it is planned: which variables it reads,
 * whether every function it calls exists with that call style and argument count, and whether
 * its syntax tree is shallow enough to evaluate safely.
 *
 * @bufbuild/cel has a type checker, but it is not part of the package's public exports, so this
 * walks the AST. Macros are already expanded by the parser: `has(a.b)` is a presence-test select
 * on `a`, and `list.all(x, p)` a comprehension whose loop variable `x` (and accumulator) are bound
 * inside the loop only. Field selection `input.customerType` reads the variable `input` only.
 */
import type { CelEnv, parse } from '@bufbuild/cel';
import { describePosition } from './source-position.ts';

/** A parsed expression, as returned by @bufbuild/cel's `parse`. */
export type ParsedExpression = ReturnType<typeof parse>;

/** A variable the expression reads: its name and where it is first read (`line 1, column 5`), if known. */
export interface IdentifierReference {
  readonly name: string;
  readonly position: string | undefined;
}

/**
 * Outcome of {@link analyzeExpression}: the free identifiers (first occurrence of each, in walk
 * order), or every problem found, joined into one message.
 */
export type ExpressionAnalysis =
  | { readonly ok: true; readonly identifiers: readonly IdentifierReference[] }
  | { readonly ok: false; readonly message: string };

/**
 * Analyzes `parsed` (parsed from `source`) in `env`: collects the identifiers it reads that no
 * comprehension binds, and reports calls to unknown functions, calls with the wrong style
 * (`f(x)` vs `x.f()`) or number of arguments, unknown message types in `Name{...}`, and syntax
 * trees deeper than `maxTreeDepth` (the walk stops there, so it never recurses deeper).
 * Identifiers are not judged here: which ones are declared depends on the caller. Never throws.
 */
export function analyzeExpression(parsed: ParsedExpression, source: string, env: CelEnv, maxTreeDepth: number): ExpressionAnalysis {
  const analyzer = new Analyzer(source, env, maxTreeDepth, parsed.sourceInfo?.positions ?? {});
  analyzer.visit(parsed.expr, 1, new Set());
  return analyzer.result();
}

export type Expr = ParsedExpression['expr'];
type ExprKind<K extends Expr['exprKind']['case']> = Extract<Expr['exprKind'], { case: K }>['value'];

/**
 * Functions the @bufbuild/cel planner implements itself rather than looking them up among the
 * environment's functions (indexing, the ternary, short-circuit logic, and the helper the
 * `all`/`exists` macros expand to). Names from cel-spec's operator constants.
 */
export const PLANNER_OPERATORS: ReadonlySet<string> = new Set([
  '_[_]',
  '_[?_]',
  '_?._',
  '_?_:_',
  '_&&_',
  '_||_',
  '@not_strictly_false',
  '__not_strictly_false__',
]);

/** Correct usage of each macro, for calls the parser did not expand because their shape was wrong. */
const MACRO_USAGE: ReadonlyMap<string, string> = new Map([
  ['has', 'has(value.field)'],
  ['all', 'list.all(x, predicate)'],
  ['exists', 'list.exists(x, predicate)'],
  ['exists_one', 'list.exists_one(x, predicate)'],
  ['filter', 'list.filter(x, predicate)'],
  ['map', 'list.map(x, expression) or list.map(x, predicate, expression)'],
]);

/**
 * Most comprehensions that may nest inside each other's bodies. Each level multiplies the work;
 * the evaluation budget (`evaluation-budget.ts`) stops runaway evaluations, and this limit keeps
 * expressions readable and their cost predictable.
 */
export const MAX_COMPREHENSION_NESTING = 2;

class Analyzer {
  readonly #source: string;
  readonly #env: CelEnv;
  readonly #maxDepth: number;
  readonly #positions: Readonly<Record<string, number>>;
  readonly #identifiers = new Map<string, IdentifierReference>();
  readonly #problems: string[] = [];
  #tooDeep = false;
  /** Comprehensions (all, exists, map, filter, ...) enclosing the loop body being visited. */
  #loopNesting = 0;
  #tooManyLoops = false;

  constructor(source: string, env: CelEnv, maxDepth: number, positions: Readonly<Record<string, number>>) {
    this.#source = source;
    this.#env = env;
    this.#maxDepth = maxDepth;
    this.#positions = positions;
  }

  result(): ExpressionAnalysis {
    if (this.#tooManyLoops) {
      this.#problems.unshift(
        `expression is too costly: comprehensions (all, exists, exists_one, map, filter) may nest at most ${MAX_COMPREHENSION_NESTING} deep, ` +
          'because each level multiplies the work',
      );
    }
    const problems = this.#tooDeep
      ? [
          `expression is too complex: its syntax tree is more than ${this.#maxDepth} levels deep ` +
            '(each operator, call, index or field selection in a chain such as a + b + c adds a level); split it up',
          ...this.#problems,
        ]
      : this.#problems;
    return problems.length === 0 ? { ok: true, identifiers: [...this.#identifiers.values()] } : { ok: false, message: problems.join('; ') };
  }

  /** Visits `expr` at tree depth `depth` (the root is 1) with the comprehension variables `bound` in scope. */
  visit(expr: Expr, depth: number, bound: ReadonlySet<string>): void {
    if (depth > this.#maxDepth) {
      this.#tooDeep = true;
      return;
    }
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'identExpr':
        this.#reference(kind.value.name.replace(/^\./, ''), expr, bound);
        return;
      case 'selectExpr':
        if (!this.#isMessageType(qualifiedName(expr))) this.#visitAll([kind.value.operand], depth, bound);
        return;
      case 'callExpr':
        this.#visitCall(expr, kind.value, depth, bound);
        return;
      case 'listExpr':
        this.#visitAll(kind.value.elements, depth, bound);
        return;
      case 'structExpr':
        this.#visitStruct(expr, kind.value, depth, bound);
        return;
      case 'comprehensionExpr':
        this.#visitComprehension(kind.value, depth, bound);
        return;
      default:
        return; // constants, and the empty expression
    }
  }

  #visitAll(children: readonly (Expr | undefined)[], depth: number, bound: ReadonlySet<string>): void {
    for (const child of children) {
      if (child !== undefined) this.visit(child, depth + 1, bound);
    }
  }

  #visitCall(expr: Expr, call: ExprKind<'callExpr'>, depth: number, bound: ReadonlySet<string>): void {
    // Like the planner: `a.b.f(x)` calls the function `a.b.f` when it exists (e.g. `strings.quote`).
    const qualifier = call.target === undefined ? undefined : qualifiedName(call.target);
    const qualifiedFunction = qualifier === undefined ? undefined : `${qualifier}.${call.function}`.replace(/^\./, '');
    if (qualifiedFunction !== undefined && this.#env.funcs.find(qualifiedFunction) !== undefined) {
      this.#checkOverloads(expr, qualifiedFunction, false, call.args.length);
      this.#visitAll(call.args, depth, bound);
      return;
    }
    if (!PLANNER_OPERATORS.has(call.function)) this.#checkOverloads(expr, call.function, call.target !== undefined, call.args.length);
    this.#visitAll([call.target, ...call.args], depth, bound);
  }

  #visitStruct(expr: Expr, struct: ExprKind<'structExpr'>, depth: number, bound: ReadonlySet<string>): void {
    if (struct.messageName !== '' && !this.#isMessageType(struct.messageName)) {
      this.#problem(expr, `unknown message type '${struct.messageName}'`);
    }
    for (const entry of struct.entries) {
      this.#visitAll([entry.keyKind.case === 'mapKey' ? entry.keyKind.value : undefined, entry.value], depth, bound);
    }
  }

  #visitComprehension(loop: ExprKind<'comprehensionExpr'>, depth: number, bound: ReadonlySet<string>): void {
    this.#visitAll([loop.iterRange, loop.accuInit], depth, bound);
    const withAccumulator = new Set([...bound, loop.accuVar]);
    const withLoopVariables = new Set([...withAccumulator, loop.iterVar, loop.iterVar2].filter((name) => name !== ''));
    this.#loopNesting += 1;
    if (this.#loopNesting > MAX_COMPREHENSION_NESTING) this.#tooManyLoops = true;
    this.#visitAll([loop.loopCondition, loop.loopStep], depth, withLoopVariables);
    this.#loopNesting -= 1;
    this.#visitAll([loop.result], depth, withAccumulator);
  }

  /**
   * Checks that `name` can be called as a method (`isMethod`) or a function with `argCount`
   * arguments. Mirrors @bufbuild/cel, which matches overloads on call style and arity exactly.
   */
  #checkOverloads(expr: Expr, name: string, isMethod: boolean, argCount: number): void {
    const group = this.#env.funcs.find(name);
    if (group === undefined) {
      const usage = MACRO_USAGE.get(name);
      this.#problem(expr, usage === undefined ? `unknown function '${name}'` : `invalid use of the macro '${name}': write ${usage}`);
      return;
    }
    const sameStyle = [...group].filter((overload) => (overload.target !== undefined) === isMethod);
    if (sameStyle.length === 0) {
      this.#problem(expr, isMethod ? `'${name}' is a function, not a method: write ${name}(...)` : `'${name}' is a method: write value.${name}(...)`);
      return;
    }
    const arities = [...new Set(sameStyle.map((overload) => overload.arguments.length))].sort((a, b) => a - b);
    if (!arities.includes(argCount)) {
      const expected = arities.join(' or ');
      this.#problem(expr, `'${name}' takes ${expected} argument${expected === '1' ? '' : 's'}, got ${argCount}`);
    }
  }

  #reference(name: string, expr: Expr, bound: ReadonlySet<string>): void {
    if (!bound.has(name) && !this.#identifiers.has(name)) {
      this.#identifiers.set(name, { name, position: this.#position(expr) });
    }
  }

  #problem(expr: Expr, message: string): void {
    const position = this.#position(expr);
    this.#problems.push(position === undefined ? message : `${message} at ${position}`);
  }

  #position(expr: Expr): string | undefined {
    const offset = this.#positions[String(expr.id)];
    return offset === undefined ? undefined : describePosition(this.#source, offset);
  }

  #isMessageType(name: string | undefined): boolean {
    return name !== undefined && this.#env.registry.getMessage(name.replace(/^\./, '')) !== undefined;
  }
}

/** `a.b.c` for a chain of field selections on an identifier; undefined for anything else. */
export function qualifiedName(expr: Expr): string | undefined {
  const fields: string[] = [];
  let kind = expr.exprKind;
  while (kind.case === 'selectExpr' && !kind.value.testOnly && kind.value.operand !== undefined) {
    fields.unshift(kind.value.field);
    kind = kind.value.operand.exprKind;
  }
  return kind.case === 'identExpr' ? [kind.value.name, ...fields].join('.') : undefined;
}
