/**
 * The benchmark suite (issue #10): every figure of the issue's table, measured in one run against
 * one service process (forked, see suite/service-child.ts), printed as a table (figure | measured | goal | met?) with peak RSS and DATA_DIR bytes,
 * and written as JSON to bench/results/latest.json.
 *
 *   npm run bench [-- --quick] [-- --save] [-- --no-profile]
 *
 * `--quick` shrinks every workload to a few seconds in all and asserts nothing (CI: it proves the
 * suite still runs); it exits 1 only when a workload crashed. `--save` also writes
 * bench/results/<YYYY-MM-DD>-<host>.json (with the machine description) to commit. A full run
 * exits 1 when a workload failed or a gate had other than exactly one winner; goals missed are
 * reported, not failed on. A full run profiles the service's CPU in every measured workload (V8's
 * sampler at 1 ms, see suite/cpu-profile.ts) and reports the top self-time functions of each
 * figure that misses its goal; `--no-profile` leaves that out. Servers listen on 127.0.0.1 only.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderTable, writeReport } from './suite/report.ts';
import { runSuite } from './suite/run-suite.ts';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, save: { type: 'boolean', default: false }, 'no-profile': { type: 'boolean', default: false } },
});
const report = await runSuite({ quick: values.quick, profile: !values.quick && !values['no-profile'], log: (line) => console.error(`[bench] ${line}`) });
console.log(renderTable(report));
for (const path of writeReport(report, RESULTS_DIR, values.save)) console.error(`[bench] wrote ${path}`);
const oneWinner = report.figures.find((figure) => figure.key === 'approve.gatesWithOneWinner');
const failed = report.errors.length > 0 || oneWinner?.met === false;
// Pools and servers are closed; exit explicitly anyway so a stray timer cannot hold the run.
process.exit(failed ? 1 : 0);
