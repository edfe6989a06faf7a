/**
 * The tools of each surface (issue #8): `semantic` (default) and `orchestrator` (the four tools of
 * orchestrator-mcp-tools.md, with exactly its names and snake_case fields). One tool per file.
 */
import type { Surface } from '../config.ts';
import type { AnyTool } from '../tool.ts';
import { getRunTool } from './semantic/get-run.ts';
import { getWorkflow } from './semantic/get-workflow.ts';
import { listRuns } from './semantic/list-runs.ts';
import { listWorkflows } from './semantic/list-workflows.ts';
import { runWorkflow } from './semantic/run-workflow.ts';
import { askHuman } from './semantic/ask-human.ts';
import { sendEvent } from './semantic/send-event.ts';
import { CONTROL_TOOLS } from './semantic/control/index.ts';
import { INSPECT_TOOLS } from './semantic/inspect/index.ts';
import { WORKFLOWS_TOOLS } from './semantic/workflows/index.ts';
import { SCHEDULE_TOOLS } from './semantic/schedules/index.ts';
import { ORCHESTRATOR_SURFACE } from './orchestrator/index.ts';

/** Every tool of the semantic surface, in listing order. */
export const SEMANTIC_TOOLS: readonly AnyTool[] = [
  listWorkflows,
  getWorkflow,
  ...WORKFLOWS_TOOLS,
  runWorkflow,
  sendEvent,
  listRuns,
  getRunTool,
  ...INSPECT_TOOLS,
  ...CONTROL_TOOLS,
  askHuman,
  ...SCHEDULE_TOOLS,
];

/** The orchestrator surface. */
export const ORCHESTRATOR_TOOLS: readonly AnyTool[] = ORCHESTRATOR_SURFACE;

/** The tools of `surface`. */
export function toolsOf(surface: Surface): readonly AnyTool[] {
  return surface === 'orchestrator' ? ORCHESTRATOR_TOOLS : SEMANTIC_TOOLS;
}
