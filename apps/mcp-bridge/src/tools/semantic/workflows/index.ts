/** Tools of the semantic surface: the workflows group (one tool per file). */
import type { AnyTool } from '../../../tool.ts';
import { createWorkflow } from './create-workflow.ts';
import { deleteWorkflow } from './delete-workflow.ts';
import { toggleWorkflow } from './toggle-workflow.ts';
import { validateWorkflow } from './validate-workflow.ts';

export const WORKFLOWS_TOOLS: readonly AnyTool[] = [createWorkflow, validateWorkflow, toggleWorkflow, deleteWorkflow];
