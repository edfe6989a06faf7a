/**
 * The reads behind list responses: workflow definitions by tag, node-run tallies of a page of
 * runs, unfinished runs per workflow (embedded store in memory; the filters they use are in the
 * contract suite for both backends).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LEGACY_ACCESS, type WorkflowNode } from '@switchyard/domain';
import { newId } from './documents.ts';
import { useInMemoryRepositories } from '../testing/in-memory-repositories.ts';

const db = useInMemoryRepositories();

const CANVAS = { viewport: { x: 0, y: 0, zoom: 1 } };
const NODES = [{ id: 'a', name: 'A', nodeType: 'step', executorKey: 'echo', children: [], trueSteps: [], falseSteps: [], choices: [] }] as unknown as WorkflowNode[];
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const ZERO = { pending: 0, running: 0, awaiting_approval: 0, completed: 0, failed: 0, skipped: 0, cancelled: 0 };

async function definition(name: string, tags?: string[], ms = 0): Promise<string> {
  return (await db.repos.definitions.create({ name, description: null, canvas: CANVAS, nodes: NODES, access: DEFAULT_LEGACY_ACCESS, ...(tags ? { tags } : {}) }, at(ms))).id;
}

async function run(workflowId: string): Promise<string> {
  const created = await db.repos.runs.create(
    {
      workflowDefinitionId: workflowId,
      workflowVersion: 1,
      triggerSource: 'test',
      initialInput: {},
      definitionSnapshot: { name: 'w', description: null, canvas: CANVAS, nodes: NODES },
      parentRunId: null,
      resolvedDependencies: [],
      triggeringUserId: null,
      triggeringUsername: null,
      triggeringScopes: [],
    },
    at(0),
  );
  return created.id;
}

describe('WorkflowDefinitions tags', () => {
  it('stores tags (none by default), filters by one, with the search, and reads a tag-less document as []', async () => {
    const a = await definition('alpha report', ['team:x', 'nightly'], 1);
    const b = await definition('beta report', ['team:x'], 2);
    const c = await definition('gamma', undefined, 3);
    expect((await db.repos.definitions.get(c))!.tags).toEqual([]);
    const ids = async (filter: { search?: string; tag?: string }) => (await db.repos.definitions.list(filter, 1, 20)).items.map((w) => w.id);
    expect(await ids({ tag: 'team:x' })).toEqual([b, a]);
    expect(await ids({ tag: 'nightly' })).toEqual([a]);
    expect(await ids({ tag: 'team:x', search: 'ALPHA' })).toEqual([a]);
    expect(await ids({ search: 'report' })).toEqual([b, a]);
    expect(await ids({})).toEqual([c, b, a]);
    expect((await db.repos.definitions.list({ tag: 'team:x' }, 2, 1)).total).toBe(2);

    await db.store.collection('workflow_definitions').updateOne({ name: 'alpha report' }, { $unset: { tags: '' } });
    expect((await db.repos.definitions.get(a))!.tags).toEqual([]);
    expect(await ids({ tag: 'nightly' })).toEqual([]);
    const updated = await db.repos.definitions.update(a, { tags: ['again'] }, false, at(9));
    expect(updated).toMatchObject({ tags: ['again'], version: 1 });
    expect(await ids({ tag: 'again' })).toEqual([a]);
  });
});

describe('NodeRuns.tallyByRuns', () => {
  it('tallies each run of a page from one read, every run included', async () => {
    const workflowId = await definition('w');
    const [busy, quiet, empty] = [await run(workflowId), await run(workflowId), await run(workflowId)];
    const start = (runId: string, nodeId: string, iterationPath = '') =>
      db.repos.nodeRuns.startAttempt({ runId, workflowDefinitionId: workflowId, nodeId, nodeName: nodeId, nodeType: 'step', iterationPath, inputSnapshot: null }, at(1));
    const loop = await start(busy, 'loop');
    for (const i of [1, 2, 3]) await db.repos.nodeRuns.end((await start(busy, 'tick', String(i))).id, { status: 'completed' }, at(2), null);
    await start(busy, 'tick', '4');
    await db.repos.nodeRuns.markAwaiting({ runId: busy, workflowDefinitionId: workflowId, nodeId: 'gate', nodeName: 'gate', nodeType: 'step', iterationPath: '4' }, at(3));
    await db.repos.nodeRuns.end((await start(quiet, 'a')).id, { status: 'failed', error: 'x' }, at(2), null);
    await db.repos.nodeRuns.end((await start(quiet, 'b')).id, { status: 'skipped' }, at(2), null);

    const find = db.store.collection('node_runs').find.bind(db.store.collection('node_runs'));
    let reads = 0;
    const collection = db.store.collection('node_runs') as { find: typeof find };
    collection.find = (...args) => {
      reads += 1;
      return find(...args);
    };
    const tallies = await db.repos.nodeRuns.tallyByRuns([busy, quiet, empty, busy]);
    expect(reads).toBe(1);
    expect([...tallies.keys()]).toEqual([busy, quiet, empty]);
    expect(tallies.get(busy)).toEqual({ total: 6, counts: { ...ZERO, running: 2, completed: 3, awaiting_approval: 1 }, activeNodeIds: ['gate', 'loop', 'tick'] });
    expect(tallies.get(quiet)).toEqual({ total: 2, counts: { ...ZERO, failed: 1, skipped: 1 }, activeNodeIds: [] });
    expect(tallies.get(empty)).toEqual({ total: 0, counts: ZERO, activeNodeIds: [] });
    expect(loop.status).toBe('running');
    expect((await db.repos.nodeRuns.tallyByRuns([])).size).toBe(0);
    expect(reads).toBe(1);
  });
});

describe('WorkflowRuns.countUnfinishedByWorkflow', () => {
  it('counts the runs that have not ended, per workflow, 0 for none', async () => {
    const [w1, w2] = [await definition('one'), await definition('two')];
    const [r1, r2] = [await run(w1), await run(w1)];
    await run(w2);
    await db.repos.runs.claim(r1, 'owner', 30_000, at(1));
    await db.repos.runs.claim(r2, 'owner', 30_000, at(1));
    await db.repos.runs.finish(r2, 'owner', { status: 'completed', finalOutput: null }, at(2));
    const unknown = newId();
    expect(await db.repos.runs.countUnfinishedByWorkflow([w1, w2, unknown, w1])).toEqual(new Map([[w1, 1], [w2, 1], [unknown, 0]]));
    expect((await db.repos.runs.countUnfinishedByWorkflow([])).size).toBe(0);
  });
});
