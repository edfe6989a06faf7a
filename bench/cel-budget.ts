/**
 * How long the most expensive CEL evaluations hold the event loop under the default evaluation
 * budget (issue "Reliability" item 1: no evaluation may hold it much more than ~50 ms). Each
 * hostile expression runs over 8,000- and 100,000-element lists, nested ones, a 1 MiB string and
 * an 8,000-key map, 5 times after a warm-up; prints the median and worst time and how each
 * evaluation ended.
 * Run: `npm run bench:cel-budget`.
 */
import { CelEngine } from '../packages/runner/src/cel/index.ts';
import { HEAVY_EXPRESSIONS, HOSTILE_EXPRESSIONS, hostileCelData } from '../packages/runner/src/testing/hostile-cel.ts';

const engine = new CelEngine();
const { input } = hostileCelData();
const EXPRESSIONS = [...HOSTILE_EXPRESSIONS, ...HEAVY_EXPRESSIONS];

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
