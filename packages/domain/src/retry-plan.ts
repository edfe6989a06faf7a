/**
 * What a retry of an ended run carries over from it (issue "Run control" item 2; DESIGN.md
 * "memoized re-traversal"). A full retry (no body) reuses every node run that completed and
 * replays the human decisions the source recorded, so that re-traversal walks the same path:
 * an iteration that was rejected and re-run (`3r1`), a route a person picked, a form's values —
 * and completed outputs on that path are not shown to anyone again. Decisions that ended the
 * source are not replayed (a gate that cancelled the run is asked again), nor gates closed only
 * because the run ended (`run_ended`), nor human requests (phase `ask`): they belong to the
 * executor call that asked them.
 */
import type { NodeRunRecord, RequirementRecord } from './records.ts';
import type { WorkflowNode } from './schemas/workflow.ts';
import { walkNodes } from './validation.ts';
import { parsePathSegment } from './iteration-path.ts';

/** The node runs of the source whose outputs a full retry reuses: every completed one. */
export function nodeRunsToReuse(source: readonly NodeRunRecord[]): NodeRunRecord[] {
  return source.filter((nodeRun) => nodeRun.status === 'completed');
}

/** The decided requirements of the source a full retry replays (see the module comment). */
export function decisionsToReplay(source: readonly RequirementRecord[]): RequirementRecord[] {
  return source.filter(
    (requirement) => requirement.phase !== 'ask' && requirement.decidedAt !== null && requirement.decidedBy !== 'run_ended' && !cancelledTheRun(requirement),
  );
}

/** True when the decision cancelled the run: a rejection under `onReject: cancel`, or a `cancel` (timeout). */
function cancelledTheRun(requirement: RequirementRecord): boolean {
  return requirement.resolution === 'cancel' || (requirement.resolution === 'reject' && requirement.onReject === 'cancel');
}

/** The node a node rerun executes afresh, and where (iteration path; '' outside loops). */
export interface RerunTarget {
  nodeId: string;
  iterationPath: string;
}

/** What a node rerun carries over from its source run (see {@link planNodeRerun}). */
export interface NodeRerunPlan {
  kind: 'plan';
  target: RerunTarget;
  /** Completed node runs of the source to copy in: every one except the target's, its descendants' and its enclosing containers'. */
  reuse: NodeRunRecord[];
  /** Decisions of the source to replay: as a full retry's, minus the gates of the target and its descendants (asked afresh). */
  decisions: RequirementRecord[];
}

/** Why a node rerun cannot be planned: the node is not in the definition (404), or the iteration path does not fit (400). */
export type NodeRerunProblem = { kind: 'unknown_node' } | { kind: 'bad_iteration'; message: string };

/** The node `nodeId` and its enclosing containers (outermost first), or null when the tree has no such node. */
export function findWithAncestors(nodes: readonly WorkflowNode[], nodeId: string, ancestors: WorkflowNode[] = []): { node: WorkflowNode; ancestors: WorkflowNode[] } | null {
  for (const node of nodes) {
    if (node.id === nodeId) return { node, ancestors };
    const inner = [...node.children, ...node.trueSteps, ...node.falseSteps, ...node.choices.flatMap((choice) => choice.steps)];
    const found = findWithAncestors(inner, nodeId, [...ancestors, node]);
    if (found) return found;
  }
  return null;
}

/** True when `path` is `prefix` or lies under it (`prefix/...`); every path lies under ''. */
function isWithin(path: string, prefix: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

/** True when node runs at `path` can belong to a container enclosing a node at `target` (its path is a prefix of the target's). */
function encloses(path: string, target: string): boolean {
  return isWithin(target, path);
}

/** A path segment's order: iteration number, then review round (`3` -> [3, 0], `3r1` -> [3, 1], `r2` -> [0, 2]). */
function segmentOrder(segment: string): [number, number] {
  const parsed = parsePathSegment(segment);
  return [parsed?.iteration ?? 0, parsed?.round ?? 0];
}

/** True when a node run at `path` belongs to a later iteration (or round) than `target` of a loop enclosing both. */
function isLaterPath(path: string, target: string): boolean {
  const a = path ? path.split('/') : [];
  const b = target ? target.split('/') : [];
  for (let k = 0; k < Math.min(a.length, b.length); k++) {
    const [x, y] = [segmentOrder(a[k]!), segmentOrder(b[k]!)];
    if (x[0] !== y[0]) return x[0] > y[0];
    if (x[1] !== y[1]) return x[1] > y[1];
  }
  return false;
}

/**
 * The nodes that come after `nodeId` in some sequence that leads to it (root list, loop body,
 * condition branch, router choice), with their descendants: a traversal reaches them only after
 * the node. Parallel siblings are not after it.
 */
function nodesAfter(found: { node: WorkflowNode; ancestors: WorkflowNode[] }, definition: readonly WorkflowNode[]): Set<string> {
  const after = new Set<string>();
  const chain = [...found.ancestors, found.node];
  const sequencesOf = (container: WorkflowNode | null): WorkflowNode[][] =>
    container === null
      ? [[...definition]]
      : container.nodeType === 'parallel'
        ? []
        : [container.children, container.trueSteps, container.falseSteps, ...container.choices.map((choice) => choice.steps)];
  chain.forEach((link, i) => {
    for (const sequence of sequencesOf(i === 0 ? null : chain[i - 1]!)) {
      const at = sequence.findIndex((node) => node.id === link.id);
      if (at < 0) continue;
      for (const node of walkNodes(sequence.slice(at + 1))) after.add(node.id);
    }
  });
  return after;
}

/**
 * Plans a node rerun (issue "Run control" item 3; spec endpoint 13, beyond its top-level-only
 * rule): the child run re-traverses the source's definition, reusing every completed node run of
 * the source that the walk reaches before the target, except those of the target's descendants
 * under its path and of its enclosing containers (re-entered, so that the walk reaches the target;
 * inside them, siblings' completed outputs are reused). Node runs reached after the target (later
 * nodes of a sequence, later iterations of an enclosing loop) are not copied: the child never
 * gets there. The source's decisions are replayed
 * (branch choices, forms, earlier iteration reviews), except the gates of the target and its
 * descendants, which are asked afresh. The run stops right after the target.
 *
 * `iterationPath` (inside loops: `3`, `2/1`, a re-run iteration `3r1`) defaults to the path of the
 * target's most recent node run in the source, or '' when it never ran; a path the target has no
 * node run at is refused unless it is '' for a node outside loops.
 */
export function planNodeRerun(
  definition: readonly WorkflowNode[],
  source: { nodeRuns: readonly NodeRunRecord[]; requirements: readonly RequirementRecord[] },
  nodeId: string,
  iterationPath?: string,
): NodeRerunPlan | NodeRerunProblem {
  const found = findWithAncestors(definition, nodeId);
  if (!found) return { kind: 'unknown_node' };
  const own = source.nodeRuns.filter((nodeRun) => nodeRun.nodeId === nodeId);
  const inLoop = found.ancestors.some((ancestor) => ancestor.nodeType === 'loop');
  let path: string;
  if (iterationPath !== undefined) {
    if (!own.some((nodeRun) => nodeRun.iterationPath === iterationPath) && (inLoop || iterationPath !== '')) {
      const known = own.map((nodeRun) => `'${nodeRun.iterationPath}'`).join(', ') || 'none';
      return { kind: 'bad_iteration', message: `node '${nodeId}' has no node run at iterationPath '${iterationPath}' in the source run (its iteration paths: ${known})` };
    }
    path = iterationPath;
  } else {
    const latest = [...own].sort((a, b) => (a.startedAt?.getTime() ?? 0) - (b.startedAt?.getTime() ?? 0)).at(-1);
    if (!latest && inLoop) return { kind: 'bad_iteration', message: `node '${nodeId}' never ran in the source run, and inside a loop its iteration must be named (iterationPath)` };
    path = latest?.iterationPath ?? '';
  }
  const descendants = new Set<string>();
  for (const node of walkNodes([found.node])) descendants.add(node.id);
  const ancestors = new Set(found.ancestors.map((ancestor) => ancestor.id));
  const after = nodesAfter(found, definition);
  const inAncestorLoops = new Set<string>();
  for (const loop of found.ancestors.filter((ancestor) => ancestor.nodeType === 'loop')) for (const node of walkNodes(loop.children)) inAncestorLoops.add(node.id);
  /** Reached after the target: a later node of a sequence, or a later iteration of an enclosing loop. */
  const later = (nodeId: string, iterationPath: string) => after.has(nodeId) || (inAncestorLoops.has(nodeId) && isLaterPath(iterationPath, path));
  const reuse = nodeRunsToReuse(source.nodeRuns).filter(
    (nodeRun) =>
      !(descendants.has(nodeRun.nodeId) && isWithin(nodeRun.iterationPath, path)) &&
      !(ancestors.has(nodeRun.nodeId) && encloses(nodeRun.iterationPath, path)) &&
      !later(nodeRun.nodeId, nodeRun.iterationPath),
  );
  const decisions = decisionsToReplay(source.requirements).filter(
    (requirement) => !(descendants.has(requirement.nodeId) && isWithin(requirement.iterationPath, path)) && !later(requirement.nodeId, requirement.iterationPath),
  );
  return { kind: 'plan', target: { nodeId, iterationPath: path }, reuse, decisions };
}
