/** Tools of the semantic surface: the inspect group (one tool per file). */
import type { AnyTool } from '../../../tool.ts';

export const INSPECT_TOOLS: readonly AnyTool[] = [];
