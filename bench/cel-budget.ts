/**
 * How long the most expensive CEL evaluations hold the event loop under the default evaluation
 * budget (issue "Reliability" item 1: no evaluation may hold it much more than ~50 ms). Each
 * hostile expression runs over 8,000- and 100,000-element lists, nested ones, a 1 MiB string and
 * an 8,000-key map, 5 times after a warm-up; prints the median and worst time and how each
 * evaluation ended.
 * Run: `npm run bench:cel-budget`.
 */
import { CelEngine } from '../packages/runner/src/cel/index.ts';

const engine = new CelEngine();
const l = Array.from({ length: 8000 }, (_, i) => i * 1.0);
const big = Array.from({ length: 100_000 }, (_, i) => i * 1.0);
const input = {
  l,
  s: 'x'.repeat(1 << 20),
  s50: 'x'.repeat(50_000),
  short: 'y'.repeat(1000),
  m: Object.fromEntries(l.map((v) => [`k${v}`, v])),
  big,
  big2: [...big],
  nested: { a: big },
  nested2: { a: [...big] },
};
const x1000 = `'${'x'.repeat(1000)}'`;
const EXPRESSIONS = [
  'input.l.filter(x, input.l.exists(y, y < 0.0)).size()',
  'input.l.filter(x, x in input.l).size()',
  'input.l.map(x, input.l)',
  'input.l.map(x, x)',
  'input.l.map(x, x).map(y, y).filter(z, z > 1.0).size()',
  'input.l.all(x, input.s.contains("y"))',
  'input.l.all(x, input.l == input.l)',
  'input.l.all(x, input.m.exists(k, k == "zz"))',
  'input.m.all(k, input.m.exists(j, j == "zz"))',
  'input.l.exists(x, x < 0.0 || x > 1e9 || x == 3.5 || x + 1.0 == 0.5 || string(x) == "a" || int(x) == 7 && x > 8.0)',
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
  'input.big[0] + input.big[99999]',
];

function once(expression: string): { ms: number; outcome: string } {
  const started = performance.now();
  let outcome: string;
  try {
    const result = engine.evaluate(expression, { input });
    outcome = `ok (${JSON.stringify(result).length} bytes of JSON)`;
  } catch (error) {
    outcome = /cost budget/.test((error as Error).message) ? 'over budget' : `failed: ${(error as Error).message.slice(0, 80)}`;
  }
  return { ms: performance.now() - started, outcome };
}

let worst = 0;
for (const expression of EXPRESSIONS) {
  once(expression); // compile and warm up
  const runs = Array.from({ length: 5 }, () => once(expression));
  const times = runs.map((run) => run.ms).sort((a, b) => a - b);
  worst = Math.max(worst, times[times.length - 1] ?? 0);
  console.log(`${times[2]?.toFixed(1).padStart(7)} ms median ${times[4]?.toFixed(1).padStart(7)} ms max  ${runs[0]?.outcome.padEnd(30)} ${expression.slice(0, 110)}`);
}
console.log(`worst evaluation: ${worst.toFixed(1)} ms (budget: the CelEngine default)`);
