/**
 * The table of executor kinds (see `kind.ts`). The registry validates each `executors` entry with
 * the schema of the kind it names and builds it with that kind's factory; save-time checks ask the
 * table what a key's kind allows (`a2aPool`). Adding a kind: one module exporting an
 * `ExecutorKind`, and one line here.
 */
import { a2aKind } from './a2a/a2a.ts';
import { builtinKind } from './builtin/builtin.ts';
import { httpKind } from './http/http.ts';
import type { ExecutorKind } from './kind.ts';
import { mcpKind } from './mcp/mcp.ts';

/** Every kind a registry entry may name, in the order error messages list them. */
export const EXECUTOR_KINDS: readonly ExecutorKind[] = [
  builtinKind,
  mcpKind,
  httpKind,
  a2aKind,
];

/** The kind named `name`; undefined for anything else (also for values that are not strings). */
export function findKind(name: unknown): ExecutorKind | undefined {
  return EXECUTOR_KINDS.find((kind) => kind.kind === name);
}
