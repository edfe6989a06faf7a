import { describe, expect, it } from 'vitest';
import { CelEngine } from './cel-engine.ts';
import { CelEvaluationError } from './cel-evaluation-error.ts';
import { ROUTER_VARIABLES, STEP_VARIABLES } from './variables.ts';

const engine = new CelEngine();

/** Runs `run` and returns the CelEvaluationError it throws. */
function evaluationError(run: () => unknown): CelEvaluationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CelEvaluationError);
    return error as CelEvaluationError;
  }
  throw new Error('expected a CelEvaluationError');
}

function rejection(expression: string, variables: readonly string[] = STEP_VARIABLES): string {
  const result = engine.check(expression, variables);
  if (result.ok) throw new Error(`expected ${expression} to be rejected`);
  return result.message;
}

describe('CelEngine.check', () => {
  it.each([
    ["input.customerType == 'enterprise'", STEP_VARIABLES],
    ['has(input.x) && input.x > 2.0', STEP_VARIABLES],
    ['input.items.all(i, i.price > 0.0)', STEP_VARIABLES],
    ['input.items.exists(i, i.tags.exists(t, t == input.tag))', STEP_VARIABLES],
    ['input.items.map(i, i.price * 2.0).filter(p, p > 10.0)', STEP_VARIABLES],
    ["previous_step_outputs['Validate'].valid", STEP_VARIABLES],
    ['step_choices[0]', ROUTER_VARIABLES],
    ['loop_state.iteration >= 3.0', STEP_VARIABLES],
    ["input.name.lowerAscii().indexOf('x') >= 0 && strings.quote(input.name) != ''", STEP_VARIABLES],
    ["type(input.n) == double && int(input.n) % 2 == 0 && duration('1s') < duration('2s')", STEP_VARIABLES],
    ['{input.key: [1, 2u, 3.0, b"x", null]}.size() == 1', STEP_VARIABLES],
    ['size(input.items) > 0 ? input.items[0] : previous_step_content', STEP_VARIABLES],
    ['// a comment\ninput.a &&\n  input.b', STEP_VARIABLES],
  ] as const)('accepts %s', (expression, variables) => {
    expect(engine.check(expression, variables)).toEqual({ ok: true });
  });

  it('rejects syntax errors with the position and the parser explanation', () => {
    expect(rejection('input.x ==')).toMatch(/^syntax error at line 1, column 9: found = but expecting/);
    expect(rejection('input.a &&\n  input.b ==')).toBe('syntax error at line 2, column 11: found = but expecting end of input');
    expect(rejection('')).toMatch(/^syntax error at line 1, column 1: found end of input but expecting/);
    // `loop` is reserved in CEL, the reason the loop variable is called loop_state.
    expect(rejection('loop.iteration > 1.0')).toBe('syntax error at line 1, column 1: reserved identifier');
  });

  it('rejects undeclared variables, naming them and listing the allowed ones', () => {
    expect(rejection('inputs.x == 1.0 || step_choices[0] == "a"')).toBe(
      "unknown variables 'inputs' (line 1, column 1), 'step_choices' (line 1, column 20); available variables: " +
        'input, previous_step_content, previous_step_outputs, additional_data, session_state, loop_state, user_input',
    );
    expect(rejection('x', [])).toBe("unknown variable 'x' (line 1, column 1); available variables: (none)");
  });

  it('scopes comprehension variables to their comprehension', () => {
    expect(rejection('input.items.all(i, i > 0.0) && i > 0.0')).toMatch(/^unknown variable 'i' \(line 1, column 32\)/);
    expect(rejection('input.items.all(i, i > j)')).toMatch(/^unknown variable 'j'/);
  });

  it('does not let has() or selections hide undeclared variables', () => {
    expect(rejection('has(missing.x)')).toMatch(/^unknown variable 'missing'/);
    expect(rejection('[1].map(x, other.y)')).toMatch(/^unknown variable 'other'/);
  });

  it('treats JavaScript prototype names as ordinary, undeclared identifiers', () => {
    expect(rejection('constructor')).toMatch(/^unknown variable 'constructor'/);
    expect(rejection('__proto__ == null')).toMatch(/^unknown variable '__proto__'/);
  });

  it('rejects unknown functions, misused macros and wrong call shapes', () => {
    expect(rejection("input.name.startWith('a')")).toBe("unknown function 'startWith' at line 1, column 11");
    expect(rejection('input.items.all(i)')).toMatch(/^invalid use of the macro 'all': write list\.all\(x, predicate\)/);
    expect(rejection("startsWith(input.name, 'a')")).toMatch(/^'startsWith' is a method: write value\.startsWith\(\.\.\.\)/);
    expect(rejection("input.name.substring(1, 2, 3)")).toMatch(/^'substring' takes 1 or 2 arguments, got 3/);
    expect(rejection('input.toString()')).toBe("unknown function 'toString' at line 1, column 6");
    expect(rejection('Unknown{a: 1}')).toMatch(/^unknown message type 'Unknown'/);
  });

  it('rejects expressions over the length limit', () => {
    const long = `input.a == '${'x'.repeat(4100)}'`;
    expect(rejection(long)).toBe(`expression is too long: ${long.length} characters (limit 4096)`);
  });

  it('rejects nesting deeper than the limit, before parsing', () => {
    expect(engine.check(`${'('.repeat(32)}input${')'.repeat(32)}`, STEP_VARIABLES)).toEqual({ ok: true });
    expect(rejection(`${'['.repeat(33)}input${']'.repeat(33)}`)).toBe(
      'expression is nested too deeply: 33 levels of (), [] or {} (limit 32, exceeded at line 1, column 33)',
    );
    // Deep enough to overflow the parser's stack if it were parsed.
    expect(rejection(`${'('.repeat(1000)}1${')'.repeat(1000)}`)).toMatch(/^expression is nested too deeply: 1000 levels/);
  });

  it('rejects syntax trees deeper than the limit (long operator chains)', () => {
    expect(engine.check(Array(100).fill('a').join(' + '), ['a'])).toEqual({ ok: true });
    expect(rejection(Array(1000).fill('a').join('+'), ['a'])).toMatch(/^expression is too complex: its syntax tree is more than 128 levels deep/);
    // && and || chains are balanced by the parser.
    expect(engine.check(Array(1000).fill('a').join('&&'), ['a'])).toEqual({ ok: true });
  });

  it('applies custom limits', () => {
    const strict = new CelEngine({ limits: { maxLength: 10, maxNesting: 1 } });
    expect(strict.check('input.abcdef', ['input'])).toEqual({ ok: false, message: 'expression is too long: 12 characters (limit 10)' });
    expect(strict.check('f((1))', [])).toMatchObject({ ok: false, message: expect.stringMatching(/^expression is nested too deeply: 2 levels/) });
    expect(() => new CelEngine({ limits: { maxNesting: 0 } })).toThrow(RangeError);
  });
});

describe('CelEngine.evaluate', () => {
  it('converts JSON in and plain JSON out (maps, lists, nesting)', () => {
    const input = { user: { name: 'Ada', tags: ['a', 'b'], address: { city: 'Paris' } }, items: [{ price: 2 }, { price: 3.5 }] };
    expect(engine.evaluate('input', { input })).toEqual(input);
    expect(engine.evaluate('input.user.address', { input })).toEqual({ city: 'Paris' });
    expect(engine.evaluate('input.items.map(i, i.price * 2.0)', { input })).toEqual([4, 7]);
    expect(engine.evaluate("{'name': input.user.name, 'count': size(input.items), 'ok': true, 'none': null}", { input })).toEqual({
      name: 'Ada',
      count: 2,
      ok: true,
      none: null,
    });
  });

  it('converts the other CEL types to JSON as documented', () => {
    expect(engine.evaluate('{1: 2u, true: 3}', {})).toEqual({ 1: 2, true: 3 });
    expect(engine.evaluate('9007199254740993', {})).toBe('9007199254740993');
    expect(engine.evaluate("b'hi'", {})).toBe('aGk=');
    expect(engine.evaluate("timestamp('2024-01-02T03:04:05.5Z')", {})).toBe('2024-01-02T03:04:05.500Z');
    expect(engine.evaluate("duration('90m')", {})).toBe('5400s');
    expect(engine.evaluate('type(1.5)', {})).toBe('double');
    expect(evaluationError(() => engine.evaluate('[1.0 / 0.0]', {})).reason).toBe('result[0] is Infinity, which JSON cannot represent');
    expect(evaluationError(() => engine.evaluate('google.protobuf.Empty{}', {})).reason).toBe(
      "unknown message type 'google.protobuf.Empty' at line 1, column 1",
    );
  });

  it('treats JSON numbers as doubles: comparisons mix with ints, arithmetic does not', () => {
    const variables = { input: { n: 3, items: ['a', 'b'], i: 1 } };
    expect(engine.evaluate('input.n == 3', variables)).toBe(true);
    expect(engine.evaluate('input.n == 3.0', variables)).toBe(true);
    expect(engine.evaluate('input.n > 2 && input.n in [1, 2, 3]', variables)).toBe(true);
    expect(engine.evaluate('type(input.n) == double', variables)).toBe(true);
    expect(engine.evaluate('input.items[input.i]', variables)).toBe('b');
    expect(engine.evaluate('input.n + 1.0', variables)).toBe(4);
    expect(engine.evaluate('int(input.n) + 1', variables)).toBe(4);
    expect(evaluationError(() => engine.evaluate('input.n + 1', variables)).reason).toBe(
      "found no matching overload for '_+_' applied to '(double, int)' " +
        '(JSON numbers are doubles: write 1.0 rather than 1, or convert with int(...) or double(...))',
    );
  });

  it('treats null-valued keys as absent for has() and in (library behaviour)', () => {
    const variables = { input: { x: null } };
    expect(engine.evaluate('has(input.x)', variables)).toBe(false);
    expect(engine.evaluate("'x' in input", variables)).toBe(false);
    expect(engine.evaluate('input.x == null', variables)).toBe(true);
  });

  it('skips undefined properties as JSON does, and rejects non-JSON values with their path', () => {
    expect(engine.evaluate('input', { input: { a: 1, b: undefined, c: [undefined] } })).toEqual({ a: 1, c: [null] });
    expect(evaluationError(() => engine.evaluate('input.when', { input: { when: new Date(0) } })).reason).toBe(
      'input.when is not a JSON value (Date)',
    );
    expect(evaluationError(() => engine.evaluate('input', { input: { list: [1, 2n] } })).reason).toBe('input.list[1] is not a JSON value (bigint)');
  });

  it('throws CelEvaluationError with the expression for evaluation failures', () => {
    const missing = evaluationError(() => engine.evaluate('input.user.email', { input: { user: {} } }));
    expect(missing.message).toBe('CEL expression `input.user.email` failed: field not found: email');
    expect(missing.expression).toBe('input.user.email');
    expect(missing.code).toBe('CEL_EVALUATION_FAILED');
    expect(evaluationError(() => engine.evaluate("input.n + 'a'", { input: { n: 1 } })).reason).toBe(
      "found no matching overload for '_+_' applied to '(double, string)'",
    );
    expect(evaluationError(() => engine.evaluate('int(input.n) / 0', { input: { n: 1 } })).reason).toBe('int divide by zero');
    expect(evaluationError(() => engine.evaluate('input.x ==', {})).reason).toMatch(/^syntax error at line 1, column 9/);
  });

  it('rejects variables that were not given, listing those that were', () => {
    expect(evaluationError(() => engine.evaluate('loop_state.iteration', { input: {}, user_input: undefined })).reason).toBe(
      "unknown variable 'loop_state' (line 1, column 1); available variables: input",
    );
  });

  it('quotes long expressions in messages in part only', () => {
    const expression = `input.a == '${'x'.repeat(300)}'`;
    const error = evaluationError(() => engine.evaluate(expression, { input: {} }));
    expect(error.message).toBe(`CEL expression \`${expression.slice(0, 200)}…\` failed: field not found: a`);
    expect(error.expression).toBe(expression);
  });

  it('keeps JavaScript prototypes out of reach', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "plain": {}}') as Record<string, unknown>;
    expect(engine.evaluate('input.__proto__', { input })).toEqual({ polluted: true });
    expect(engine.evaluate("input['__proto__'].polluted", { input })).toBe(true);
    for (const expression of ['input.constructor', "input['constructor']", 'input.plain.toString', "'abc'.constructor", 'input.plain.__proto__']) {
      expect(evaluationError(() => engine.evaluate(expression, { input })).reason).toMatch(/^field not found: /);
    }
    expect(evaluationError(() => engine.evaluate('constructor', {})).reason).toMatch(/^unknown variable 'constructor'/);
    const output = engine.evaluate("{'__proto__': {'polluted': true}}", {}) as Record<string, unknown>;
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(Object.keys(output)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('evaluates a regex bomb in linear time (RE2)', () => {
    const started = performance.now();
    expect(engine.evaluate(`'${'a'.repeat(40)}!'.matches('(a+)+$')`, {})).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('offers the strings extension', () => {
    const input = { name: ' Ada Lovelace ' };
    expect(engine.evaluate("input.name.trim().lowerAscii().split(' ')", { input })).toEqual(['ada', 'lovelace']);
    expect(engine.evaluate("input.name.indexOf('Love')", { input })).toBe(5);
    expect(engine.evaluate("'%s has %d items'.format(['cart', 3])", {})).toBe('cart has 3 items');
  });

  it('compiles each expression once and serves repeats from the cache', () => {
    const cached = new CelEngine();
    cached.check('input.a > 1.0', ['input']);
    cached.evaluate('input.a > 1.0', { input: { a: 2 } });
    cached.evaluateBool('input.a > 1.0', { input: { a: 0 } });
    expect(cached.stats()).toEqual({ compilations: 1, cacheHits: 2, cachedExpressions: 1 });
  });

  it('bounds the cache, dropping the least recently used expression', () => {
    const small = new CelEngine({ cacheSize: 2 });
    small.evaluate('1', {});
    small.evaluate('2', {});
    small.evaluate('1', {});
    small.evaluate('3', {}); // evicts '2'
    small.evaluate('1', {});
    small.evaluate('2', {});
    expect(small.stats()).toEqual({ compilations: 4, cacheHits: 2, cachedExpressions: 2 });
  });

  it('does not cache expressions that fail to compile', () => {
    const cached = new CelEngine();
    cached.check('input.', ['input']);
    cached.check('input.', ['input']);
    expect(cached.stats()).toEqual({ compilations: 2, cacheHits: 0, cachedExpressions: 0 });
  });
});

describe('CelEngine.evaluateBool and evaluateString', () => {
  it('return results of the expected type', () => {
    expect(engine.evaluateBool("input.customerType == 'enterprise'", { input: { customerType: 'enterprise' } })).toBe(true);
    expect(engine.evaluateString("step_choices[input.vip ? 0 : 1]", { input: { vip: false }, step_choices: ['fast', 'slow'] })).toBe('slow');
  });

  it('reject results of another type, naming it', () => {
    expect(evaluationError(() => engine.evaluateBool('input.n', { input: { n: 1 } })).message).toBe(
      'CEL expression `input.n` failed: expected bool, got double',
    );
    expect(evaluationError(() => engine.evaluateBool('input', { input: {} })).reason).toBe('expected bool, got map');
    expect(evaluationError(() => engine.evaluateBool('null', {})).reason).toBe('expected bool, got null_type');
    expect(evaluationError(() => engine.evaluateString('size(input)', { input: [] })).reason).toBe('expected string, got int');
  });
});
