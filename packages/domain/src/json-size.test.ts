import { describe, expect, it } from 'vitest';
import { immutable } from './immutable.ts';
import { jsonByteLength } from './json-size.ts';

const exact = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? 'null');

/** A random value of what outputs hold, and of what JSON.stringify treats specially. */
function randomValue(random: () => number, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 4 ? 9 : 13));
  const strings = ['', 'plain', 'quote " and \\ backslash', 'line\nbreak\t\u0001', 'é ü 日本 🎉', '\ud800 lone', '</script>'];
  switch (pick) {
    case 0: return null;
    case 1: return random() < 0.5;
    case 2: return [0, -0, 1.5, -2e-7, 1e21, 123456789012, Number.NaN, Number.POSITIVE_INFINITY][Math.floor(random() * 8)];
    case 3: case 4: return strings[Math.floor(random() * strings.length)];
    case 5: return undefined;
    case 6: return new Date(1_700_000_000_000 + Math.floor(random() * 1e6));
    case 7: return () => 1;
    case 8: return { toJSON: () => ({ replaced: true }) };
    case 9: case 10: return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = 0; i < Math.floor(random() * 4); i++) object[strings[Math.floor(random() * strings.length)]! + i] = randomValue(random, depth + 1);
      return object;
    }
  }
}

describe('jsonByteLength', () => {
  it('is the byte length of JSON.stringify for every kind of value', () => {
    let seed = 7;
    const random = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let i = 0; i < 3000; i++) {
      const value = randomValue(random, 0);
      expect(jsonByteLength(value)).toBe(exact(value));
    }
  });

  it('counts undefined and values JSON leaves out as null at the top', () => {
    expect(jsonByteLength(undefined)).toBe(4);
    expect(jsonByteLength(() => 1)).toBe(4);
    expect(jsonByteLength({ a: undefined, b: 1 })).toBe(exact({ b: 1 }));
  });

  it('measures values wrapping immutable ones exactly, also after they were measured', () => {
    let output: unknown = { start: 'é' };
    for (let step = 0; step < 200; step++) {
      output = immutable({ arguments: { i: step }, input: output });
      expect(jsonByteLength(output)).toBe(exact(output));
    }
    const gathered = [output, output, { more: 'x' }];
    expect(jsonByteLength(gathered)).toBe(exact(gathered));
  });

  it('calls toJSON as JSON.stringify does: with the property name, leaving the property out when it answers undefined', () => {
    class Gone {
      toJSON(): undefined {
        return undefined;
      }
    }
    class Named {
      toJSON(key: string): string {
        return `under ${key}`;
      }
    }
    const values: unknown[] = [{ a: new Gone(), b: 1 }, { someLongerName: new Named(), list: [new Named()] }, { a: { toJSON: () => undefined } }, [new Gone()], new Named()];
    for (const value of values) expect(jsonByteLength(value)).toBe(exact(value));
  });

  it('throws where JSON.stringify throws', () => {
    expect(() => jsonByteLength({ big: 1n })).toThrow();
  });
});
