/**
 * The shared YAML parser (yaml-definition.ts), which both the API (YAML bodies, in worker threads)
 * and the MCP bridge (`yaml` arguments) use: plain JSON data whatever the YAML did to build it,
 * and refusals naming line and column.
 */
import { describe, expect, it } from 'vitest';
import { MAX_YAML_BYTES, YamlDefinitionError, parseYamlDefinition, yamlDefinitionToJson } from './yaml-definition.ts';

/** The error `run` throws (a YamlDefinitionError), or a failure. */
function refusal(run: () => unknown): YamlDefinitionError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(YamlDefinitionError);
    return error as YamlDefinitionError;
  }
  throw new Error('expected a refusal');
}

describe('parseYamlDefinition', () => {
  it('makes each alias a copy: changing one place leaves the other as it was', () => {
    const value = parseYamlDefinition('a: &x {k: [1, 2]}\nb: *x\n') as { a: { k: number[] }; b: { k: number[] } };
    expect(value.b).toEqual(value.a);
    expect(value.b).not.toBe(value.a);
    value.a.k.push(3);
    expect(value.b.k).toEqual([1, 2]);
  });

  it('keeps __proto__ an own key of a plain object and changes no prototype', () => {
    const value = parseYamlDefinition('__proto__: {polluted: true}\nconstructor: {prototype: {polluted: true}}\n') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(value).toEqual(JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'));
  });

  it('reads the core schema: hex and octal integers, quoted and tagged strings, no dates', () => {
    expect(parseYamlDefinition('a: 0x1F\nb: 0o17\nc: "12"\nd: !!str 13\ne: 2024-01-01\nf: ~\ng: True\n')).toStrictEqual({
      a: 31, b: 15, c: '12', d: '13', e: '2024-01-01', f: null, g: true,
    });
  });

  it('skips a byte order mark; refuses blank text', () => {
    expect(parseYamlDefinition('\uFEFFa: 1\n')).toEqual({ a: 1 });
    expect(refusal(() => parseYamlDefinition(' \n'))).toMatchObject({ kind: 'invalid', message: 'The request body holds no YAML document' });
  });

  it('names line and column of what JSON cannot hold: a second document, a custom tag, .inf, a collection key', () => {
    expect(refusal(() => parseYamlDefinition('a: 1\n---\nb: 2\n')).message).toBe('YAML line 2, column 1: the body holds more than one YAML document; send one');
    expect(refusal(() => parseYamlDefinition('a: !!js/function x\n')).message).toMatch(/^YAML line 1, column 4: .*only the tags of the YAML 1\.2 core schema/);
    expect(refusal(() => parseYamlDefinition('a: 1\nb: .inf\n')).message).toBe("YAML line 2, column 4: '.inf' is not a number JSON can hold");
    expect(refusal(() => parseYamlDefinition('? [a]\n: 1\n')).message).toMatch(/^YAML line 1, column \d+: a mapping key must be a scalar/);
  });

  it('finds a duplicate key among 50,000 (the package\'s own check would compare every pair)', () => {
    const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}: ${i}`);
    expect(refusal(() => parseYamlDefinition(`${keys.join('\n')}\nk7: again\n`)).message).toMatch(/^YAML line 50001, column 1: the key 'k7' appears twice/);
  });

  it('refuses a million open brackets before building anything', () => {
    expect(refusal(() => parseYamlDefinition(`a: ${'['.repeat(1_000_000)}`)).kind).toBe('invalid');
    expect(refusal(() => parseYamlDefinition(`${'- '.repeat(300_000)}x`)).message).toMatch(/nests deeper than 128 levels/);
  });

  it('caps alias expansions at 100 and the expanded value at twice the byte limit (too_large)', () => {
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${'bcdefghi'[i]}: &${'bcdefghi'[i]} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]`)].join('\n');
    expect(refusal(() => parseYamlDefinition(laughs)).message).toMatch(/^YAML line 2, column \d+: more than 100 alias expansions/);
    const wide = `a: &a "${'x'.repeat(1000)}"\nb: [${Array(30).fill('*a').join(', ')}]\n`;
    expect(parseYamlDefinition(wide, 1_000_000)).toMatchObject({ a: 'x'.repeat(1000) });
    expect(refusal(() => parseYamlDefinition(wide, 10_000))).toMatchObject({ kind: 'too_large', message: expect.stringMatching(/larger than 20000 bytes as JSON/) });
  });

  it('gives JSON text equal to the value (what a parser thread hands back), with the API\'s 1 MiB default limit', () => {
    expect(yamlDefinitionToJson('name: x\nnodes: [{name: A}]\n')).toBe('{"name":"x","nodes":[{"name":"A"}]}');
    expect(MAX_YAML_BYTES).toBe(1024 * 1024);
  });
});
