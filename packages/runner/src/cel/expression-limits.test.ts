import { describe, expect, it } from 'vitest';
import { checkSourceLimits } from './expression-limits.ts';

const limits = { maxLength: 100, maxNesting: 2, maxTreeDepth: 10 };

describe('checkSourceLimits', () => {
  it('counts (), [] and {} nesting', () => {
    expect(checkSourceLimits('f([x])', limits)).toBeUndefined();
    expect(checkSourceLimits('f([{1: 2}])', limits)).toBe('expression is nested too deeply: 3 levels of (), [] or {} (limit 2, exceeded at line 1, column 4)');
    expect(checkSourceLimits('(a) + (b) + ((c))', limits)).toBeUndefined();
  });

  it('ignores brackets in string literals and comments', () => {
    for (const source of [
      "'((([[['",
      '"(((" + "\\"((("',
      "'''\n(((\n'''",
      '"""a"(((b"""',
      "r'\\'+'(((' == x",
      '// (((\nx',
    ]) {
      expect(checkSourceLimits(source, limits), source).toBeUndefined();
    }
    expect(checkSourceLimits("'\\'((('", limits)).toBeUndefined();
    expect(checkSourceLimits("r'\\'+f(((x)))", limits)).toMatch(/^expression is nested too deeply: 3 levels/);
  });

  it('measures length in characters', () => {
    expect(checkSourceLimits('x'.repeat(100), limits)).toBeUndefined();
    expect(checkSourceLimits('x'.repeat(101), limits)).toBe('expression is too long: 101 characters (limit 100)');
  });
});

describe('comprehension nesting', () => {
  it('accepts two nested comprehensions and rejects a third, which would multiply the work', async () => {
    const { CelEngine } = await import('./cel-engine.ts');
    const engine = new CelEngine();
    const list = '[0,1,2,3,4,5,6,7,8,9]';
    expect(engine.check(`${list}.all(a, ${list}.exists(b, a == b))`, [])).toEqual({ ok: true });
    const three = engine.check(`${list}.all(a, ${list}.all(b, ${list}.all(c, a + b + c >= 0)))`, []);
    expect(three.ok).toBe(false);
    expect(!three.ok && three.message).toMatch(/comprehensions .* may nest at most 2 deep/);
  });
});
