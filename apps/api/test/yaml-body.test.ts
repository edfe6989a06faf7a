/**
 * The YAML body parser's value (plugins/yaml-body.ts) beyond what the HTTP tests see: plain JSON
 * data whatever the YAML did to build it.
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '@switchyard/domain';
import { parseYamlBody, parseYamlText } from '../src/plugins/yaml-body.ts';

const LIMIT = 1024 * 1024;

describe('parseYamlText', () => {
  it('makes each alias a copy: changing one place leaves the other as it was', () => {
    const value = parseYamlText('a: &x {k: [1, 2]}\nb: *x\n', LIMIT) as { a: { k: number[] }; b: { k: number[] } };
    expect(value.b).toEqual(value.a);
    expect(value.b).not.toBe(value.a);
    value.a.k.push(3);
    expect(value.b.k).toEqual([1, 2]);
  });

  it('keeps __proto__ an own key of a plain object and changes no prototype', () => {
    const value = parseYamlText('__proto__: {polluted: true}\nconstructor: {prototype: {polluted: true}}\n', LIMIT) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(value).toEqual(JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'));
  });

  it('reads the core schema: hex and octal integers, quoted and tagged strings, no dates', () => {
    expect(parseYamlText('a: 0x1F\nb: 0o17\nc: "12"\nd: !!str 13\ne: 2024-01-01\nf: ~\ng: True\n', LIMIT)).toStrictEqual({
      a: 31, b: 15, c: '12', d: '13', e: '2024-01-01', f: null, g: true,
    });
  });

  it('finds a duplicate key among 50,000 (the package\'s own check would compare every pair)', () => {
    const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}: ${i}`);
    expect(() => parseYamlText(`${keys.join('\n')}\nk7: again\n`, LIMIT)).toThrow(/^YAML line 50001, column 1: the key 'k7' appears twice/);
  });

  it('refuses a million open brackets before building anything', () => {
    expect(() => parseYamlText(`a: ${'['.repeat(1_000_000)}`, LIMIT)).toThrow(InvalidRequestError);
    expect(() => parseYamlText(`${'- '.repeat(300_000)}x`, LIMIT)).toThrow(/nests deeper than 128 levels/);
  });
});

describe('parseYamlBody', () => {
  it('skips a byte order mark; refuses empty, blank and non-UTF-8 bodies', () => {
    expect(parseYamlBody(Buffer.from('\uFEFFa: 1\n'), LIMIT)).toEqual({ a: 1 });
    expect(() => parseYamlBody(Buffer.alloc(0), LIMIT)).toThrow(/empty/);
    expect(() => parseYamlBody(Buffer.from(' \n'), LIMIT)).toThrow(/holds no YAML document/);
    expect(() => parseYamlBody(Buffer.from([0x61, 0x3a, 0x20, 0xff]), LIMIT)).toThrow(/not valid UTF-8/);
  });
});
