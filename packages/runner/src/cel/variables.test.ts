import { describe, expect, it } from 'vitest';
import { CelEngine } from './cel-engine.ts';
import { ROUTER_VARIABLES, STEP_CHOICES_VARIABLE, STEP_VARIABLES } from './variables.ts';

describe('variables', () => {
  it('offers routers the step variables plus step_choices', () => {
    expect(ROUTER_VARIABLES).toEqual([...STEP_VARIABLES, STEP_CHOICES_VARIABLE]);
    expect(STEP_VARIABLES).not.toContain(STEP_CHOICES_VARIABLE);
  });

  it('are all valid CEL identifiers (none is a reserved word)', () => {
    const engine = new CelEngine();
    for (const name of ROUTER_VARIABLES) expect(engine.check(`${name} == null`, ROUTER_VARIABLES)).toEqual({ ok: true });
  });
});
