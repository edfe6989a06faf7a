/** The nodes of a definition snapshot, at every level of its tree. */
import type { SnapshotNode } from './types.ts';

/** One node with where it sits: `depth` 0 for top-level nodes. */
export interface FlatNode {
  id: string;
  name: string;
  nodeType: string;
  depth: number;
}

/**
 * Every node of `nodes` in definition order, depth first: a node, then its `children` (parallel
 * branches, a loop's body), `trueSteps`, `falseSteps` (condition) and each choice's `steps` (router).
 */
export function flattenNodes(nodes: SnapshotNode[] | undefined, depth = 0): FlatNode[] {
  const out: FlatNode[] = [];
  for (const node of nodes ?? []) {
    out.push({ id: node.id, name: node.name, nodeType: node.nodeType, depth });
    out.push(...flattenNodes(node.children, depth + 1));
    out.push(...flattenNodes(node.trueSteps, depth + 1));
    out.push(...flattenNodes(node.falseSteps, depth + 1));
    for (const choice of node.choices ?? []) out.push(...flattenNodes(choice.steps, depth + 1));
  }
  return out;
}
