/**
 * The MCP bridge's cold start and round trip (issue #8): builds the bundle (`build:bridge`), then
 *
 * 1. cold start: from spawning `node apps/mcp-bridge/bin/switchyard-mcp.mjs` to the answer of the
 *    first tools/list over stdio (initialize, initialized, tools/list as raw JSON-RPC lines), for
 *    the bundle (the command with a fresh dist/), the sources (the command with
 *    SWITCHYARD_MCP_FROM_SOURCE=1: tsx), and for scale a bare `node -e` answering the same two
 *    requests; runs interleaved. `cpu` is the child's CPU time until the answer (all threads,
 *    Linux /proc), steadier than wall time on a loaded machine.
 * 2. `list_runs` (limit 20) round trip with the SDK Client: to the bundled command over stdio and to
 *    the bridge in this process (in-memory transport), next to the REST request the tool makes
 *    (`GET /api/v1/runs?page=1&perPage=20&includeNodeRuns=false`, what the tool asks) sent directly with undici; calls interleaved in rounds
 *    after a warm-up. The API is the real app on the engine's services (bench/support.ts) in this process,
 *    so every path includes the server's own work; the client of the stdio bridge also validates
 *    each result against the tool's outputSchema, as a client that listed the tools does.
 *
 * Prints figures and whether the goals are met (cold start median <= 300 ms, list_runs over stdio
 * median <= 3 ms); exits 1 only when something did not work (a wrong answer, a failed start, the
 * command falling back to the sources while the bundle was measured).
 *
 *   npm run bench:bridge [-- --cold-runs 10 --calls 300 --warmup 50 --budget-seconds 240]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { BIN, REPO_ROOT, buildBridge } from '../apps/mcp-bridge/scripts/build.ts';
import { listToolsOverStdio } from '../apps/mcp-bridge/scripts/stdio-handshake.ts';
import { bridgeInProcess, bridgeOverStdio, type BridgeClient } from '@switchyard/mcp-bridge/testing/bridge-clients';
import { boundedInteger, echoStep, openBenchServices, startBenchApp } from './support.ts';
import { createEnabledWorkflow, request } from './suite/http-figures.ts';
import { percentile } from './suite/stats.ts';

const { values } = parseArgs({
  options: {
    'cold-runs': { type: 'string', default: '10' },
    calls: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '50' },
    'budget-seconds': { type: 'string', default: '240' },
  },
});

const COLD_RUNS = boundedInteger('cold-runs', values['cold-runs'], 1, 100);
const CALLS = boundedInteger('calls', values.calls, 20, 10_000);
const WARMUP = boundedInteger('warmup', values.warmup, 0, 1_000);
const BUDGET_MS = boundedInteger('budget-seconds', values['budget-seconds'], 10, 1_800) * 1_000;
/** Rounds the measured calls are split into, each mode in turn. */
const ROUNDS = 4;
/** Runs in the store, so that a page of 20 is full. */
const STORED_RUNS = 25;
const PAGE = 20;
const GOAL_COLD_MS = 300;
const GOAL_ROUND_TRIP_MS = 3;
/** What the bin prints when it passes over a stale bundle. */
const FALLBACK_NOTICE = 'not using the bundle';

const deadline = Date.now() + BUDGET_MS;
const overBudget = () => Date.now() > deadline;
let failures = 0;
const fail = (message: string) => {
  failures++;
  console.log(`FAILED: ${message}`);
};

interface Stats {
  n: number;
  median: number;
  p95: number;
  max: number;
}

function statsOf(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, median: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) ?? Number.NaN };
}

const ms = (value: number, digits = 0) => (Number.isNaN(value) ? '-' : `${value.toFixed(digits)} ms`);

/** CPU time of a process so far, all threads (Linux); null elsewhere. */
function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Cold start

interface ColdSample {
  ms: number;
  cpuMs: number | null;
  tools: number;
  fellBack: boolean;
  stderr: string;
}

/** A stand-in server: node answering initialize and tools/list, nothing loaded. */
const NODE_FLOOR = [
  '-e',
  `let b='';process.stdin.on('data',d=>{b+=d;let i;while((i=b.indexOf('\\n'))>=0){const m=JSON.parse(b.slice(0,i));b=b.slice(i+1);` +
    `if(m.id!==undefined)process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:m.id,result:m.method==='tools/list'?{tools:[]}:{}})+'\\n')}})`,
];

/** Spawns `args`, times the first tools/list answer, closes stdin and waits for the exit. */
async function coldStart(args: string[], env: Record<string, string | undefined>): Promise<ColdSample> {
  const started = performance.now();
  let sample: ColdSample | null = null;
  const { stderr } = await listToolsOverStdio(args, { ...env, SWITCHYARD_API_URL: 'http://127.0.0.1:9' }, 'bench', (child, tools) => {
    sample = { ms: performance.now() - started, cpuMs: cpuMsOf(child.pid), tools, fellBack: false, stderr: '' };
  });
  const listed = sample!;
  listed.fellBack = stderr.includes(FALLBACK_NOTICE);
  listed.stderr = stderr;
  return listed;
}

// ---------------------------------------------------------------------------------------------
// Round trip

interface RunsPage {
  runs: unknown[];
}

/** One `list_runs` call through a bridge client; checks the page. */
async function listRunsVia(client: BridgeClient['client']): Promise<void> {
  const result = (await client.callTool({ name: 'list_runs', arguments: { limit: PAGE } })) as { structuredContent?: { ok?: boolean; data?: RunsPage } };
  const runs = result.structuredContent?.data?.runs;
  if (result.structuredContent?.ok !== true || runs?.length !== PAGE) throw new Error(`list_runs answered ${JSON.stringify(result).slice(0, 500)}`);
}

// ---------------------------------------------------------------------------------------------

const cpuList = cpus();
const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
console.log(
  `bridge bench: node ${process.version} ${process.platform}/${process.arch}, ${cpuList.length} CPUs (${cpuList[0]?.model.trim() ?? '?'}), ` +
    `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, load average ${loadAverage()}; budget ${BUDGET_MS / 1_000} s`,
);

const built = await buildBridge();
for (const warning of built.warnings) console.log(`build warning: ${warning}`);
console.log(
  `build: ${relative(REPO_ROOT, built.bundle)} ${(built.bundleBytes / 1024).toFixed(0)} KiB, code cache ${built.codeCacheBytes === null ? 'none' : `${(built.codeCacheBytes / 1024).toFixed(0)} KiB`}, ` +
    `${built.tools ?? '?'} tools listed by the warm-up, ${built.inputs} source files watched, ${(built.ms / 1_000).toFixed(1)} s`,
);

// ---- 1. cold start ----
const env = { ...process.env } as Record<string, string | undefined>;
delete env['SWITCHYARD_MCP_FROM_SOURCE'];
delete env['SWITCHYARD_MCP_CODE_CACHE_OUT'];
const commands: Array<{ label: string; args: string[]; env: Record<string, string | undefined> }> = [
  { label: 'bundle  (bin, fresh dist/)', args: [BIN], env: { ...env, LOG_LEVEL: 'info' } },
  { label: 'sources (bin, tsx)', args: [BIN], env: { ...env, LOG_LEVEL: 'info', SWITCHYARD_MCP_FROM_SOURCE: '1' } },
  { label: 'node -e (floor: spawn, no code)', args: NODE_FLOOR, env },
];
const cold = new Map(commands.map((command) => [command.label, [] as ColdSample[]]));
console.log(`\ncold start: spawn -> first tools/list answer over stdio; ${COLD_RUNS} runs each, interleaved`);
for (let run = 0; run < COLD_RUNS && !overBudget(); run++) {
  for (const command of commands) cold.get(command.label)!.push(await coldStart(command.args, command.env));
}
console.log(`  ${'command'.padEnd(32)} ${'tools'.padStart(5)} ${'n'.padStart(3)} ${'median'.padStart(9)} ${'p95'.padStart(9)} ${'max'.padStart(9)} ${'cpu median'.padStart(11)}`);
for (const command of commands) {
  const samples = cold.get(command.label)!;
  const wall = statsOf(samples.map((s) => s.ms));
  const cpuSamples = samples.flatMap((s) => (s.cpuMs === null ? [] : [s.cpuMs]));
  const tools = command.args === NODE_FLOOR ? '-' : [...new Set(samples.map((s) => s.tools))].join('/');
  console.log(
    `  ${command.label.padEnd(32)} ${tools.padStart(5)} ${String(wall.n).padStart(3)} ${ms(wall.median).padStart(9)} ${ms(wall.p95).padStart(9)} ${ms(wall.max).padStart(9)} ${ms(statsOf(cpuSamples).median).padStart(11)}`,
  );
}
const bundleCold = cold.get(commands[0]!.label)!;
if (bundleCold.some((s) => s.fellBack)) fail(`the command ran the sources in ${bundleCold.filter((s) => s.fellBack).length} bundle runs (a source file changed after the build); bundle figures are not valid`);
if (cold.get(commands[1]!.label)!.some((s) => s.tools !== bundleCold[0]?.tools)) fail('the bundle and the sources list different numbers of tools');
// The bin says at debug level whether V8 took the code cache (it is tied to the Node version and flags).
const debugRun = await coldStart([BIN], { ...env, LOG_LEVEL: 'debug' });
console.log(`  bundle code cache: ${/code cache ([^)]*)\)/.exec(debugRun.stderr)?.[1] ?? 'unknown (no loader line at LOG_LEVEL=debug)'}`);
const coldMedian = statsOf(bundleCold.map((s) => s.ms)).median;
console.log(`  goal: bundle median <= ${GOAL_COLD_MS} ms (anchor ~1 s): ${coldMedian <= GOAL_COLD_MS ? 'met' : 'NOT met'} (${ms(coldMedian)})`);

// ---- 2. list_runs round trip ----
// The real app on the engine's services (embedded store in memory, no background work) in this process.
const services = await openBenchServices({ dataDir: null });
const svc = await startBenchApp(services);
const rest = new Pool(svc.baseUrl, { connections: 1 });
let inProcess: BridgeClient | undefined;
let overStdio: (BridgeClient & { stderr: () => string }) | undefined;
try {
  const workflowId = await createEnabledWorkflow(svc, 'bench bridge', [echoStep('A', { n: 1 }), echoStep('B')]);
  for (let i = 0; i < STORED_RUNS; i++) {
    const triggered = await request(svc, 'POST', `/api/v1/workflows/${workflowId}/runs`, { initialInput: { i } });
    if (triggered.status !== 202) throw new Error(`trigger failed: ${triggered.status} ${triggered.text}`);
    await services.engine.idle(); // the run executes in this process
  }

  const restPath = `/api/v1/runs?page=1&perPage=${PAGE}&includeNodeRuns=false`; // what list_runs asks
  const viaRest = async () => {
    const response = await rest.request({ method: 'GET', path: restPath, headers: { accept: 'application/json' } });
    const body = JSON.parse(await response.body.text()) as RunsPage;
    if (response.statusCode !== 200 || body.runs.length !== PAGE) throw new Error(`GET ${restPath} answered ${response.statusCode}`);
  };
  inProcess = await bridgeInProcess(svc.baseUrl);
  overStdio = await bridgeOverStdio(svc.baseUrl);
  // As a client that lists the tools first (it then validates results against their outputSchema).
  await inProcess.tools();
  await overStdio.tools();
  // One checked call each: a well-formed envelope that matches the listed outputSchema.
  for (const bridge of [inProcess, overStdio]) {
    const checked = await bridge.call('list_runs', { limit: PAGE });
    if (!checked.ok || checked.data.runs.length !== PAGE) throw new Error(`list_runs: ${JSON.stringify(checked).slice(0, 500)}`);
  }
  if (overStdio.stderr().includes(FALLBACK_NOTICE)) fail('the stdio bridge ran the sources, not the bundle (a source file changed after the build)');

  const modes: Array<{ label: string; call: () => Promise<void> }> = [
    { label: 'REST direct (undici)', call: viaRest },
    { label: 'bridge in-process (memory)', call: () => listRunsVia(inProcess!.client) },
    { label: 'bridge over stdio (bundle)', call: () => listRunsVia(overStdio!.client) },
  ];
  const samples = new Map(modes.map((mode) => [mode.label, [] as number[]]));
  for (const mode of modes) for (let i = 0; i < WARMUP; i++) await mode.call();
  const perRound = Math.ceil(CALLS / ROUNDS);
  for (let round = 0; round < ROUNDS && !overBudget(); round++) {
    for (const mode of modes) {
      const into = samples.get(mode.label)!;
      for (let i = 0; i < perRound && into.length < CALLS; i++) {
        const t0 = performance.now();
        await mode.call();
        into.push(performance.now() - t0);
      }
    }
  }

  console.log(
    `\nlist_runs (limit ${PAGE}) round trip: ${CALLS} calls each after ${WARMUP} warm-up, ${ROUNDS} interleaved rounds; ${STORED_RUNS} runs stored; ` +
      `REST: GET ${restPath}`,
  );
  console.log(`  ${'path'.padEnd(32)} ${'n'.padStart(5)} ${'median'.padStart(9)} ${'p95'.padStart(9)} ${'max'.padStart(9)}`);
  const stats = new Map<string, Stats>();
  for (const mode of modes) {
    const s = statsOf(samples.get(mode.label)!);
    stats.set(mode.label, s);
    console.log(`  ${mode.label.padEnd(32)} ${String(s.n).padStart(5)} ${ms(s.median, 2).padStart(9)} ${ms(s.p95, 2).padStart(9)} ${ms(s.max, 2).padStart(9)}`);
  }
  const restMedian = stats.get(modes[0]!.label)!.median;
  const stdioMedian = stats.get(modes[2]!.label)!.median;
  console.log(
    `  bridge cost over REST (medians): in-process +${(stats.get(modes[1]!.label)!.median - restMedian).toFixed(2)} ms, stdio +${(stdioMedian - restMedian).toFixed(2)} ms`,
  );
  console.log(`  goal: stdio median <= ${GOAL_ROUND_TRIP_MS} ms (anchor 8.7 ms): ${stdioMedian <= GOAL_ROUND_TRIP_MS ? 'met' : 'NOT met'} (${ms(stdioMedian, 2)})`);
  if (overBudget()) console.log(`  (budget of ${BUDGET_MS / 1_000} s reached: fewer calls than asked)`);
} catch (error) {
  fail((error as Error).stack ?? String(error));
} finally {
  await overStdio?.close();
  await inProcess?.close();
  await rest.close();
  await svc.close();
  await services.close();
}
console.log(`\nload average at the end: ${loadAverage()}`);
process.exit(failures > 0 ? 1 : 0);
