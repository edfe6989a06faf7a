/**
 * Expressions that held the event loop for seconds or more before the CEL evaluation budget, with
 * the data they ran over; shared by the budget's tests and the bench suite (bench/suite/cel-figures.ts).
 */

/** `{ input }` for {@link HOSTILE_EXPRESSIONS}: 8,000- and 100,000-element lists, nested ones, a 1 MiB string, an 8,000-key map. */
export function hostileCelData(): { input: Record<string, unknown> } {
  const l = Array.from({ length: 8000 }, (_, i) => i * 1.0);
  const big = Array.from({ length: 100_000 }, (_, i) => i * 1.0);
  return {
    input: {
      l,
      s: 'x'.repeat(1 << 20),
      s50: 'x'.repeat(50_000),
      short: 'y'.repeat(1000),
      m: Object.fromEntries(l.map((v) => [`k${v}`, v])),
      big,
      big2: [...big],
      nested: { a: big },
      nested2: { a: [...big] },
    },
  };
}

const x1000 = `'${'x'.repeat(1000)}'`;

/** Each must stop at the budget (they would take from seconds to minutes otherwise). */
export const HOSTILE_EXPRESSIONS: readonly string[] = [
  'input.l.filter(x, input.l.exists(y, y < 0.0)).size()',
  'input.l.filter(x, x in input.l).size()',
  'input.l.map(x, input.l)',
  'input.l.all(x, input.l == input.l)',
  'input.l.exists(x, input.s.matches("a+b"))',
  'input.l.map(x, input.short).join("")',
  'input.l.all(x, input.s + input.s != "a")',
  'input.l.exists_one(x, [x, x, x, x].exists(y, y < 0.0))',
  'input.l.all(x, size(input.s) > 0)',
  'input.l.all(x, [input.big] == [input.big2])',
  'input.l.all(x, input.nested == input.nested2)',
  'input.l.all(x, size("%s".format([input.big])) > 0)',
  'size(input.s50.replace("x", input.short.substring(0, 100)))',
  `size(${x1000}.replace('x', ${x1000}).replace('x', ${x1000}))`,
];

/** Heavy but legitimate: each completes within the budget. */
export const HEAVY_EXPRESSIONS: readonly string[] = [
  'input.l.map(x, x)',
  'input.l.map(x, x).map(y, y).filter(z, z > 1.0).size()',
  'input.l.all(x, input.s.contains("y"))',
  'input.l.all(x, input.m.exists(k, k == "zz"))',
  'input.m.all(k, input.m.exists(j, j == "zz"))',
  'input.l.exists(x, x < 0.0 || x > 1e9 || x == 3.5 || x + 1.0 == 0.5 || string(x) == "a" || int(x) == 7 && x > 8.0)',
  'input.big[0] + input.big[99999]',
];
