/**
 * Run and node-run responses within the bounds of `response-bounds.ts` (issue "Reliability"
 * item 5): node runs are read without their snapshots first, and only the snapshots a response
 * can afford are loaded, one field at a time, so a GET never holds more than its budget of
 * snapshot data however large the run.
 */
import {
  JSON_NULL_BYTES,
  MAX_INLINE_NODE_RUNS,
  SnapshotBudget,
  emptyNodeRunTally,
  tallyNodeRuns,
  requirementsOfNodeRun,
  toNodeRunDetail,
  pendingRequirementsOf,
  toRequirementRecordView,
  toRequirementSummary,
  toRunDetail,
  toRunSummary,
  pagination,
  type Pagination,
  type RunDetail,
  type RunSummary,
  type NodeRunDetail,
  type NodeRunExcerpt,
  type NodeRunRecord,
  type NodeRunTally,
  type OmittedSnapshots,
  type RequirementRecord,
  type RunRecord,
  type RunViewRecord,
  type SnapshotBytes,
  type SnapshotField,
} from '@switchyard/domain';
import type { Repositories, RunListFilter } from '@switchyard/store';
import type { AppServices } from './app-services.ts';

/** Bytes of decision values one list-like response inlines in node runs' `decisions`, and per value. */
const DECISIONS_BUDGET_BYTES = 64 * 1024;
const DECISION_VALUE_MAX_BYTES = 1024;

/** Each snapshot field with the key of its size in `snapshotBytes`. */
const FIELDS: ReadonlyArray<readonly [SnapshotField, keyof SnapshotBytes]> = [
  ['inputSnapshot', 'input'],
  ['outputSnapshot', 'output'],
  ['originalOutputSnapshot', 'originalOutput'],
];


/**
 * Views of `heads` (node runs read without snapshots, e.g. by `NodeRuns.listHeads`), each with
 * the snapshots `budget` affords and the sizes of the others, and its gates among `requirements`
 * (the run's) with their decisions. Node runs stored before sizes
 * were recorded (or written partly by an older version) are measured, and their sizes stored,
 * one at a time.
 */
export async function nodeRunViews(
  repos: Repositories,
  heads: readonly NodeRunRecord[],
  budget: SnapshotBudget,
  requirements: readonly RequirementRecord[] = [],
): Promise<NodeRunDetail[]> {
  const planned: Array<{ record: NodeRunRecord; omitted: OmittedSnapshots }> = [];
  // Node runs by the snapshot fields to load for them (usually one group: one read).
  const wanted = new Map<string, { fields: SnapshotField[]; ids: string[] }>();
  for (const head of heads) {
    const legacy = hasAllSizes(head) ? null : await repos.nodeRuns.backfillSnapshotBytes(head.id);
    const record: NodeRunRecord = { ...(legacy ?? head) };
    const omitted: OmittedSnapshots = {};
    const fields: SnapshotField[] = [];
    for (const [field, key] of FIELDS) {
      const bytes = record.snapshotBytes?.[key] ?? JSON_NULL_BYTES;
      if (!budget.take(bytes)) {
        omitted[field] = bytes;
        delete record[field];
      } else if (legacy === null && bytes > JSON_NULL_BYTES) {
        fields.push(field);
      }
    }
    if (fields.length > 0) {
      const group = fields.join();
      if (!wanted.has(group)) wanted.set(group, { fields, ids: [] });
      wanted.get(group)!.ids.push(record.id);
    }
    planned.push({ record, omitted });
  }
  const loaded = new Map<string, Partial<Record<SnapshotField, unknown>>>();
  for (const { fields, ids } of wanted.values()) for (const [id, values] of await repos.nodeRuns.snapshotsOf(ids, fields)) loaded.set(id, values);
  // Decisions in lists carry only small values (≤ 1 KiB each, 64 KiB in all; others by size):
  // the run detail's `requirements` and the node run detail have them all, so a gate's output is
  // not charged twice against the response budget.
  const lean = new SnapshotBudget(DECISIONS_BUDGET_BYTES, DECISION_VALUE_MAX_BYTES);
  return planned.map(({ record, omitted }) =>
    toNodeRunDetail(
      Object.assign(record, loaded.get(record.id)),
      omitted,
      requirements.length === 0 ? [] : requirementsOfNodeRun(requirements, record).map((requirement) => toRequirementRecordView(requirement, lean)),
    ),
  );
}

/** True when the node run's document records the size of every snapshot. */
function hasAllSizes(head: NodeRunRecord): boolean {
  return FIELDS.every(([, key]) => typeof head.snapshotBytes?.[key] === 'number');
}

/**
 * What a run response carries of its node runs: the first {@link MAX_INLINE_NODE_RUNS}, their
 * total, the list's path, and how all of them stand: `tally` (from `NodeRuns.tallyByRuns`), or
 * when absent the tally of the node runs listed if they are all of them, else one read for it.
 */
export async function nodeRunExcerpt(repos: Repositories, apiPrefix: string, run: RunViewRecord, budget: SnapshotBudget, tally?: NodeRunTally): Promise<NodeRunExcerpt> {
  const heads = await repos.nodeRuns.listHeads(run.id, 0, MAX_INLINE_NODE_RUNS);
  const complete = heads.length < MAX_INLINE_NODE_RUNS;
  const counted = tally ?? (complete ? tallyNodeRuns(heads) : ((await repos.nodeRuns.tallyByRuns([run.id])).get(run.id) ?? emptyNodeRunTally()));
  // Two reads of a live run may see different node runs: the list wins while it holds them all.
  const total = complete ? heads.length : Math.max(counted.total, heads.length);
  const items = await nodeRunViews(repos, heads, budget, run.pendingRequirements ?? []);
  return {
    items,
    total,
    url: `${apiPrefix}/${run.workflowDefinitionId}/runs/${run.id}/nodes`,
    statusCounts: counted.counts,
    activeNodeIds: counted.activeNodeIds,
  };
}

/**
 * Run-list rows for `runs` (read with the list projection), within one response budget, their
 * runState at `now` (epoch ms); the node-run tallies of the whole page come from one read.
 */
export async function runSummaries(repos: Repositories, apiPrefix: string, runs: readonly RunRecord[], now: number, includeNodeRuns = true): Promise<RunSummary[]> {
  const budget = new SnapshotBudget();
  const tallies = await repos.nodeRuns.tallyByRuns(runs.map((run) => run.id));
  const rows: RunSummary[] = [];
  for (const run of runs) {
    const tally = tallies.get(run.id) ?? emptyNodeRunTally();
    const excerpt = includeNodeRuns ? await nodeRunExcerpt(repos, apiPrefix, run, budget, tally) : countsOnly(apiPrefix, run, tally);
    rows.push(toRunSummary(run, excerpt, now));
  }
  return rows;
}

/** A run row's node-run part without node runs (`includeNodeRuns=false`): the tally only. */
function countsOnly(apiPrefix: string, run: RunRecord, tally: NodeRunTally): NodeRunExcerpt {
  return { items: [], total: tally.total, url: `${apiPrefix}/${run.workflowDefinitionId}/runs/${run.id}/nodes`, statusCounts: tally.counts, activeNodeIds: tally.activeNodeIds };
}

/** One page of run-list rows matching `filter`, newest first, with its pagination block. */
export async function runListPage(
  services: Pick<AppServices, 'repos' | 'clock'>,
  apiPrefix: string,
  filter: RunListFilter,
  page: number,
  perPage: number,
  includeNodeRuns = true,
): Promise<{ runs: RunSummary[]; pagination: Pagination }> {
  const { items, total } = await services.repos.runs.list(filter, page, perPage);
  return { runs: await runSummaries(services.repos, apiPrefix, items, services.clock.now().getTime(), includeNodeRuns), pagination: pagination(total, page, perPage) };
}

/**
 * The run detail of `run` (read with `WorkflowRuns.getViewInWorkflow`, or a full record), its
 * runState derived at `now` (epoch ms). The pending gates get the response budget first: people
 * decide on what they show. Node runs: one read of their heads (the tally comes from them unless
 * the run has more than the detail lists), one of the snapshots the budget affords.
 */
export async function runDetail(repos: Repositories, apiPrefix: string, run: RunViewRecord, now: number): Promise<RunDetail> {
  const budget = new SnapshotBudget();
  const pending = pendingRequirementsOf(run).map((requirement) => toRequirementSummary(requirement, budget));
  return toRunDetail(run, await nodeRunExcerpt(repos, apiPrefix, run, budget), now, budget, pending);
}
