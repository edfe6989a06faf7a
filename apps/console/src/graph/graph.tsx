/**
 * The read-only SVG drawing of a workflow's node tree (layout: graph/layout.ts). Every node box is
 * focusable (tabindex 0, role button) and activates with Enter, Space or a click; labels are SVG
 * `<text>` (data, never markup). With a run, each box shows its node-run status and attempt.
 */
import { useMemo } from 'preact/hooks';
import type { WorkflowNode } from '../pages/workflow/types.ts';
import { layoutWorkflow, NODE_HEIGHT, NODE_WIDTH, type GraphEdge, type GraphVertex } from './layout.ts';
import './graph.css';

/** What a node box shows of the selected run: its status and attempt, and how many node runs. */
export interface NodeState {
  status: string;
  attempt: number;
  count: number;
}

/** `text` cut to `max` characters (with an ellipsis); the full text is in the box's title. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What the node's box says under its name: its type (and loop bound). */
function typeLine(node: WorkflowNode): string {
  if (node.nodeType === 'loop' && node.loopConfig) return `loop, at most ${node.loopConfig.maxIterations}`;
  if (node.nodeType === 'step') return node.executorKey ? `step · ${node.executorKey}` : 'step';
  return node.nodeType;
}

/** The status words of a node (for its label and aria-label). */
function stateText(state: NodeState | undefined, withRun: boolean): string {
  if (!withRun) return 'no run selected';
  if (!state) return 'not started';
  const status = state.status.replace(/_/g, ' ');
  const attempt = state.attempt > 1 ? `, attempt ${state.attempt}` : '';
  const count = state.count > 1 ? `, ${state.count} runs` : '';
  return `${status}${attempt}${count}`;
}

/** One node's box. */
function NodeBox({ vertex, state, withRun, selected, onSelect }: { vertex: GraphVertex; state: NodeState | undefined; withRun: boolean; selected: boolean; onSelect: (nodeId: string) => void }) {
  const node = vertex.node!;
  const words = stateText(state, withRun);
  // One text for the accessible name and the tooltip, holding what the box shows, in its order
  // (WCAG 2.5.3, label in name: speech users say what they see). The lines of the box end with a
  // space, so that their text reads as words, not run together.
  const label = `${node.name}, ${typeLine(node)}, ${words}`;
  const statusClass = withRun ? `node-status-${(state?.status ?? 'not_started').replace(/[^a-z_]/gi, '')}` : 'node-status-none';
  const left = vertex.x - NODE_WIDTH / 2;
  const top = vertex.y - NODE_HEIGHT / 2;
  return (
    <g
      class={`graph-node graph-node-${node.nodeType} ${statusClass}${selected ? ' selected' : ''}`}
      tabindex={0}
      role="button"
      aria-label={label}
      aria-pressed={selected}
      onClick={() => onSelect(node.id)}
      onKeyDown={(event) => {
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          onSelect(node.id);
        }
      }}
    >
      <title>{label}</title>
      <rect x={left} y={top} width={NODE_WIDTH} height={NODE_HEIGHT} rx={node.nodeType === 'step' ? 6 : 14} />
      <text x={left + 10} y={top + 19} class="graph-node-name">
        {`${clip(node.name, 24)} `}
      </text>
      <text x={left + 10} y={top + 35} class="graph-node-type">
        {`${clip(typeLine(node), 28)} `}
      </text>
      <text x={left + 10} y={top + 50} class="graph-node-state">
        {clip(withRun ? words : '', 28)}
      </text>
    </g>
  );
}

/** A join point: where a container's branches meet again. */
function JoinPoint({ vertex }: { vertex: GraphVertex }) {
  return (
    <g class="graph-join" aria-hidden="true">
      <title>{`end of ${vertex.containerName ?? ''}`}</title>
      <circle cx={vertex.x} cy={vertex.y} r={vertex.width / 2} />
    </g>
  );
}

/** An edge with its arrow and (for a branch) its label. */
function Edge({ edge }: { edge: GraphEdge }) {
  if (edge.points.length < 2) return null;
  const d = edge.points.map((point, index) => `${index === 0 ? 'M' : 'L'}${point.x.toFixed(1)},${point.y.toFixed(1)}`).join(' ');
  return (
    <g class="graph-edge" aria-hidden="true">
      <path d={d} marker-end="url(#graph-arrow)" />
      {edge.label !== null && edge.labelAt && (
        <text x={edge.labelAt.x} y={edge.labelAt.y + 4} text-anchor="middle" class="graph-edge-label">
          {clip(edge.label, 22)}
        </text>
      )}
    </g>
  );
}

/**
 * The graph of `nodes`. `states` maps node ids to what the selected run did there (`withRun`
 * says whether a run is selected); `onSelect` is called with the id of an activated node.
 */
export function WorkflowGraph({ nodes, states, withRun, selectedId, onSelect, label }: { nodes: WorkflowNode[]; states: Map<string, NodeState>; withRun: boolean; selectedId: string | null; onSelect: (nodeId: string) => void; label: string }) {
  const layout = useMemo(() => layoutWorkflow(nodes), [nodes]);
  if (nodes.length === 0) return <p class="muted">This workflow has no nodes.</p>;
  return (
    <div class="graph-scroll">
      <svg class="graph" role="group" aria-label={label} width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`}>
        <defs>
          <marker id="graph-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" class="graph-arrow" />
          </marker>
        </defs>
        {layout.edges.map((edge, index) => (
          <Edge key={`e${index}`} edge={edge} />
        ))}
        {layout.vertices.map((vertex) =>
          vertex.kind === 'join' ? (
            <JoinPoint key={vertex.id} vertex={vertex} />
          ) : (
            <NodeBox key={vertex.id} vertex={vertex} state={states.get(vertex.id)} withRun={withRun} selected={selectedId === vertex.id} onSelect={onSelect} />
          ),
        )}
      </svg>
    </div>
  );
}
