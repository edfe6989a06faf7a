/**
 * The runner's answer to domain's save-time questions (DefinitionChecks): does an executor key
 * exist, does a CEL expression compile with the variables of its place.
 */
import type { DefinitionChecks, ExpressionKind } from '@switchyard/domain';
import { ROUTER_VARIABLES, STEP_VARIABLES, checkArgumentExpressions, type CelEngine } from './cel/index.ts';
import type { ExecutorRegistry } from './executors/types.ts';

/** Router selectors also see `step_choices`; every other expression (conditions, loop ends) sees the step context. */
function variablesFor(kind: ExpressionKind): readonly string[] {
  return kind === 'router' ? ROUTER_VARIABLES : STEP_VARIABLES;
}

/** DefinitionChecks backed by the loaded executor registry and the CEL engine. */
export function definitionChecks(executors: ExecutorRegistry, cel: CelEngine): DefinitionChecks {
  return {
    hasExecutor: (key) => executors.has(key),
    checkExpression: (expression, kind) => {
      const result = cel.check(expression, variablesFor(kind));
      return result.ok ? null : result.message;
    },
    checkConfig: (config) => checkArgumentExpressions(config, STEP_VARIABLES, cel).map(({ path, message }) => `${path}: ${message}`),
  };
}
