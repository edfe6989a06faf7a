/**
 * The table of executor kinds (see `kind.ts`). The registry validates each `executors` entry with
 * the schema of the kind it names and builds it with that kind's factory; save-time checks ask the
 * table what a key's kind allows (`a2aPool`); the registry file's outline and type come from it
 * too. Adding a kind: one module (or folder) exporting an `ExecutorKind`, and one line here.
 */
import { a2aKind } from './a2a/a2a.ts';
import { builtinKind } from './builtin/builtin.ts';
import { httpKind } from './http/http.ts';
import type { ExecutorKind } from './kind.ts';
import { mcpKind } from './mcp/mcp.ts';

/** The table: every kind a registry entry may name, in the order error messages list them. */
const TABLE = [
  builtinKind,
  mcpKind,
  httpKind,
  a2aKind,
] as const;

/** The table's type: each kind with its own schema and connection section, for the registry file's type (`registry-config.ts`). */
export type KindTable = typeof TABLE;

/** Every kind a registry entry may name, in the order error messages list them. */
export const EXECUTOR_KINDS: readonly ExecutorKind[] = TABLE;

/** The kind named `name`; undefined for anything else (also for values that are not strings). */
export function findKind(name: unknown): ExecutorKind | undefined {
  return EXECUTOR_KINDS.find((kind) => kind.kind === name);
}
