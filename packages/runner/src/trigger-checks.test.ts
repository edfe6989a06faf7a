/**
 * Save-time checks of event triggers (issue #21 item 2): domain `normalizeTriggers` with the
 * runner's CEL checks (kind `trigger`: the only variable is `event`). Problems name the trigger
 * and the field; absent expressions become null.
 */
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidRequestError, normalizeTriggers } from '@switchyard/domain';
import { CelEngine } from './cel/index.ts';
import { definitionChecks } from './definition-checks.ts';
import { createExecutorRegistry } from './executors/registry.ts';

const registry = createExecutorRegistry({ executors: {} }, { baseDir: tmpdir(), env: {} });
afterAll(() => registry.close());
const checks = definitionChecks(registry, new CelEngine());

/** The problems `normalizeTriggers` reports for `triggers`, or [] when it accepts them. */
function problemsOf(triggers: Parameters<typeof normalizeTriggers>[0]): string[] {
  try {
    normalizeTriggers(triggers, checks);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return (error as InvalidRequestError).problems ?? [];
  }
}

describe('normalizeTriggers', () => {
  it('completes accepted triggers: absent expressions are null, absent triggers []', () => {
    expect(normalizeTriggers(undefined, checks)).toEqual([]);
    expect(normalizeTriggers([{ event: 'order.created' }, { event: 'order.paid', filterCel: 'event.data.total > 100.0', inputCel: "{ 'orderId': event.data.id }" }], checks)).toEqual([
      { event: 'order.created', filterCel: null, inputCel: null },
      { event: 'order.paid', filterCel: 'event.data.total > 100.0', inputCel: "{ 'orderId': event.data.id }" },
    ]);
  });

  it('names the trigger and field of a syntax error', () => {
    const problems = problemsOf([{ event: 'a' }, { event: 'b', filterCel: 'event.data.total >' }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^triggers\[1\]\.filterCel: .*(line|column|Syntax|syntax)/);
  });

  it('refuses every variable but event: the step variables are not there when an event arrives', () => {
    for (const expression of ['input.x', 'previous_step_outputs', 'additional_data.triggerSource == "api"']) {
      const problems = problemsOf([{ event: 'a', inputCel: expression }]);
      expect(problems, expression).toHaveLength(1);
      expect(problems[0]).toMatch(/^triggers\[0\]\.inputCel: .*event/);
    }
  });

  it('reports every bad expression at once', () => {
    expect(problemsOf([{ event: 'a', filterCel: '(((', inputCel: 'nope(' }, { event: 'b', filterCel: 'event.name == "b"' }, { event: 'c', inputCel: 'x' }])).toEqual([
      expect.stringMatching(/^triggers\[0\]\.filterCel: /),
      expect.stringMatching(/^triggers\[0\]\.inputCel: /),
      expect.stringMatching(/^triggers\[2\]\.inputCel: /),
    ]);
  });

  it('refuses an expression over the engine limits (a deeply nested one)', () => {
    expect(problemsOf([{ event: 'a', filterCel: `${'('.repeat(500)}true${')'.repeat(500)}` }])).toEqual([expect.stringMatching(/^triggers\[0\]\.filterCel: /)]);
  });
});
