/**
 * The shapes of the API answers the workflow pages read (docs/reference/http-api.md; the schemas
 * are packages/domain/src/schemas/workflow.ts and run.ts). Only the fields the pages use.
 */

/** A node of a workflow definition as the API returns it (complete: lists are lists). */
export interface WorkflowNode {
  id: string;
  name: string;
  nodeType: 'step' | 'parallel' | 'loop' | 'condition' | 'router';
  position: { x: number; y: number };
  executorKey: string | null;
  children: WorkflowNode[];
  trueSteps: WorkflowNode[];
  falseSteps: WorkflowNode[];
  choices: Array<{ name: string; steps: WorkflowNode[] }>;
  conditionCel: string | null;
  loopConfig: { maxIterations: number; endConditionCel: string | null } | null;
  humanReview: Record<string, unknown> | null;
}

/** GET /workflows/{id}. */
export interface WorkflowDetail {
  id: string;
  name: string;
  description: string | null;
  nodes: WorkflowNode[];
  enabled: boolean;
  tags: string[];
  version: number;
}

/** One row of GET /workflows. */
export interface WorkflowSummary {
  id: string;
  name: string;
  description: string | null;
  numNodes: number;
  enabled: boolean;
  tags: string[];
  runningCount?: number;
}

/** The pagination block of every list. */
export interface Pagination {
  page: number;
  perPage: number;
  total: number;
  totalPages: number;
}

/** Who did something: the authenticated caller. */
export interface Actor {
  userId?: string | null;
  username?: string | null;
  via?: string | null;
}

/** One node run (one node at one iteration path). */
export interface NodeRun {
  id: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  iterationPath: string;
  status: string;
  attempt: number;
  inputSnapshot: unknown;
  outputSnapshot: unknown;
  omittedSnapshots?: { inputSnapshot?: number; outputSnapshot?: number; originalOutputSnapshot?: number } | null;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** One HITL gate (or human request) of a run, decided or not. */
export interface Requirement {
  stepId?: string;
  nodeId: string;
  iterationPath: string;
  round: number;
  requestedAt: string;
  resolution: string | null;
  decidedBy: string | null;
  decidedByUser: Actor | null;
  decidedAt: string | null;
}

/** A row of a run list. */
export interface RunSummary {
  id: string;
  workflowDefinitionId: string;
  workflowVersion: number;
  status: string;
  triggerSource: string;
  startedAt: string;
  finishedAt: string | null;
}

/** GET …/runs/{id}: the run with its definition snapshot and its gates. */
export interface RunDetail extends RunSummary {
  definitionSnapshot: { nodes: WorkflowNode[] };
  requirements: Requirement[];
}
