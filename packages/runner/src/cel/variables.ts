/**
 * The variables CEL expressions can read in a workflow definition: a step's `config` (`$cel`
 * values), a condition's or router's `conditionCel`, and a loop's `endConditionCel`. Their
 * values are JSON, so every number is a CEL double (see `cel-engine.ts`).
 *
 * Example: `previous_step_outputs['Validate'].valid && input.customerType == 'enterprise'`.
 */

/** `input`: the run's input, as given when the run was started (`initialInput`). */
export const INPUT_VARIABLE = 'input';

/**
 * `previous_step_content`: the output of the node that ran just before this one in the same
 * sequence; for the first node of a sequence, the content that entered the sequence (the run
 * input for the first root node).
 */
export const PREVIOUS_STEP_CONTENT_VARIABLE = 'previous_step_content';

/**
 * `previous_step_outputs`: map from node name to output, for every node finished so far in the
 * run, e.g. `previous_step_outputs['Validate'].valid`.
 */
export const PREVIOUS_STEP_OUTPUTS_VARIABLE = 'previous_step_outputs';

/**
 * `additional_data`: map reserved for metadata about how the run started. Currently
 * `{ triggerSource }`, e.g. `additional_data.triggerSource == 'api'`.
 */
export const ADDITIONAL_DATA_VARIABLE = 'additional_data';

/** `session_state`: map of run-scoped state. Currently always empty (`{}`). */
export const SESSION_STATE_VARIABLE = 'session_state';

/**
 * `loop_state`: inside a loop's children and in its `endConditionCel`, the map
 * `{ iteration, maxIterations, outputs }`: `iteration` is the 1-based number of the current
 * iteration (a double, as all numbers: `loop_state.iteration >= 3.0`), `maxIterations` the
 * loop's bound, `outputs` the list of the previous iterations' outputs. Null outside loops.
 * (`loop` is a reserved word in CEL, hence the name.)
 */
export const LOOP_STATE_VARIABLE = 'loop_state';

/** `user_input`: the values collected by a human-review gate for this node; null when there are none. */
export const USER_INPUT_VARIABLE = 'user_input';

/** `step_choices`: in a router's `conditionCel` only, the list of its choice names, in definition order. */
export const STEP_CHOICES_VARIABLE = 'step_choices';

/** The variables of step, condition and loop expressions (`config` `$cel` values, `conditionCel`, `endConditionCel`). */
export const STEP_VARIABLES: readonly string[] = Object.freeze([
  INPUT_VARIABLE,
  PREVIOUS_STEP_CONTENT_VARIABLE,
  PREVIOUS_STEP_OUTPUTS_VARIABLE,
  ADDITIONAL_DATA_VARIABLE,
  SESSION_STATE_VARIABLE,
  LOOP_STATE_VARIABLE,
  USER_INPUT_VARIABLE,
]);

/** The variables of a router's `conditionCel`: {@link STEP_VARIABLES} plus `step_choices`. */
export const ROUTER_VARIABLES: readonly string[] = Object.freeze([...STEP_VARIABLES, STEP_CHOICES_VARIABLE]);

/**
 * `event`: in an event trigger's `filterCel` and `inputCel` (issue #21), the event received:
 * `{ id, name, data, receivedAt }` (`id` the event id, `receivedAt` ISO-8601 text), e.g.
 * `event.data.total > 100.0`.
 */
export const EVENT_VARIABLE = 'event';

/** The variables of an event trigger's expressions: only `event`. */
export const TRIGGER_VARIABLES: readonly string[] = Object.freeze([EVENT_VARIABLE]);
