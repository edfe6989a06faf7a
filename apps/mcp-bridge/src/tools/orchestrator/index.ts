/** The orchestrator surface (orchestrator-mcp-tools.md): its four tools, exact names and snake_case fields. */
import type { AnyTool } from '../../tool.ts';
import { orchestratorCancelWorkflow } from './cancel-workflow.ts';
import { orchestratorCreateWorkflow } from './create-workflow.ts';
import { orchestratorListWorkflows } from './list-workflows.ts';
import { orchestratorRunWorkflow } from './run-workflow.ts';

export const ORCHESTRATOR_SURFACE: readonly AnyTool[] = [orchestratorRunWorkflow, orchestratorListWorkflows, orchestratorCreateWorkflow, orchestratorCancelWorkflow];
