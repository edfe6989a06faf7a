/** Tools of the semantic surface: the workflows group (one tool per file). */
import type { AnyTool } from '../../../tool.ts';

export const WORKFLOWS_TOOLS: readonly AnyTool[] = [];
