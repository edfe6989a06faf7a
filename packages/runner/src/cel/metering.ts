/**
 * Instruments a parsed CEL expression so that its evaluation charges the evaluation's budget
 * (see `evaluation-budget.ts` for the cost model). The syntax tree is rewritten before planning:
 * - every comprehension's loop condition `c` becomes `@meter_iteration(c)` (evaluated once per
 *   iteration) and its range `r` becomes `@meter_shallow(r)`;
 * - every argument (and receiver) `a` of a function or operator becomes `@meter_value(a)`
 *   (`@meter_shallow(a)` for `size`), except
 *   constants, the macro accumulator, the receiver of a namespaced call such as `strings.quote`,
 *   and the operands of operators the planner evaluates itself (`&&`, `||`, `?:`, indexing).
 * - the step `@result + [e]` of `map` and `filter` becomes `@append(@result, e)` (see
 *   `accumulator.ts`).
 * The metering functions return their argument unchanged, so results are the same; errors
 * inside a metering call (the budget ran out) propagate like any CEL error.
 */
import { create } from '@bufbuild/protobuf';
import { ExprSchema } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { CelEnv } from '@bufbuild/cel';
import { APPEND } from './accumulator.ts';
import { METER_ITERATION, METER_SHALLOW, METER_VALUE } from './evaluation-budget.ts';
import { PLANNER_OPERATORS, qualifiedName } from './expression-analysis.ts';
import type { Expr, ParsedExpression } from './expression-analysis.ts';

/** Calls whose operands are not metered: evaluated by the planner itself (`&&`, `||`, `?:`, indexing). */
const UNMETERED_CALLS: ReadonlySet<string> = PLANNER_OPERATORS;

/**
 * Rewrites `parsed` in place (see the module comment) and returns it. `env` resolves namespaced
 * functions the way the planner does. The tree must already be within the depth limits (it is
 * walked recursively).
 */
export function addMetering(parsed: ParsedExpression, env: CelEnv): ParsedExpression {
  if (parsed.expr === undefined) return parsed;
  const ids = { next: maxId(parsed.expr) + 1n };
  const meter = (function_: string, expr: Expr): Expr =>
    create(ExprSchema, { id: ids.next++, exprKind: { case: 'callExpr', value: { function: function_, args: [expr] } } });
  const visit = (expr: Expr): void => {
    childExpressions(expr).forEach(visit);
    const kind = expr.exprKind;
    if (kind.case === 'comprehensionExpr') {
      const loop = kind.value;
      if (loop.iterRange) loop.iterRange = meter(METER_SHALLOW, loop.iterRange);
      if (loop.loopCondition) loop.loopCondition = meter(METER_ITERATION, loop.loopCondition);
    } else if (kind.case === 'callExpr' && !UNMETERED_CALLS.has(kind.value.function)) {
      const call = kind.value;
      appendInPlace(call);
      const meterFunction = call.function === 'size' ? METER_SHALLOW : METER_VALUE;
      call.args = call.args.map((arg) => (isMetered(arg) ? meter(meterFunction, arg) : arg));
      if (call.target !== undefined && isMetered(call.target) && !isNamespace(call.target, call.function, env)) {
        call.target = meter(meterFunction, call.target);
      }
    }
  };
  visit(parsed.expr);
  return parsed;
}

type Call = Extract<Expr['exprKind'], { case: 'callExpr' }>['value'];

/** Turns `@result + [e]` (the step of `map` and `filter`) into `@append(@result, e)`. */
function appendInPlace(call: Call): void {
  const [accumulator, appended] = call.args;
  if (call.function !== '_+_' || call.target !== undefined || call.args.length !== 2) return;
  if (accumulator?.exprKind.case !== 'identExpr' || !accumulator.exprKind.value.name.startsWith('@')) return;
  if (appended?.exprKind.case !== 'listExpr') return;
  const list = appended.exprKind.value;
  const [element] = list.elements;
  if (list.elements.length !== 1 || list.optionalIndices.length > 0 || element === undefined) return;
  call.function = APPEND;
  call.args = [accumulator, element];
}

/** Constants and the accumulator of a macro (`@result`) are not charged. */
function isMetered(expr: Expr): boolean {
  const kind = expr.exprKind;
  if (kind.case === 'constExpr') return false;
  return !(kind.case === 'identExpr' && kind.value.name.startsWith('@'));
}

/** True when `target.fn(...)` is the namespaced function `target.fn` (e.g. `strings.quote`), as the planner resolves it. */
function isNamespace(target: Expr, function_: string, env: CelEnv): boolean {
  const qualifier = qualifiedName(target);
  return qualifier !== undefined && env.funcs.find(`${qualifier}.${function_}`.replace(/^\./, '')) !== undefined;
}

/** The largest node id in the tree (new nodes get ids above it, so source positions stay right). */
function maxId(root: Expr): bigint {
  let max = 0n;
  const stack: Expr[] = [root];
  for (let expr = stack.pop(); expr !== undefined; expr = stack.pop()) {
    if (expr.id > max) max = expr.id;
    stack.push(...childExpressions(expr));
  }
  return max;
}

/** The direct subexpressions of `expr`, in source order. */
function childExpressions(expr: Expr): Expr[] {
  const kind = expr.exprKind;
  let children: (Expr | undefined)[];
  switch (kind.case) {
    case 'selectExpr':
      children = [kind.value.operand];
      break;
    case 'listExpr':
      children = kind.value.elements;
      break;
    case 'structExpr':
      children = kind.value.entries.flatMap((entry) => [entry.keyKind.case === 'mapKey' ? entry.keyKind.value : undefined, entry.value]);
      break;
    case 'comprehensionExpr':
      children = [kind.value.iterRange, kind.value.accuInit, kind.value.loopCondition, kind.value.loopStep, kind.value.result];
      break;
    case 'callExpr':
      children = [kind.value.target, ...kind.value.args];
      break;
    default:
      children = [];
  }
  return children.filter((child): child is Expr => child !== undefined);
}
