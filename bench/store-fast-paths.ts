/**
 * What each fast path of the embedded store buys (issue "Docs and house", item 4): the store
 * operations a fast path serves, measured with the path on and with it bypassed
 * (`FAST_PATHS` of packages/store/src/embedded/fast-paths.ts, which falls back to the path's
 * reference: mingo, js-bson, a BSON round trip). The store is in memory (`dataDir: null`): the
 * journal's fsync is the same either way and would only dilute the difference, so the figures
 * are of the store's CPU work, the most a fast path can buy. Rounds alternate on and off (after
 * a warm-up of both) so that drift of a shared machine falls on both; each round is bounded by
 * a count and a time. Prints a table and writes bench/results/store-fast-paths.json; asserts
 * nothing. A fast path that buys under ~5 % goes (the rule).
 *
 *   npm run bench:store -- [--ops 20000] [--round-ms 1000] [--rounds 3] [--out bench/results/store-fast-paths.json]
 */
import { immutable } from '@switchyard/domain';
import { writeFile, mkdir } from 'node:fs/promises';
import { cpus, totalmem, type as osType, release } from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { ObjectId } from 'mongodb';
import { openEmbeddedStore } from '../packages/store/src/embedded/embedded-store.ts';
import { FAST_PATHS, type FastPath } from '../packages/store/src/embedded/fast-paths.ts';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '20000' },
    'round-ms': { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results/store-fast-paths.json' },
  },
});
const OPS = Number(values.ops);
const ROUND_MS = Number(values['round-ms']);
const ROUNDS = Number(values.rounds);
if (!Number.isInteger(OPS) || OPS < 1 || OPS > 1_000_000) throw new Error(`--ops must be an integer in [1, 1000000], got ${values.ops}`);
if (!Number.isFinite(ROUND_MS) || ROUND_MS < 10 || ROUND_MS > 60_000) throw new Error(`--round-ms must be in [10, 60000], got ${values['round-ms']}`);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 20) throw new Error(`--rounds must be an integer in [1, 20], got ${values.rounds}`);

/** A definition snapshot of `nodes` steps (about 200 bytes of BSON each). */
function snapshot(nodes: number) {
  return {
    name: 'bench',
    nodes: Array.from({ length: nodes }, (_, i) => ({
      id: `n${i}`,
      name: `step ${i}`,
      node_type: 'step',
      executor_key: 'builtin.echo',
      config: { customer: { $cel: 'input.customer' }, retries: 3, tags: ['a', 'b'] },
    })),
  };
}

/** One measured operation: the fast path it exercises and the call (`i` never repeats). */
interface Case {
  path: FastPath;
  operation: string;
  op: (i: number) => Promise<unknown>;
}

/** Result of one case: operations per second with the fast path on and off, and the gain. */
interface Figure {
  path: FastPath;
  operation: string;
  onOpsPerSec: number;
  offOpsPerSec: number;
  /** (on / off - 1) in percent: what the fast path buys. */
  gainPercent: number;
}

async function main(): Promise<void> {
  const store = await openEmbeddedStore({ dataDir: null });
  const runs = store.collection('runs');
  const nodeRuns = store.collection('node_runs');
  await nodeRuns.createIndex({ run_id: 1, node_key: 1 }, { unique: true });
  const runIds = Array.from({ length: 100 }, () => new ObjectId());
  for (const _id of runIds) {
    await runs.insertOne({ _id, status: 'running', attempt: 0, created_at: new Date(), definition_snapshot: snapshot(25), events: [], lease: { owner: null, until: null } });
  }
  for (let i = 0; i < 2_000; i++) {
    await nodeRuns.insertOne({ _id: new ObjectId(), run_id: runIds[i % 100], node_key: `seed${i}`, status: i % 10 === 0 ? 'failed' : 'done', input: { i }, output: { echo: { i } } });
  }
  // An output that wraps earlier ones, as an `echo` chain or a loop's gathering makes them: immutable, about 6 KB.
  const earlier = immutable({ steps: Array.from({ length: 30 }, (_, i) => ({ step: `s${i}`, result: { text: 'x'.repeat(120), n: i } })) });
  let key = 0;
  const cases: Case[] = [
    {
      path: 'plainUpdate',
      operation: 'updateOne run: $set lease, $inc attempt',
      op: (i) => runs.updateOne({ _id: runIds[i % 100] }, { $set: { 'lease.owner': `w${i}`, 'lease.until': new Date() }, $inc: { attempt: 1 } }),
    },
    {
      path: 'plainUpdate',
      operation: 'findOneAndUpdate run (CAS on status)',
      op: (i) => runs.findOneAndUpdate({ _id: runIds[i % 100], status: 'running' }, { $set: { status: 'running', heartbeat: new Date() } }, { projection: { _id: 1 } }),
    },
    { path: 'directEquality', operation: 'findOne run by _id', op: (i) => runs.findOne({ _id: runIds[i % 100] }, { projection: { status: 1 } }) },
    { path: 'directEquality', operation: 'find node runs by 2 unindexed equalities (scan of 2 000)', op: (i) => nodeRuns.find({ status: 'failed', node_key: `seed${(i % 200) * 10}` }) },
    { path: 'projection', operation: 'findOne run by _id, projection {status, lease}', op: (i) => runs.findOne({ _id: runIds[i % 100] }, { projection: { status: 1, lease: 1 } }) },
    { path: 'projection', operation: 'find 20 node runs of a run, projection {node_key, status}', op: (i) => nodeRuns.find({ run_id: runIds[i % 100] }, { projection: { node_key: 1, status: 1 } }) },
    { path: 'copyOnce', operation: 'findOne run by _id (25-node snapshot copied out)', op: (i) => runs.findOne({ _id: runIds[i % 100] }) },
    {
      path: 'copyOnce',
      operation: 'insertOne node run (copied in)',
      op: (i) => nodeRuns.insertOne({ _id: new ObjectId(), run_id: runIds[i % 100], node_key: `c${key++}`, status: 'done', input: { i, customer: 'c-1' }, output: { echo: { i, nested: { a: [1, 2, 3] } } }, started_at: new Date() }),
    },
    {
      path: 'bsonWriter',
      operation: 'insertOne node run wrapping a 6 KB immutable output',
      op: (i) => nodeRuns.insertOne({ _id: new ObjectId(), run_id: runIds[i % 100], node_key: `b${key++}`, status: 'done', output: { step: i, earlier } }),
    },
    {
      path: 'bsonWriter',
      operation: 'insertOne node run (plain data only)',
      op: (i) => nodeRuns.insertOne({ _id: new ObjectId(), run_id: runIds[i % 100], node_key: `p${key++}`, status: 'done', input: { i, customer: 'c-1' }, output: { echo: { i, nested: { a: [1, 2, 3] } } }, started_at: new Date() }),
    },
  ];

  let counter = 0;
  /** Runs `op` one call at a time until OPS calls or ROUND_MS; returns [calls, ms]. */
  const round = async (op: (i: number) => Promise<unknown>): Promise<[number, number]> => {
    const started = performance.now();
    let calls = 0;
    while (calls < OPS && performance.now() - started < ROUND_MS) {
      await op(counter++);
      calls++;
    }
    return [calls, performance.now() - started];
  };

  const figures: Figure[] = [];
  for (const { path, operation, op } of cases) {
    const totals = { on: [0, 0], off: [0, 0] };
    for (const on of [true, false]) {
      FAST_PATHS[path] = on;
      await round(op); // warm-up
    }
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which mode goes first, so that neither always follows the other.
      for (const on of r % 2 === 0 ? [true, false] : [false, true]) {
        FAST_PATHS[path] = on;
        const [calls, ms] = await round(op);
        const total = totals[on ? 'on' : 'off'];
        total[0] += calls;
        total[1] += ms;
      }
    }
    FAST_PATHS[path] = true;
    const onOpsPerSec = Math.round(totals.on[0]! / (totals.on[1]! / 1000));
    const offOpsPerSec = Math.round(totals.off[0]! / (totals.off[1]! / 1000));
    const figure = { path, operation, onOpsPerSec, offOpsPerSec, gainPercent: Math.round((onOpsPerSec / offOpsPerSec - 1) * 1000) / 10 };
    figures.push(figure);
    console.error(`${path}: ${operation}: ${onOpsPerSec} on, ${offOpsPerSec} off (${figure.gainPercent} %)`);
  }
  await store.close();

  const machine = { os: `${osType()} ${release()}`, cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  const rows = figures.map((f) => `| ${f.path} | ${f.operation} | ${f.onOpsPerSec} | ${f.offOpsPerSec} | ${f.gainPercent > 0 ? '+' : ''}${f.gainPercent} % |`);
  console.log(['| fast path | operation | ops/s on | ops/s off | gain |', '|---|---|---:|---:|---:|', ...rows].join('\n'));
  await mkdir(dirname(values.out!), { recursive: true });
  await writeFile(values.out!, `${JSON.stringify({ date: new Date().toISOString(), machine, settings: { ops: OPS, roundMs: ROUND_MS, rounds: ROUNDS, store: 'in memory (dataDir: null)' }, figures }, null, 2)}\n`);
}

await main();
