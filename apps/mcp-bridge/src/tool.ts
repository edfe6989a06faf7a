/**
 * What a tool is (STYLE.md §1: one tool per file, identity declared statically, annotations
 * derived in one place, gating at registration). A tool declares its `kind`; {@link annotationsOf}
 * turns kinds into MCP annotations, so no tool writes its own hints.
 */
import * as z from 'zod/v4';
import type { ApiClient } from './api-client.ts';

/**
 * - `read`: reads only (readOnlyHint, idempotentHint).
 * - `write`: creates or changes something (readOnlyHint false, idempotentHint false).
 * - `irreversible`: a write that cannot be undone (also destructiveHint).
 * - `launch`: a write that starts a run whose steps call external tools (also openWorldHint).
 */
export type ToolKind = 'read' | 'write' | 'irreversible' | 'launch';

/** MCP tool annotations. */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** The one mapping from a tool's kind to its annotations. */
export function annotationsOf(kind: ToolKind, title: string): ToolAnnotations {
  return {
    title,
    readOnlyHint: kind === 'read',
    destructiveHint: kind === 'irreversible',
    idempotentHint: kind === 'read',
    openWorldHint: kind === 'launch',
  };
}

/** What a tool's handler gets besides its arguments. */
export interface ToolContext {
  api: ApiClient;
  /** Aborted when the client cancels the call or the server shuts down. */
  signal: AbortSignal;
  /** The call's `_meta` (e.g. the run context Switchyard's MCP executor sends; see tools/run-context.ts). */
  meta: Record<string, unknown>;
  /** Sleeps, abortable (injected so tests need not wait). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  now(): number;
}

/** A tool: its identity, schemas, and behaviour. `data` is what a success envelope carries. */
export interface Tool<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** For an agent: when to call it and what it returns. */
  description: string;
  kind: ToolKind;
  input: I;
  /** Schema of `data` in a success envelope. */
  output: O;
  run(args: z.infer<I>, context: ToolContext): Promise<z.infer<O>>;
}

/** A tool of any schemas (lists of tools). */
export type AnyTool = Tool<any, any>;

/** Declares a tool (keeps its input and output types tied together). */
export function defineTool<I extends z.ZodObject, O extends z.ZodType>(tool: Tool<I, O>): Tool<I, O> {
  return tool;
}
