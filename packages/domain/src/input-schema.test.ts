import { describe, expect, it } from 'vitest';
import { MAX_CACHED_VALIDATORS, MAX_INPUT_SCHEMA_BYTES, checkInputSchema, problemPaths, validateRunInput } from './input-schema.ts';

const schema = {
  type: 'object',
  required: ['customerId', 'customerEmail'],
  properties: {
    customerId: { type: 'string', minLength: 1 },
    customerEmail: { type: 'string', format: 'email' },
    customerType: { type: 'string', enum: ['individual', 'business'], default: 'individual' },
    seats: { type: 'integer', minimum: 1, default: 1 },
  },
};
/** An object schema with one required property. */
const requiring = (name: string) => ({ type: 'object', required: [name], properties: { [name]: {} } });
const workflow = { id: 'a'.repeat(24), version: 1, inputSchema: schema };

describe('validateRunInput', () => {
  it('names a missing required property by its path', () => {
    const check = validateRunInput(workflow, { customerId: 'c-1' });
    expect(check).toEqual({ ok: false, problems: ['/customerEmail: is required'] });
  });

  it('reports every problem at once: wrong type, enum, format', () => {
    const check = validateRunInput(workflow, { customerId: 'c-1', customerEmail: 'nope', seats: '3', customerType: 'alien' });
    expect(check.ok).toBe(false);
    const problems = check.ok ? [] : check.problems;
    expect(problems).toContain('/seats: must be integer');
    expect(problems).toContain('/customerType: must be one of "individual", "business"');
    expect(problems).toContain('/customerEmail: must match format "email"');
    expect(problemPaths(problems).sort()).toEqual(['/customerEmail', '/customerType', '/seats']);
  });

  it('applies defaults to a copy and leaves the caller input alone', () => {
    const input = { customerId: 'c-1', customerEmail: 'a@example.com' };
    const check = validateRunInput(workflow, input);
    expect(check).toEqual({ ok: true, input: { customerId: 'c-1', customerEmail: 'a@example.com', customerType: 'individual', seats: 1 } });
    expect(input).toEqual({ customerId: 'c-1', customerEmail: 'a@example.com' });
  });

  it('passes any input through when the workflow declares none', () => {
    const input = { anything: [1, 2] };
    expect(validateRunInput({ id: workflow.id, version: 1, inputSchema: null }, input)).toEqual({ ok: true, input });
  });

  it('uses the schema of the version given, not a stale compiled one', () => {
    const v2 = { ...workflow, inputSchema: requiring('other') };
    expect(validateRunInput(workflow, { customerId: 'c', customerEmail: 'a@example.com' }).ok).toBe(true);
    expect(validateRunInput(v2, { customerId: 'c', customerEmail: 'a@example.com' })).toEqual({ ok: false, problems: ['/other: is required'] });
  });

  it('keeps working past the cache bound (oldest schemas are dropped and recompiled on use)', () => {
    for (let version = 1; version <= MAX_CACHED_VALIDATORS + 20; version++) {
      const check = validateRunInput({ id: 'b'.repeat(24), version, inputSchema: requiring(`f${version}`) }, {});
      expect(check).toEqual({ ok: false, problems: [`/f${version}: is required`] });
    }
    expect(validateRunInput({ id: 'b'.repeat(24), version: 1, inputSchema: requiring('f1') }, { f1: 1 }).ok).toBe(true);
  });
});

describe('checkInputSchema', () => {
  it('accepts a 2020-12 schema with local references and formats', () => {
    expect(checkInputSchema({ ...schema, $defs: { id: { type: 'string' } }, properties: { ...schema.properties, customerId: { $ref: '#/$defs/id' } } })).toEqual([]);
  });

  it('refuses what is not a schema object', () => {
    expect(checkInputSchema([])).toEqual(['/inputSchema: must be a JSON object (a JSON Schema, draft 2020-12)']);
    expect(checkInputSchema('string')).toHaveLength(1);
  });

  it('refuses a schema ajv cannot compile (strict: unknown keyword, unknown format, bad type)', () => {
    expect(checkInputSchema({ type: 'object', propertees: {} })[0]).toMatch(/^\/inputSchema: .*propertees/);
    expect(checkInputSchema({ type: 'string', format: 'shoe-size' })[0]).toMatch(/^\/inputSchema: .*shoe-size/);
    expect(checkInputSchema({ type: 'strng' })[0]).toMatch(/^\/inputSchema: /);
  });

  it('refuses remote and unresolvable references and $id', () => {
    expect(checkInputSchema({ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } })).toEqual([
      '/inputSchema/properties/a/$ref: only local references (#...) are allowed',
    ]);
    expect(checkInputSchema({ $id: 'https://example.com/s.json', type: 'object' })).toEqual(['/inputSchema/$id: is not allowed (input schemas are self-contained)']);
    expect(checkInputSchema({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })[0]).toMatch(/^\/inputSchema: .*missing/);
  });

  it('refuses a schema over the size or depth limit', () => {
    const big = { type: 'object', description: 'x'.repeat(MAX_INPUT_SCHEMA_BYTES) };
    expect(checkInputSchema(big)[0]).toMatch(/^\/inputSchema: is \d+ bytes as JSON, more than the limit of 16384$/);
    let deep: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { a: deep } };
    expect(checkInputSchema(deep)).toEqual(['/inputSchema: nests deeper than 32 levels']);
  });
});
