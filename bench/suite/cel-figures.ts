/**
 * The CEL figure (issue "Reliability" item 1: no evaluation may hold the event loop much more than
 * ~50 ms): the longest any of the hostile and heavy expressions of the runner's test corpus
 * (packages/runner/src/testing/hostile-cel.ts: quadratic filters over 8,000- and 100,000-element
 * lists, nested lists, a 1 MiB string, an 8,000-key map) takes to evaluate under the default
 * cost budget, after one warm-up evaluation each. CEL evaluation is synchronous and in-process,
 * so it is measured in the load generator's process, not the service's.
 */
import { CelEngine } from '@switchyard/runner';
import { HEAVY_EXPRESSIONS, HOSTILE_EXPRESSIONS, hostileCelData } from '../../packages/runner/src/testing/hostile-cel.ts';
import { median } from './stats.ts';

/** What {@link measureCelBudget} measured. */
export interface CelBudgetResult {
  /** The longest single evaluation, milliseconds. */
  readonly worstMs: number;
  /** The expression of that evaluation (its first 80 characters). */
  readonly worstExpression: string;
  /** The median of every measured evaluation, milliseconds. */
  readonly medianMs: number;
  /** Evaluations stopped by the cost budget, of `evaluations`. */
  readonly overBudget: number;
  readonly evaluations: number;
}

/**
 * Evaluates each hostile and heavy expression once to warm up, then `runs` times measured, under
 * the CelEngine's default budget. Never rejects for an expression's error (an over-budget or
 * failed evaluation is an outcome, counted in `overBudget` when it is the budget's).
 */
export function measureCelBudget(runs: number): CelBudgetResult {
  const engine = new CelEngine();
  const { input } = hostileCelData();
  const times: number[] = [];
  let worstMs = 0;
  let worstExpression = '';
  let overBudget = 0;
  const once = (expression: string): { ms: number; overBudget: boolean } => {
    const started = performance.now();
    let over = false;
    try {
      engine.evaluate(expression, { input });
    } catch (error) {
      over = /cost budget/.test((error as Error).message);
    }
    return { ms: performance.now() - started, overBudget: over };
  };
  for (const expression of [...HOSTILE_EXPRESSIONS, ...HEAVY_EXPRESSIONS]) {
    once(expression); // compile and warm up
    for (let i = 0; i < runs; i++) {
      const { ms, overBudget: over } = once(expression);
      times.push(ms);
      if (over) overBudget++;
      if (ms > worstMs) {
        worstMs = ms;
        worstExpression = expression.slice(0, 80);
      }
    }
  }
  return { worstMs, worstExpression, medianMs: median(times), overBudget, evaluations: times.length };
}
