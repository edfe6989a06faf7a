/** Tools of the semantic surface: the control group (one tool per file). */
import type { AnyTool } from '../../../tool.ts';

export const CONTROL_TOOLS: readonly AnyTool[] = [];
