import * as z from 'zod/v4';
import { ApiError, type ApiClient } from '../../../api-client.ts';
import { defineTool } from '../../../tool.ts';
import { RunSummarySchema, getRun, id, runPath, toRunSummary, type RestRun } from '../../shared.ts';

/** Most runs one timeline shows. */
const MAX_RUNS = 500;
/** Most generations above and below the run a timeline follows. */
const MAX_DEPTH = 10;

const TimelineRunSchema = RunSummarySchema.extend({
  relation: z.enum(['ancestor', 'self', 'descendant']).describe('How the run relates to the one asked about'),
  depth: z.number().int().describe('Generation: 0 for the root of the lineage, +1 per retry/rerun/replay'),
});
type TimelineRun = z.infer<typeof TimelineRunSchema>;

interface TimelineNode {
  run: TimelineRun;
  children: TimelineNode[];
}
const TimelineNodeSchema: z.ZodType<TimelineNode> = z.object({
  run: TimelineRunSchema,
  get children() {
    return z.array(TimelineNodeSchema);
  },
});

export const getTimeline = defineTool({
  name: 'get_timeline',
  title: 'Get the lineage of a run',
  description:
    "Returns a run's lineage: its parent chain up to the root run (a retry, node rerun or replay is a child of the run it was started " +
    'from) and every run started from it, recursively (at most 500 runs, 10 generations each way). By default a flat list `runs` ' +
    '(root first, each child after its parent, oldest sibling first) with `relation` (ancestor | self | descendant) and `depth`; with ' +
    '`tree: true`, `tree` nests them as { run, children }. Call it to find the latest retry of a failed run or where a run came from.',
  kind: 'read',
  input: z.object({
    runId: id('Run id'),
    tree: z.boolean().optional().describe('Nest the runs as a tree (default false: a flat list)'),
  }),
  output: z.object({
    runId: z.string(),
    rootRunId: z.string().describe('The oldest ancestor found'),
    runCount: z.number().int(),
    runs: z.array(TimelineRunSchema).optional().describe('Without tree: the runs, root first, depth first'),
    tree: TimelineNodeSchema.optional().describe('With tree: true'),
    truncated: z.boolean().describe('True when a bound (500 runs, 10 generations) or a deleted parent cut the lineage'),
    notes: z.array(z.string()).describe('What was left out, and why'),
  }),
  async run(args, { api }) {
    const self = await getRun(api, args.runId);
    const notes: string[] = [];
    const chain = await ancestorsOf(api, self, notes);
    const root = buildTree(chain, self);
    const count = { runs: chain.length + 1 };
    await addDescendants(api, root.at(-1)!, count, notes);
    const top = root[0]!;
    const flat: TimelineRun[] = [];
    const walk = (node: TimelineNode) => {
      flat.push(node.run);
      node.children.forEach(walk);
    };
    walk(top);
    return {
      runId: self.id,
      rootRunId: top.run.runId,
      runCount: flat.length,
      ...(args.tree ? { tree: top } : { runs: flat }),
      truncated: notes.length > 0,
      notes,
    };
  },
});

/** The parent chain of `run`, root first (bounded; a deleted parent ends it, with a note). */
async function ancestorsOf(api: ApiClient, run: RestRun, notes: string[]): Promise<RestRun[]> {
  const chain: RestRun[] = [];
  let parentId = run.parentRunId;
  while (parentId) {
    if (chain.length >= MAX_DEPTH) {
      notes.push(`Ancestors beyond ${MAX_DEPTH} generations were not followed (next: ${parentId}).`);
      break;
    }
    try {
      const parent = await getRun(api, parentId);
      chain.unshift(parent);
      parentId = parent.parentRunId;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
      notes.push(`Parent run ${parentId} no longer exists (deleted).`);
      break;
    }
  }
  return chain;
}

/** The chain (root first) and the run itself as a path of nested nodes; returns the nodes, root first. */
function buildTree(chain: readonly RestRun[], self: RestRun): TimelineNode[] {
  const nodes: TimelineNode[] = [...chain, self].map((run, depth) => ({ run: { ...toRunSummary(run), relation: run === self ? 'self' : 'ancestor', depth }, children: [] }));
  for (let i = 1; i < nodes.length; i++) nodes[i - 1]!.children.push(nodes[i]!);
  return nodes;
}

/** Adds the children of `node`, recursively, breadth first, within the bounds. */
async function addDescendants(api: ApiClient, start: TimelineNode, count: { runs: number }, notes: string[]): Promise<void> {
  const queue: TimelineNode[] = [start];
  const startDepth = start.run.depth;
  while (queue.length > 0) {
    const node = queue.shift()!;
    if (node.run.depth - startDepth >= MAX_DEPTH) {
      notes.push(`Descendants of run ${node.run.runId} (beyond ${MAX_DEPTH} generations) were not followed.`);
      continue;
    }
    const children = await childrenOf(api, node.run);
    for (const child of children.sort((a, b) => a.startedAt.localeCompare(b.startedAt))) {
      if (count.runs >= MAX_RUNS) {
        notes.push(`Stopped at ${MAX_RUNS} runs: more descendants exist.`);
        return;
      }
      count.runs += 1;
      // The children list has no workflow names: a child of the same workflow gets its parent's.
      const name = child.workflowName ?? (child.workflowDefinitionId === node.run.workflowId ? node.run.workflowName : null);
      const childNode: TimelineNode = { run: { ...toRunSummary(child, name), relation: 'descendant', depth: node.run.depth + 1 }, children: [] };
      node.children.push(childNode);
      queue.push(childNode);
    }
  }
}

/** Every child run of `run` (all pages, at most MAX_RUNS). */
async function childrenOf(api: ApiClient, run: TimelineRun): Promise<RestRun[]> {
  const children: RestRun[] = [];
  for (let page = 1; children.length < MAX_RUNS; page++) {
    const answer = await api.get<{ runs: RestRun[]; pagination: { totalPages: number } }>(runPath(run.workflowId, run.runId, '/children'), { page, perPage: 100 });
    children.push(...answer.runs);
    if (page >= answer.pagination.totalPages) break;
  }
  return children;
}
