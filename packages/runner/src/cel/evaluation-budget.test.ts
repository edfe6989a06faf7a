import { describe, expect, it } from 'vitest';
import { resolveArguments } from './arguments.ts';
import { CelEngine } from './cel-engine.ts';
import { CelEvaluationError } from './cel-evaluation-error.ts';
import { EvaluationBudget } from './evaluation-budget.ts';
import { HEAVY_EXPRESSIONS, HOSTILE_EXPRESSIONS, hostileCelData } from '../testing/hostile-cel.ts';

const engine = new CelEngine();
const hostile = hostileCelData();
const numbers = (count: number) => Array.from({ length: count }, (_, i) => i * 1.0);

/** The message of the CelEvaluationError that `run` throws. */
function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CelEvaluationError);
    return (error as Error).message;
  }
  throw new Error('expected a CelEvaluationError');
}

describe('the evaluation budget', () => {
  it('stops the quadratic expression of the hostile test (8,000 numbers) with a budget error', () => {
    const message = failure(() => engine.evaluate('input.l.filter(x, input.l.exists(y, y < 0.0)).size()', { input: { l: numbers(8000) } }));
    expect(message).toMatch(/exceeded its cost budget of 100000 work units/);
  });

  it.each(HOSTILE_EXPRESSIONS)('stops %s at the budget', (expression) => {
    expect(failure(() => engine.evaluate(expression, hostile))).toMatch(/cost budget/);
  });

  it.each(HEAVY_EXPRESSIONS)('lets the heavy but legitimate %s through', (expression) => {
    expect(() => engine.evaluate(expression, hostile)).not.toThrow();
  });

  it('replaces in linear time with the semantics of the strings extension', () => {
    expect(engine.evaluate("'a.b.c'.replace('.', '-')", {})).toBe('a-b-c');
    expect(engine.evaluate("'a.b.c'.replace('.', '-', 1)", {})).toBe('a-b.c');
    expect(engine.evaluate("'a.b.c'.replace('.', '-', 0)", {})).toBe('a.b.c');
    expect(engine.evaluate("'a.b.c'.replace('.', '-', -1)", {})).toBe('a-b-c');
    expect(engine.evaluate("'aaa'.replace('aa', 'b')", {})).toBe('ba');
    expect(engine.evaluate("'ab'.replace('', '-')", {})).toBe('-a-b-');
    expect(engine.evaluate("'ab'.replace('', '-', 2)", {})).toBe('-a-b');
  });

  it('fails an evaluation that ran out even when the expression absorbed the error', () => {
    const variables = { input: { l: numbers(8000) } };
    expect(failure(() => engine.evaluate('input.l.exists(x, input.l.exists(y, y < 0.0)) || true', variables))).toMatch(/cost budget/);
  });

  it('lets ordinary expressions over large data through, with unchanged results', () => {
    const items = numbers(20_000).map((price) => ({ price }));
    expect(engine.evaluate('input.items.filter(i, i.price >= 19998.0).map(i, i.price * 2.0)', { input: { items } })).toEqual([39996, 39998]);
    expect(engine.evaluate('size(input.items) == 20000 && input.items[19999].price == 19999.0', { input: { items } })).toBe(true);
    expect(engine.evaluate("strings.quote(input.name) + ' ' + input.name.upperAscii()", { input: { name: 'ada' } })).toBe('"ada" ADA');
    expect(engine.evaluate('[[1.0], [2.0, 3.0]].map(x, x.map(y, y * 2.0))', {})).toEqual([[2], [4, 6]]);
    expect(engine.evaluate('[1.0, 2.0, 3.0].map(x, x > 1.0, x * 10.0)', {})).toEqual([20, 30]);
    expect(engine.evaluate('[1.0, 2.0, 3.0].exists_one(x, x == 2.0)', {})).toBe(true);
  });

  it('maps and filters thousands of elements into a flat list (no stack overflow)', () => {
    const result = engine.evaluate('input.l.map(x, x + 1.0).filter(x, x > 0.0)', { input: { l: numbers(6_000) } }) as number[];
    expect(result).toHaveLength(6_000);
    expect(result[5_999]).toBe(6_000);
  });

  it('is configurable per engine, and one budget can be shared by several evaluations', () => {
    const small = new CelEngine({ evaluationBudget: 50 });
    expect(failure(() => small.evaluate('input.l.all(x, x >= 0.0)', { input: { l: numbers(100) } }))).toMatch(/budget of 50 work units/);
    const shared = engine.newBudget();
    engine.evaluate('input.l.all(x, x >= 0.0)', { input: { l: numbers(1000) } }, shared);
    expect(shared.spent).toBeGreaterThan(2000);
    expect(() => new CelEngine({ evaluationBudget: 0 })).toThrow(RangeError);
  });

  it('shares one budget across all the expressions of a step config', () => {
    const variables = { input: { l: numbers(20_000) } };
    const one = { a: { $cel: 'input.l.all(x, x >= 0.0)' } };
    expect(() => resolveArguments(one, variables, engine)).not.toThrow();
    const many = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`a${i}`, { $cel: 'input.l.all(x, x >= 0.0)' }]));
    expect(failure(() => resolveArguments(many, variables, engine))).toMatch(/^config\.a\d: .*cost budget/);
  });

  it('counts charges and throws once past the limit', () => {
    const budget = new EvaluationBudget(10);
    budget.charge(10);
    expect(budget.exceeded).toBe(false);
    expect(() => budget.charge(1)).toThrow(/cost budget of 10/);
    expect(budget.exceeded).toBe(true);
  });
});
