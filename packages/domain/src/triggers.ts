/**
 * Event triggers of a workflow (issue #21 item 2, docs/guide/event-triggers.md): validation on save. The
 * body schema bounds their number, the event name and the expression lengths; this module asks
 * the runner's CEL (through {@link DefinitionChecks.checkExpression}, kind `trigger`: the only
 * variable is `event`) whether `filterCel` and `inputCel` compile, and fills absent expressions
 * with null.
 */
import { InvalidRequestError } from './errors.ts';
import type { WorkflowTriggerDetail } from './schemas/workflow.ts';
import type { DefinitionChecks } from './validation.ts';

/** A trigger as clients send it (the body schema has checked its shape). */
export interface WorkflowTriggerInput {
  event: string;
  filterCel?: string | null;
  inputCel?: string | null;
}

/**
 * `triggers` checked and completed (`filterCel`, `inputCel` null when absent); absent is [].
 * Throws InvalidRequestError (400) with a problem per bad expression, each naming its trigger:
 * `triggers[1].filterCel: <what is wrong>`.
 */
export function normalizeTriggers(triggers: readonly WorkflowTriggerInput[] | undefined, checks: Pick<DefinitionChecks, 'checkExpression'>): WorkflowTriggerDetail[] {
  const problems: string[] = [];
  const normalized = (triggers ?? []).map((trigger, index) => {
    for (const field of ['filterCel', 'inputCel'] as const) {
      const expression = trigger[field];
      if (expression == null) continue;
      const error = checks.checkExpression(expression, 'trigger');
      if (error !== null) problems.push(`triggers[${index}].${field}: ${error}`);
    }
    return { event: trigger.event, filterCel: trigger.filterCel ?? null, inputCel: trigger.inputCel ?? null };
  });
  if (problems.length > 0) throw new InvalidRequestError('Invalid event triggers', problems);
  return normalized;
}
