/**
 * What a YAML body costs to parse (plugins/yaml-body.ts) against the same value as JSON
 * (JSON.parse of its JSON text), for bodies of about `--kib` KiB (default 1024, the body limit):
 * a realistic definition (many small step nodes), a flat mapping, a flow sequence of numbers, and
 * blank lines. Each shape is parsed 3 times (the first also warms up); prints the median ms.
 *
 * `npm run bench:yaml [-- --kib 256]`
 */
import { parseYamlDefinition } from '@switchyard/domain/yaml-definition';

const kibArg = process.argv.indexOf('--kib');
const BYTES = (kibArg > 0 ? Number(process.argv[kibArg + 1]) : 1024) * 1024 - 64;
const LIMIT = 1024 * 1024 * 8;

/** Repeats `unit(i)` until `BYTES` is reached. */
function fill(head: string, unit: (i: number) => string, tail = ''): string {
  const parts = [head];
  let length = head.length + tail.length;
  for (let i = 0; length < BYTES; i++) {
    const part = unit(i);
    if (length + part.length > BYTES) break;
    parts.push(part);
    length += part.length;
  }
  return parts.join('') + tail;
}

const SHAPES: Record<string, string> = {
  'definition (step nodes)': fill('name: big\ncanvas: {viewport: {x: 0, y: 0, zoom: 1}}\nnodes:\n', (i) => `  - name: step-${i}\n    nodeType: step\n    executorKey: echo\n    config: {message: "hi ${i}"}\n`),
  'flat mapping': fill('', (i) => `k${i}: value ${i}\n`),
  'flow sequence': fill('[', () => '1, ', '1]'),
  'blank lines': fill('', () => '\n', 'a: 1\n'),
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function time(run: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return median(times);
}

console.log(`| Shape (${Math.round(BYTES / 1024)} KiB of YAML) | YAML ms | JSON ms (same value) |`);
console.log('| --- | ---: | ---: |');
for (const [name, text] of Object.entries(SHAPES)) {
  const yamlMs = time(() => parseYamlDefinition(text, LIMIT));
  const json = JSON.stringify(parseYamlDefinition(text, LIMIT));
  const jsonMs = time(() => JSON.parse(json));
  console.log(`| ${name} | ${yamlMs.toFixed(0)} | ${jsonMs.toFixed(1)} |`);
}
