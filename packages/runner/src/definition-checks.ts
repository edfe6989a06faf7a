/**
 * The runner's answer to domain's save-time questions (DefinitionChecks): does an executor key
 * exist, may it stand in an `a2aPool` (by its kind), does a CEL expression compile with the
 * variables of its place.
 */
import { DEFAULT_MAX_NODES, DEFAULT_MAX_STEP_EXECUTIONS, type DefinitionChecks, type ExpressionKind } from '@switchyard/domain';
import { ROUTER_VARIABLES, STEP_VARIABLES, TRIGGER_VARIABLES, checkArgumentExpressions, type CelEngine } from './cel/index.ts';
import { findKind } from './executors/kinds.ts';
import type { ExecutorRegistry } from './executors/types.ts';

/** Router selectors also see `step_choices`; event triggers see only `event`; every other expression (conditions, loop ends) sees the step context. */
function variablesFor(kind: ExpressionKind): readonly string[] {
  if (kind === 'trigger') return TRIGGER_VARIABLES;
  return kind === 'router' ? ROUTER_VARIABLES : STEP_VARIABLES;
}

/**
 * Null when `key` may stand in an `a2aPool`. The kind table says which kinds may (`a2aPool` on each
 * kind, see `executors/kind.ts`): `a2a`, and `builtin` (for tests). Executors of kinds outside the
 * table (test doubles) are accepted.
 */
function checkPoolMember(executors: ExecutorRegistry, key: string): string | null {
  const kindName = executors.kindOf(key);
  if (kindName === undefined) return `unresolvable a2aPool agent '${key}'`;
  const kind = findKind(kindName);
  if (kind !== undefined && !kind.a2aPool) return `a2aPool agent '${key}' is an executor of kind '${kindName}', not an A2A agent`;
  return null;
}

/**
 * DefinitionChecks backed by the loaded executor registry and the CEL engine; `options.maxNodes`
 * bounds the nodes of one definition (default {@link DEFAULT_MAX_NODES}, `SWITCHYARD_MAX_NODES`),
 * `options.maxStepExecutions` the step executions it implies (default
 * {@link DEFAULT_MAX_STEP_EXECUTIONS}, `SWITCHYARD_MAX_STEP_EXECUTIONS`).
 */
export function definitionChecks(executors: ExecutorRegistry, cel: CelEngine, options: { maxNodes?: number; maxStepExecutions?: number } = {}): DefinitionChecks {
  return {
    maxNodes: options.maxNodes ?? DEFAULT_MAX_NODES,
    maxStepExecutions: options.maxStepExecutions ?? DEFAULT_MAX_STEP_EXECUTIONS,
    hasExecutor: (key) => executors.has(key),
    checkPoolMember: (key) => checkPoolMember(executors, key),
    checkExpression: (expression, kind) => {
      const result = cel.check(expression, variablesFor(kind));
      return result.ok ? null : result.message;
    },
    checkConfig: (config) => checkArgumentExpressions(config, STEP_VARIABLES, cel).map(({ path, message }) => `${path}: ${message}`),
  };
}
