import { describe, expect, it } from 'vitest';
import { immutable, isImmutable, memoOnImmutable } from './immutable.ts';

describe('immutable values', () => {
  it('freezes JSON values deep, so nobody can change them afterwards', () => {
    const value = immutable({ a: [1, { b: 'x' }], c: null });
    expect(isImmutable(value)).toBe(true);
    expect(isImmutable(value.a)).toBe(true);
    expect(isImmutable(value.a[1])).toBe(true);
    expect(() => {
      (value.a[1] as { b: string }).b = 'changed';
    }).toThrow(TypeError);
    expect(() => (value.a as unknown[]).push(2)).toThrow(TypeError);
    expect(value).toEqual({ a: [1, { b: 'x' }], c: null });
  });

  it('leaves values holding anything but JSON changeable, their JSON parts made immutable', () => {
    const date = new Date(0);
    const inner = { fine: true };
    const value = immutable({ when: date, inner, missing: undefined });
    expect(isImmutable(value)).toBe(false);
    expect(Object.isFrozen(value)).toBe(false);
    expect(isImmutable(inner)).toBe(true);
    expect(isImmutable(date)).toBe(false);
    expect(isImmutable(immutable([1, , 3]))).toBe(false); // a hole
    expect(isImmutable(immutable({ n: Number.NaN }))).toBe(false);
  });

  it('wraps earlier immutable values without walking them again', () => {
    const earlier = immutable({ deep: { deeper: [1, 2, 3] } });
    const wrapper = immutable({ input: earlier, arguments: { i: 1 } });
    expect(isImmutable(wrapper)).toBe(true);
    expect(wrapper.input).toBe(earlier);
  });

  it('remembers what is computed from an immutable value, and computes it every time for others', () => {
    const cache = new WeakMap<object, number>();
    let calls = 0;
    const count = (value: unknown): number => {
      calls += 1;
      return Object.keys(value as object).length;
    };
    const frozen = immutable({ a: 1, b: 2 });
    expect(memoOnImmutable(cache, frozen, count)).toBe(2);
    expect(memoOnImmutable(cache, frozen, count)).toBe(2);
    expect(calls).toBe(1);
    const changeable: Record<string, number> = { a: 1 };
    expect(memoOnImmutable(cache, changeable, count)).toBe(1);
    changeable.b = 2;
    expect(memoOnImmutable(cache, changeable, count)).toBe(2);
    expect(calls).toBe(3);
  });
});
