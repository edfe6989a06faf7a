import { describe, expect, it } from 'vitest';
import { ArgumentValidatorCompiler, formatArgumentProblems } from './tool-arguments.ts';

describe('ArgumentValidatorCompiler', () => {
  const compiler = new ArgumentValidatorCompiler();

  it('checks draft-07 schemas (MCP SDK 1.x servers) and reports every problem', () => {
    const validate = compiler.compile({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' }, url: { type: 'string', format: 'uri' } },
      required: ['a', 'b'],
      additionalProperties: false,
    });
    expect(validate({ a: 1, b: 2, url: 'https://example.org' })).toEqual([]);
    const problems = validate({ a: '1', url: 'not a uri', c: true });
    expect(problems).toEqual([
      { path: '/b', message: 'is required' },
      { path: '/c', message: 'is not an allowed property' },
      { path: '/a', message: 'must be number' },
      { path: '/url', message: 'must match format "uri"' },
    ]);
    expect(formatArgumentProblems(problems)).toBe('/b: is required; /c: is not an allowed property; /a: must be number; /url: must match format "uri"');
  });

  it('uses the 2020-12 dialect when the schema declares it', () => {
    const validate = compiler.compile({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    });
    expect(validate({ pair: ['x', 1] })).toEqual([]);
    expect(validate({ pair: [1, 'x'] })).toEqual([
      { path: '/pair/0', message: 'must be string' },
      { path: '/pair/1', message: 'must be number' },
    ]);
  });

  it('accepts schemas that declare an older draft', () => {
    const validate = compiler.compile({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' });
    expect(formatArgumentProblems(validate([] as unknown as Record<string, unknown>))).toBe('(arguments): must be object');
  });

  it('throws on a schema that is not valid JSON Schema', () => {
    expect(() => compiler.compile({ type: 'object', properties: { a: { type: 'no-such-type' } } })).toThrow();
  });
});
