/**
 * The workflow pages' view of the API: the shared shapes (../../api-types.ts) and the workflow
 * answers only these pages read.
 */
import type { WorkflowNode } from '../../api-types.ts';

export type { Actor, NodeRun, Pagination, Requirement, RunDetail, RunSummary, WorkflowNode } from '../../api-types.ts';

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
