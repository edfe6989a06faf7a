import * as z from 'zod/v4';
import type { ApiClient } from '../../../api-client.ts';
import { ToolError } from '../../../envelope.ts';
import { defineTool } from '../../../tool.ts';
import { getRun, id, runPath, type RestRun } from '../../shared.ts';
import { ChildRunSchema, startChildRun } from './run-actions.ts';

/** A node of the run's definition snapshot (containers hold `children`). */
interface SnapshotNode {
  id: string;
  children?: SnapshotNode[] | null;
}

export const retryRun = defineTool({
  name: 'retry_run',
  title: 'Retry a run',
  description:
    'Starts a new (child) run from an ended run (completed, failed or cancelled) on the same definition version. By default a full ' +
    'retry: same input, every step that completed is reused and its human decisions replayed, so only what did not complete executes — ' +
    'the usual fix after a transient failure. For a fork give `rerunNodes` (node ids to execute again, with the containers around ' +
    'them) and/or `inputOverrides` (merged over the source input): every other completed node is reused as it was, so list the nodes ' +
    'after them too when they must see the new outputs or input; gates of nodes that execute again are asked again. Returns the ' +
    'child run id (`runId`), `parentRunId`, what was reused and rerun, and the child run summary; it runs in the background.',
  kind: 'write',
  input: z.object({
    runId: id('Run id of the ended source run'),
    rerunNodes: z.array(z.string().min(1)).optional().describe('Fork: node ids to execute again (everything else that completed is reused)'),
    inputOverrides: z.record(z.string(), z.unknown()).optional().describe('Fork: fields merged over the source run input'),
  }),
  output: ChildRunSchema.extend({
    mode: z.enum(['full', 'fork']),
    reusedNodeIds: z.array(z.string()).describe('Nodes whose completed output the child reuses'),
    rerunNodeIds: z.array(z.string()).describe('Fork: the nodes asked to execute again, with their containers'),
    initialInput: z.record(z.string(), z.unknown()).describe('The input of the child run'),
  }),
  async run(args, { api }) {
    const source = await getRun(api, args.runId);
    const completed = (await nodeRunsOf(api, source)).filter((nodeRun) => nodeRun.status === 'completed');
    const sourceInput = source.initialInput ?? {};
    if (args.rerunNodes === undefined && args.inputOverrides === undefined) {
      const child = await startChildRun(api, source, '/retry');
      return { ...child, mode: 'full' as const, reusedNodeIds: distinct(completed.map((n) => n.nodeId)), rerunNodeIds: [], initialInput: sourceInput };
    }
    const rerun = withContainers(snapshotNodesOf(source), distinct(args.rerunNodes ?? []));
    // One reused node run per node (the API takes one): the last completed one.
    const reuse = new Map<string, string>();
    for (const nodeRun of completed) if (!rerun.includes(nodeRun.nodeId)) reuse.set(nodeRun.nodeId, nodeRun.id);
    const initialInput = { ...sourceInput, ...(args.inputOverrides ?? {}) };
    const resolvedDependencies = [
      ...[...reuse].map(([nodeId, sourceNodeRunId]) => ({ nodeId, resolution: 'reuse_previous_output', sourceNodeRunId })),
      ...rerun.map((nodeId) => ({ nodeId, resolution: 'rerun' })),
    ];
    const child = await startChildRun(api, source, '/retry', { resolvedDependencies, initialInput });
    return { ...child, mode: 'fork' as const, reusedNodeIds: [...reuse.keys()], rerunNodeIds: rerun, initialInput };
  },
});

/** Every node run of the run (the detail shows the first 100; the rest are read page by page). */
async function nodeRunsOf(api: ApiClient, run: RestRun): Promise<RestRun['nodeRuns']> {
  if (run.nodeRuns.length >= run.nodeRunCount) return run.nodeRuns;
  const all: RestRun['nodeRuns'] = [];
  for (let page = 1; ; page++) {
    const answer = await api.get<{ nodeRuns: RestRun['nodeRuns']; pagination: { totalPages: number } }>(runPath(run.workflowDefinitionId, run.id, '/nodes'), { page, perPage: 100 });
    all.push(...answer.nodeRuns);
    if (page >= answer.pagination.totalPages) return all;
  }
}

function snapshotNodesOf(run: RestRun): SnapshotNode[] {
  return ((run['definitionSnapshot'] as { nodes?: SnapshotNode[] } | undefined)?.nodes ?? []) as SnapshotNode[];
}

/**
 * `nodeIds` with the containers around them (a completed container reused as a whole would not
 * enter its children again). NODE_NOT_FOUND for an id not in the definition.
 */
function withContainers(nodes: SnapshotNode[], nodeIds: string[]): string[] {
  const ancestors = new Map<string, string[]>();
  const walk = (list: SnapshotNode[], above: string[]) => {
    for (const node of list) {
      ancestors.set(node.id, above);
      walk(node.children ?? [], [...above, node.id]);
    }
  };
  walk(nodes, []);
  const unknown = nodeIds.filter((nodeId) => !ancestors.has(nodeId));
  if (unknown.length > 0) {
    throw new ToolError('NODE_NOT_FOUND', `rerunNodes: no node ${unknown.map((n) => `'${n}'`).join(', ')} in the run's definition`, {
      fields: ['rerunNodes'],
      nodeIds: unknown,
      knownNodeIds: [...ancestors.keys()],
    });
  }
  return distinct(nodeIds.flatMap((nodeId) => [...ancestors.get(nodeId)!, nodeId]));
}

function distinct(values: string[]): string[] {
  return [...new Set(values)];
}
