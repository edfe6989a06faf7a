import * as z from 'zod/v4';
import { defineTool } from '../../../tool.ts';
import { getRun, id } from '../../shared.ts';
import { ByteBudget, SNAPSHOT_BUDGET_BYTES, allNodeRuns, requireNode, snapshotsOf } from './reads.ts';

const ArtifactSchema = z.object({
  artifactId: z.string().describe('<runId>:<nodeId>:<iterationPath>'),
  nodeRunId: z.string(),
  nodeId: z.string(),
  nodeName: z.string(),
  nodeType: z.string(),
  iterationPath: z.string().describe("Loop iterations around the node, e.g. '2' or '1/3'; '' outside loops"),
  finishedAt: z.string().nullable(),
  sizeBytes: z.number().int().describe('Size of the output, bytes of JSON'),
  edited: z.boolean().describe('A reviewer replaced the output (the node run keeps the original)'),
  value: z.unknown().describe('The output; null when left out (see valueLeftOut)'),
  valueLeftOut: z.boolean().describe('True when the value did not fit in this answer: ask again with nodeId (and a smaller limit)'),
});

export const listArtifacts = defineTool({
  name: 'list_artifacts',
  title: 'List run artifacts',
  description:
    'Lists the outputs of the nodes of a run that completed (one artifact per node run: each loop iteration is its own, with its ' +
    '`iterationPath`), in the order they started, with node id and name, size and the output `value`. `nodeId` keeps one node; ' +
    '`limit` (1-500, default 100) caps the list. Values are given in full up to 2 MiB per answer: the ones beyond are left out ' +
    '(`valueLeftOut`, and named in `notes`) — ask again with `nodeId` for them. Use get_node_detail for inputs, errors and attempts.',
  kind: 'read',
  input: z.object({
    runId: id('Run id'),
    nodeId: z.string().min(1).optional().describe('Only the outputs of this node'),
    limit: z.number().int().min(1).max(500).optional().describe('Artifacts to return (default 100)'),
  }),
  output: z.object({
    runId: z.string(),
    workflowId: z.string(),
    artifacts: z.array(ArtifactSchema),
    total: z.number().int().describe('Completed node runs matching (before limit)'),
    notes: z.array(z.string()).describe('What this answer left out, and how to get it'),
  }),
  async run(args, { api }) {
    const run = await getRun(api, args.runId);
    const { nodeRuns, complete } = await allNodeRuns(api, run);
    if (args.nodeId !== undefined) requireNode(run, nodeRuns, args.nodeId);
    const matching = nodeRuns.filter((nodeRun) => nodeRun.status === 'completed' && (args.nodeId === undefined || nodeRun.nodeId === args.nodeId));
    const limit = args.limit ?? 100;
    const budget = new ByteBudget(SNAPSHOT_BUDGET_BYTES);
    const artifacts: Array<z.infer<typeof ArtifactSchema>> = [];
    let leftOutBytes = 0;
    for (const nodeRun of matching.slice(0, limit)) {
      const { values, sizes, leftOut } = await snapshotsOf(api, run, nodeRun, ['outputSnapshot'], budget);
      leftOutBytes += leftOut.outputSnapshot ?? 0;
      artifacts.push({
        artifactId: `${run.id}:${nodeRun.nodeId}:${nodeRun.iterationPath}`,
        nodeRunId: nodeRun.id,
        nodeId: nodeRun.nodeId,
        nodeName: nodeRun.nodeName,
        nodeType: nodeRun.nodeType,
        iterationPath: nodeRun.iterationPath,
        finishedAt: nodeRun.finishedAt,
        sizeBytes: sizes.outputSnapshot ?? 0,
        edited: nodeRun.originalOutputSnapshot !== undefined && nodeRun.originalOutputSnapshot !== null,
        value: values.outputSnapshot ?? null,
        valueLeftOut: leftOut.outputSnapshot !== undefined,
      });
    }
    const notes: string[] = [];
    const leftOutCount = artifacts.filter((artifact) => artifact.valueLeftOut).length;
    if (leftOutCount > 0) notes.push(`${leftOutCount} value(s) (${leftOutBytes} bytes) did not fit in the ${SNAPSHOT_BUDGET_BYTES} bytes of this answer: list them with nodeId, or a smaller limit.`);
    if (matching.length > limit) notes.push(`${matching.length - limit} more artifact(s) beyond limit ${limit}.`);
    if (!complete) notes.push(`Only the first ${nodeRuns.length} node runs of ${run.nodeRunCount} were read.`);
    return { runId: run.id, workflowId: run.workflowDefinitionId, artifacts, total: matching.length, notes };
  },
});
