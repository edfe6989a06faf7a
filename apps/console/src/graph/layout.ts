/**
 * Turns a workflow's node tree into a drawable graph: one box per node, edges for the order of
 * steps, and for containers a small "join" point where their branches meet again (parallel: one
 * branch per child; condition: "true"/"false"; router: one per choice, labelled with its name;
 * loop: its body). Coordinates come from the nodes' `position` when the definition placed every
 * node (distinct positions, not all at the origin), else from a dagre layout.
 */
import dagre from '@dagrejs/dagre';
import type { WorkflowNode } from '../pages/workflow/types.ts';

/** Size of a node's box. */
export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 58;
/** Size of a join point. */
const JOIN_SIZE = 14;

/** A box (a workflow node) or a join point (where a container's branches meet). */
export interface GraphVertex {
  id: string;
  kind: 'node' | 'join';
  node: WorkflowNode | null;
  /** For a join: the container it closes. */
  containerName?: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** An edge, with its label (branch name) and the points to draw it through. */
export interface GraphEdge {
  from: string;
  to: string;
  label: string | null;
  points: Array<{ x: number; y: number }>;
  labelAt: { x: number; y: number } | null;
}

/** The laid-out graph and its size. */
export interface GraphLayout {
  vertices: GraphVertex[];
  edges: GraphEdge[];
  width: number;
  height: number;
  usedPositions: boolean;
}

/** Vertices and edges before layout. */
interface Structure {
  vertices: Map<string, GraphVertex>;
  edges: Array<{ from: string; to: string; label: string | null }>;
}

/** The entry and exit vertex of a chain of nodes (null for an empty chain). */
type Span = { entry: string; exit: string } | null;

/** Adds `nodes` as a chain (each one's exit to the next one's entry); returns its span. */
function addSequence(structure: Structure, nodes: WorkflowNode[]): Span {
  let span: Span = null;
  for (const node of nodes) {
    const part = addNode(structure, node);
    if (span === null) span = part;
    else {
      structure.edges.push({ from: span.exit, to: part.entry, label: null });
      span = { entry: span.entry, exit: part.exit };
    }
  }
  return span;
}

/** Adds `branch` between `head` and `join`, the edge out of `head` labelled `label`. */
function addBranch(structure: Structure, head: string, join: string, branch: WorkflowNode[], label: string | null): void {
  const span = addSequence(structure, branch);
  if (span === null) structure.edges.push({ from: head, to: join, label });
  else {
    structure.edges.push({ from: head, to: span.entry, label });
    structure.edges.push({ from: span.exit, to: join, label: null });
  }
}

/** Adds one node (and, for a container, its branches and join point); returns its span. */
function addNode(structure: Structure, node: WorkflowNode): { entry: string; exit: string } {
  structure.vertices.set(node.id, { id: node.id, kind: 'node', node, x: 0, y: 0, width: NODE_WIDTH, height: NODE_HEIGHT });
  if (node.nodeType === 'step') return { entry: node.id, exit: node.id };
  const join = `${node.id}#join`;
  structure.vertices.set(join, { id: join, kind: 'join', node: null, containerName: node.name, x: 0, y: 0, width: JOIN_SIZE, height: JOIN_SIZE });
  if (node.nodeType === 'parallel') for (const child of node.children) addBranch(structure, node.id, join, [child], null);
  else if (node.nodeType === 'condition') {
    addBranch(structure, node.id, join, node.trueSteps, 'true');
    addBranch(structure, node.id, join, node.falseSteps, 'false');
  } else if (node.nodeType === 'router') for (const choice of node.choices) addBranch(structure, node.id, join, choice.steps, choice.name);
  else addBranch(structure, node.id, join, node.children, 'body');
  return { entry: node.id, exit: join };
}

/** Every node of the tree, depth first. */
export function allNodes(nodes: WorkflowNode[]): WorkflowNode[] {
  const out: WorkflowNode[] = [];
  const visit = (list: WorkflowNode[]) => {
    for (const node of list) {
      out.push(node);
      visit(node.children);
      visit(node.trueSteps);
      visit(node.falseSteps);
      for (const choice of node.choices) visit(choice.steps);
    }
  };
  visit(nodes);
  return out;
}

/** Whether the author placed every node: positions all distinct, and not all at the origin. */
function hasPositions(nodes: WorkflowNode[]): boolean {
  const seen = new Set<string>();
  for (const node of nodes) {
    const key = `${node.position.x},${node.position.y}`;
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return nodes.length > 0 && !(nodes.length === 1 && nodes[0]!.position.x === 0 && nodes[0]!.position.y === 0);
}

/** Lays out with dagre, top to bottom; returns the edges with their routes. */
function dagreLayout(structure: Structure): GraphEdge[] {
  const graph = new dagre.graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 44, edgesep: 12, marginx: 12, marginy: 12 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const vertex of structure.vertices.values()) graph.setNode(vertex.id, { width: vertex.width, height: vertex.height });
  structure.edges.forEach((edge, index) => {
    const labelled = edge.label !== null;
    graph.setEdge(edge.from, edge.to, labelled ? { label: edge.label, width: Math.min(160, 8 + edge.label!.length * 7), height: 18, labelpos: 'c' } : {}, String(index));
  });
  dagre.layout(graph);
  for (const vertex of structure.vertices.values()) {
    const placed = graph.node(vertex.id);
    vertex.x = placed.x;
    vertex.y = placed.y;
  }
  return structure.edges.map((edge, index) => {
    const placed = graph.edge({ v: edge.from, w: edge.to, name: String(index) }) as { points?: Array<{ x: number; y: number }>; x?: number; y?: number };
    return { ...edge, points: placed.points ?? [], labelAt: edge.label !== null && placed.x !== undefined && placed.y !== undefined ? { x: placed.x, y: placed.y } : null };
  });
}

/** Places nodes at their `position` (as their top-left corner) and each join below its container's branches. */
function positionLayout(structure: Structure, nodes: WorkflowNode[]): void {
  const minX = Math.min(...nodes.map((node) => node.position.x));
  const minY = Math.min(...nodes.map((node) => node.position.y));
  const place = (list: WorkflowNode[]): number => {
    // Returns the lowest bottom edge of the placed nodes.
    let bottom = -Infinity;
    for (const node of list) {
      const vertex = structure.vertices.get(node.id)!;
      vertex.x = node.position.x - minX + 12 + NODE_WIDTH / 2;
      vertex.y = node.position.y - minY + 12 + NODE_HEIGHT / 2;
      let inner = vertex.y + NODE_HEIGHT / 2;
      inner = Math.max(inner, place(node.children), place(node.trueSteps), place(node.falseSteps), ...node.choices.map((choice) => place(choice.steps)));
      const join = structure.vertices.get(`${node.id}#join`);
      if (join) {
        join.x = vertex.x;
        join.y = inner + 30;
        inner = join.y + JOIN_SIZE / 2;
      }
      bottom = Math.max(bottom, inner);
    }
    return bottom;
  };
  place(nodes);
}

/** Points of a straight edge between two vertices' borders (position layout). */
function straightEdge(from: GraphVertex, to: GraphVertex): Array<{ x: number; y: number }> {
  return [
    { x: from.x, y: from.y + from.height / 2 },
    { x: to.x, y: to.y - to.height / 2 },
  ];
}

/** Lays out the node tree `nodes` (see the module comment). */
export function layoutWorkflow(nodes: WorkflowNode[]): GraphLayout {
  const structure: Structure = { vertices: new Map(), edges: [] };
  addSequence(structure, nodes);
  const flat = allNodes(nodes);
  const usedPositions = hasPositions(flat);
  let edges: GraphEdge[];
  if (usedPositions) {
    positionLayout(structure, nodes);
    edges = structure.edges.map((edge) => {
      const points = straightEdge(structure.vertices.get(edge.from)!, structure.vertices.get(edge.to)!);
      const mid = { x: (points[0]!.x + points[1]!.x) / 2, y: (points[0]!.y + points[1]!.y) / 2 };
      return { ...edge, points, labelAt: edge.label !== null ? mid : null };
    });
  } else {
    edges = dagreLayout(structure);
  }
  const vertices = [...structure.vertices.values()];
  let width = 0;
  let height = 0;
  for (const vertex of vertices) {
    width = Math.max(width, vertex.x + vertex.width / 2);
    height = Math.max(height, vertex.y + vertex.height / 2);
  }
  for (const edge of edges) for (const point of edge.points) {
    width = Math.max(width, point.x);
    height = Math.max(height, point.y);
  }
  return { vertices, edges, width: width + 12, height: height + 12, usedPositions };
}
