import { describe, expect, it } from 'vitest';
import {
  checkArgumentExpressions,
  findArgumentProblems,
  hasExpressions,
  listArgumentExpressions,
  resolveArguments,
} from './arguments.ts';
import { CelEngine } from './cel-engine.ts';
import { CelEvaluationError } from './cel-evaluation-error.ts';
import { STEP_VARIABLES } from './variables.ts';

const engine = new CelEngine();
const variables = { input: { user: { email: 'ada@example.com', tags: ['x', 'y'] }, n: 2 }, previous_step_content: 'summary' };

describe('resolveArguments', () => {
  it('evaluates nested $cel markers, in objects and arrays', () => {
    const config = {
      to: { $cel: 'input.user.email' },
      subject: 'Report',
      body: { text: { $cel: "'Dear ' + input.user.email" }, parts: [{ $cel: 'previous_step_content' }, 'static', { $cel: 'input.n * 2.0' }] },
      tags: { $cel: 'input.user.tags' },
    };
    expect(resolveArguments(config, variables, engine)).toEqual({
      to: 'ada@example.com',
      subject: 'Report',
      body: { text: 'Dear ada@example.com', parts: ['summary', 'static', 4] },
      tags: ['x', 'y'],
    });
  });

  it('unwraps $literal verbatim, without looking inside', () => {
    const config = { query: { $literal: { $cel: 'not evaluated' } }, list: [{ $literal: [{ $literal: 1 }] }] };
    expect(resolveArguments(config, variables, engine)).toEqual({ query: { $cel: 'not evaluated' }, list: [[{ $literal: 1 }]] });
  });

  it('copies objects that are not markers unchanged', () => {
    const config = { mixed: { $cel: 'input.n', other: 1 }, nonString: { $cel: 42 }, dollar: { $ref: '#/x' } };
    expect(resolveArguments(config, variables, engine)).toEqual(config);
  });

  it('never evaluates markers found in data', () => {
    const data = { input: { payload: { $cel: 'input' } } };
    expect(resolveArguments({ payload: { $cel: 'input.payload' } }, data, engine)).toEqual({ payload: { $cel: 'input' } });
  });

  it('returns a config without markers as is, and shares unchanged parts', () => {
    const config = { a: 1, nested: { b: [1, { c: 'd' }] }, other: { e: true } };
    expect(resolveArguments(config, variables, engine)).toBe(config);
    const withExpression = { ...config, x: { $cel: 'input.n' } };
    const resolved = resolveArguments(withExpression, variables, engine);
    expect(resolved).toEqual({ ...config, x: 2 });
    expect(resolved['nested']).toBe(config.nested);
  });

  it('keeps "__proto__" keys as plain keys', () => {
    const config = JSON.parse('{"__proto__": {"x": {"$cel": "input.n"}}}') as Record<string, unknown>;
    const resolved = resolveArguments(config, variables, engine);
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(JSON.stringify(resolved)).toBe('{"__proto__":{"x":2}}');
  });

  it('names the JSON path of a failing expression', () => {
    const config = { user: { email: { $cel: 'input.user.mail' } }, 'content-type': [{ $cel: 'input.n +' }] };
    let caught: unknown;
    try {
      resolveArguments({ user: config.user }, variables, engine);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CelEvaluationError);
    expect((caught as CelEvaluationError).path).toBe('config.user.email');
    expect((caught as CelEvaluationError).message).toBe('config.user.email: CEL expression `input.user.mail` failed: field not found: mail');
    expect(() => resolveArguments({ 'content-type': config['content-type'] }, variables, engine)).toThrow(
      /^config\["content-type"\]\[0\]: CEL expression `input\.n \+` failed: syntax error at line 1, column 9/,
    );
  });
});

describe('save-time inspection', () => {
  const config = {
    to: { $cel: 'input.user.email' },
    list: [{ $cel: 'previous_step_content' }, { $literal: { $cel: 'ignored' } }],
    broken: { $cel: 42 },
    mixed: { $cel: 'input.a', fallback: 'x', inner: { $cel: 'input.b' } },
  };

  it('lists every $cel expression with its path', () => {
    expect(listArgumentExpressions(config)).toEqual([
      { path: 'config.to', expression: 'input.user.email' },
      { path: 'config.list[0]', expression: 'previous_step_content' },
      { path: 'config.mixed.inner', expression: 'input.b' },
    ]);
  });

  it('reports objects that look like markers but are not', () => {
    expect(findArgumentProblems(config)).toEqual([
      { path: 'config.broken', message: expect.stringMatching(/^"\$cel" must be a string \(a CEL expression\), got number/) },
      { path: 'config.mixed', message: expect.stringMatching(/^"\$cel" only works as the single key of an object/) },
    ]);
    expect(findArgumentProblems({ $cel: 'input' })).toEqual([
      { path: 'config', message: expect.stringMatching(/^"\$cel" is not recognized at the top level/) },
    ]);
    expect(findArgumentProblems({ a: { $cel: 'x', $literal: 1 } })).toEqual([
      { path: 'config.a', message: expect.stringMatching(/^"\$cel" and "\$literal" only works/) },
    ]);
  });

  it('checks expressions and structure together', () => {
    expect(checkArgumentExpressions({ a: { $cel: 'inputs.x' }, b: { $cel: 1 } }, STEP_VARIABLES, engine)).toEqual([
      { path: 'config.b', message: expect.stringMatching(/^"\$cel" must be a string/) },
      { path: 'config.a', message: expect.stringMatching(/^unknown variable 'inputs' \(line 1, column 1\); available variables: input, /) },
    ]);
    expect(checkArgumentExpressions(config.to, STEP_VARIABLES, engine)).toEqual([
      { path: 'config', message: expect.stringMatching(/not recognized at the top level/) },
    ]);
    expect(checkArgumentExpressions({ to: config.to }, STEP_VARIABLES, engine)).toEqual([]);
  });

  it('tells whether a config has expressions', () => {
    expect(hasExpressions(config)).toBe(true);
    expect(hasExpressions({ a: [1, { b: 'c' }], d: { $literal: { $cel: 'x' } } })).toBe(false);
    expect(hasExpressions({ $cel: 'input' })).toBe(false);
    expect(hasExpressions('not an object')).toBe(false);
  });
});
