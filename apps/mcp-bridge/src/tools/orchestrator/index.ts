/** The orchestrator surface (orchestrator-mcp-tools.md): its four tools, exact names and snake_case fields. */
import type { AnyTool } from '../../tool.ts';

export const ORCHESTRATOR_SURFACE: readonly AnyTool[] = [];
