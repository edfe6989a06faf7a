/**
 * Micro-benchmark of the embedded store alone: the operations a step makes (insert of a node
 * run, read by `_id`, compare-and-set by `_id` + state, `$set` of an output, `$push` of an event)
 * on documents the size of a run with its definition snapshot, with the journal on disk.
 * Prints operations per second; asserts nothing. Each operation is measured one at a time, then
 * with `--concurrency` callers at once (the writes of one event-loop turn share one journal
 * write: group commit).
 *
 *   npx tsx bench/embedded-store-ops.ts [--ops 20000] [--concurrency 50] [--store <path of an embedded-store.ts>]
 *
 * `--store` points at another copy of the store (e.g. an older version extracted with
 * `git archive`) to compare implementations in the same conditions.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ObjectId } from 'mongodb';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '50' },
    store: { type: 'string', default: 'packages/store/src/embedded/embedded-store.ts' },
  },
});
const OPS = Number(values.ops);
const CONCURRENCY = Number(values.concurrency);
if (!Number.isInteger(OPS) || OPS < 1 || OPS > 1_000_000) throw new Error(`--ops must be an integer in [1, 1000000], got ${values.ops}`);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || CONCURRENCY > 1_000) throw new Error(`--concurrency must be an integer in [1, 1000], got ${values.concurrency}`);
const { openEmbeddedStore } = (await import(resolve(values.store))) as typeof import('../packages/store/src/embedded/embedded-store.ts');

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

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'embedded-bench-'));
  const store = await openEmbeddedStore({ dataDir, compactionMinEntries: Number.MAX_SAFE_INTEGER });
  const runs = store.collection('runs');
  const nodeRuns = store.collection('node_runs');
  await nodeRuns.createIndex({ run_id: 1, node_key: 1 }, { unique: true });
  const runIds = Array.from({ length: 100 }, () => new ObjectId());
  for (const _id of runIds) {
    await runs.insertOne({ _id, status: 'running', created_at: new Date(), definition_snapshot: snapshot(25), events: [], lease: { owner: null, until: null } });
  }
  const figures: Record<string, number> = {};
  let offset = 0;
  /** Runs `op` OPS times one at a time, then OPS times with CONCURRENCY callers (indexes never repeat across the two). */
  const time = async (label: string, op: (i: number) => Promise<unknown>) => {
    for (const callers of [1, CONCURRENCY]) {
      const first = offset;
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (next < OPS) await op(first + next++);
        }),
      );
      figures[`${label}${callers > 1 ? ` x${callers}` : ''}`] = Math.round(OPS / ((performance.now() - started) / 1000));
      offset += OPS;
    }
  };
  await time('insert node run', (i) =>
    nodeRuns.insertOne({ _id: new ObjectId(), run_id: runIds[i % 100], node_key: `k${i}`, status: 'done', input: { i, customer: 'c-1' }, output: { echo: { i, nested: { a: [1, 2, 3] } } }, started_at: new Date() }),
  );
  await time('findOne run by _id', (i) => runs.findOne({ _id: runIds[i % 100] }));
  await time('findOneAndUpdate run (CAS)', (i) =>
    runs.findOneAndUpdate({ _id: runIds[i % 100], status: 'running' }, { $set: { 'lease.owner': `w${i}`, 'lease.until': new Date() } }),
  );
  const inserted = 2 * OPS; // node runs k0 to k<2 OPS - 1>, of run i % 100
  await time('updateOne node run by unique key', (i) =>
    nodeRuns.updateOne({ run_id: runIds[(i % inserted) % 100], node_key: `k${i % inserted}` }, { $set: { status: `checked ${i}` } }),
  );
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
  for (const [label, perSecond] of Object.entries(figures)) console.log(`${label.padEnd(42)} ${String(perSecond).padStart(8)} ops/s`);
}

await main();
