import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { INLINE_SNAPSHOT_MAX_BYTES, SnapshotBudget } from '@switchyard/domain';
import { nodeRunViews } from '../src/services/run-views.ts';
import { useInMemoryRepositories } from '../../../packages/store/src/testing/in-memory-repositories.ts';

const db = useInMemoryRepositories();

const runId = new ObjectId();
const big = 'b'.repeat(INLINE_SNAPSHOT_MAX_BYTES + 10);

/** A node run document as an older version wrote it: no sizes, or only some. */
async function legacyNodeRun(nodeId: string, input: unknown, sizes?: Record<string, number>): Promise<string> {
  const _id = new ObjectId();
  await db.store.collection('node_runs').insertOne({
    _id,
    workflow_run_id: runId,
    workflow_definition_id: new ObjectId(),
    node_id: nodeId,
    node_name: nodeId,
    node_type: 'step',
    iteration_path: '',
    status: 'completed',
    attempt: 1,
    input_snapshot: input,
    output_snapshot: { ok: nodeId },
    error: null,
    started_at: new Date(),
    finished_at: new Date(),
    created_at: new Date(),
    updated_at: new Date(),
    ...(sizes ? { snapshot_bytes: sizes } : {}),
  });
  return _id.toHexString();
}

describe('nodeRunViews', () => {
  it('measures node runs stored without sizes, or with some of them, and shows or omits their snapshots correctly', async () => {
    await legacyNodeRun('a', { text: big });
    await legacyNodeRun('b', { text: big }, { output: 11, original_output: 4 }); // an end() after the upgrade, input unmeasured
    await legacyNodeRun('c', { small: true });
    const heads = await db.repos.nodeRuns.listHeads(runId.toHexString(), 0, 10);
    const views = await nodeRunViews(db.repos, heads, new SnapshotBudget());
    expect(views.map((v) => [v.nodeId, v.inputSnapshot === null, v.omittedSnapshots?.inputSnapshot ?? null, v.outputSnapshot])).toEqual([
      ['a', true, Buffer.byteLength(JSON.stringify({ text: big })), { ok: 'a' }],
      ['b', true, Buffer.byteLength(JSON.stringify({ text: big })), { ok: 'b' }],
      ['c', false, null, { ok: 'c' }],
    ]);
    // The sizes are now recorded: the next read needs no measuring.
    const again = await db.repos.nodeRuns.listHeads(runId.toHexString(), 0, 10);
    expect(again.every((head) => typeof head.snapshotBytes?.input === 'number' && typeof head.snapshotBytes.originalOutput === 'number')).toBe(true);
  });

  it('shows snapshots within the response budget and omits the rest with their sizes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await legacyNodeRun(`n${i}`, { text: 'x'.repeat(20_000) }));
    const heads = await db.repos.nodeRuns.listHeads(runId.toHexString(), 0, 10);
    const views = await nodeRunViews(db.repos, heads, new SnapshotBudget(45_000));
    expect(views.map((v) => v.inputSnapshot !== null)).toEqual([true, true, false]);
    expect(views[2]?.omittedSnapshots).toEqual({ inputSnapshot: 20_011 });
  });
});
