/**
 * What declared inputs cost (issue #21 item 3, docs/guide/inputs.md), in-process on the domain
 * validator the API and the bridge share: for object schemas of 10 to 200 string properties (up to
 * the 16 KiB limit), the save-time check (`checkInputSchema`: one strict ajv compile), the first
 * check of a run input of a workflow version (compile, then cached) and a cached check (a copy of
 * the input, defaults applied, validated). Each is the event-loop time of one call; the save and
 * first figures are medians of `--rounds` (default 5) fresh compiles. Prints a table.
 *
 * `npm run bench:inputs [-- --rounds 5]`
 */
import { parseArgs } from 'node:util';
import { checkInputSchema, validateRunInput } from '@switchyard/domain/input-schema';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Math.min(50, Math.max(1, Number(values.rounds) || 5));
const CACHED_CALLS = 200;

/** An object schema of `count` string properties with defaults, a third of them required. */
function schemaOf(count: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) properties[`field${i}`] = { type: 'string', minLength: 1, maxLength: 100, default: 'x' };
  return { type: 'object', properties, required: Object.keys(properties).slice(0, Math.ceil(count / 3)) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timed(work: () => unknown): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

const rows: string[] = ['| properties | schema bytes | save check (ms) | first input check (ms) | cached input check (ms) |', '| ---: | ---: | ---: | ---: | ---: |'];
let version = 0;
for (const count of [10, 50, 100, 200]) {
  const schema = schemaOf(count);
  const input = { field0: 'a' };
  const save: number[] = [];
  const first: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    save.push(timed(() => checkInputSchema(schema)));
    const owner = { id: 'bench', version: ++version, inputSchema: schema };
    first.push(timed(() => validateRunInput(owner, input)));
  }
  const owner = { id: 'bench', version, inputSchema: schema };
  const cached = timed(() => {
    for (let i = 0; i < CACHED_CALLS; i++) validateRunInput(owner, input);
  }) / CACHED_CALLS;
  rows.push(`| ${count} | ${JSON.stringify(schema).length} | ${median(save).toFixed(1)} | ${median(first).toFixed(1)} | ${cached.toFixed(3)} |`);
}
console.log(`input-schema: Node ${process.version}, ${ROUNDS} rounds\n${rows.join('\n')}`);
