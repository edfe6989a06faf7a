/**
 * CEL in Switchyard: the engine (save-time checks, cached evaluation, JSON in and out), the
 * `$cel`/`$literal` markers of step configs, and the names of the variables expressions can read.
 */
export { CelEngine } from './cel-engine.ts';
export type { CelCheckResult, CelEngineOptions, CelEngineStats } from './cel-engine.ts';
export { CelEvaluationError } from './cel-evaluation-error.ts';
export type { JsonValue } from './cel-to-json.ts';
export { DEFAULT_CEL_LIMITS } from './expression-limits.ts';
export type { CelExpressionLimits } from './expression-limits.ts';
export {
  CEL_MARKER,
  LITERAL_MARKER,
  checkArgumentExpressions,
  findArgumentProblems,
  hasExpressions,
  listArgumentExpressions,
  resolveArguments,
} from './arguments.ts';
export type { ArgumentExpression, ArgumentExpressionProblem } from './arguments.ts';
export {
  ADDITIONAL_DATA_VARIABLE,
  EVENT_VARIABLE,
  TRIGGER_VARIABLES,
  INPUT_VARIABLE,
  LOOP_STATE_VARIABLE,
  PREVIOUS_STEP_CONTENT_VARIABLE,
  PREVIOUS_STEP_OUTPUTS_VARIABLE,
  ROUTER_VARIABLES,
  SESSION_STATE_VARIABLE,
  STEP_CHOICES_VARIABLE,
  STEP_VARIABLES,
  USER_INPUT_VARIABLE,
} from './variables.ts';
