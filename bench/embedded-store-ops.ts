/**
 * Micro-benchmark of the embedded store alone: the operations a step makes (insert of a node
 * run, read by `_id`, compare-and-set by `_id` + state, `$set` of an output, `$push` of an event)
 * on documents the size of a run with its definition snapshot, with the journal on disk.
 * Prints operations per second; asserts nothing.
 *
 *   npx tsx bench/embedded-store-ops.ts [--ops 20000] [--store <path of an embedded-store.ts>]
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
  options: { ops: { type: 'string', default: '20000' }, store: { type: 'string', default: 'packages/store/src/embedded/embedded-store.ts' } },
});
const OPS = Number(values.ops);
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
  const time = async (label: string, op: (i: number) => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < OPS; i += 1) await op(i);
    figures[label] = Math.round(OPS / ((performance.now() - started) / 1000));
  };
  await time('insert node run', (i) =>
    nodeRuns.insertOne({ _id: new ObjectId(), run_id: runIds[i % 100], node_key: `k${i}`, status: 'done', input: { i, customer: 'c-1' }, output: { echo: { i, nested: { a: [1, 2, 3] } } }, started_at: new Date() }),
  );
  await time('findOne run by _id', (i) => runs.findOne({ _id: runIds[i % 100] }));
  await time('findOneAndUpdate run (CAS)', (i) =>
    runs.findOneAndUpdate({ _id: runIds[i % 100], status: 'running' }, { $set: { 'lease.owner': `w${i}`, 'lease.until': new Date() } }),
  );
  await time('updateOne node run by unique key', (i) =>
    nodeRuns.updateOne({ run_id: runIds[i % 100], node_key: `k${i}` }, { $set: { status: 'checked' } }),
  );
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
  for (const [label, perSecond] of Object.entries(figures)) console.log(`${label.padEnd(36)} ${String(perSecond).padStart(8)} ops/s`);
}

await main();
