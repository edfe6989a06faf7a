import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLines } from './line-reader.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-lines-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readLines', () => {
  it('yields nothing for a missing file', () => {
    expect([...readLines(join(dir, 'absent'))]).toEqual([]);
  });

  it('splits lines across chunk boundaries, with byte offsets and multi-byte text intact', () => {
    const long = 'é'.repeat(700_000);
    const content = `first\n${long}\n\nlast-unterminated ✓`;
    const path = join(dir, 'lines');
    writeFileSync(path, content);
    const lines = [...readLines(path)];
    expect(lines.map((line) => line.text)).toEqual(['first', long, '', 'last-unterminated ✓']);
    expect(lines.map((line) => line.terminated)).toEqual([true, true, true, false]);
    expect(lines.map((line) => line.number)).toEqual([1, 2, 3, 4]);
    expect(lines[3]!.start).toBe(Buffer.byteLength(`first\n${long}\n\n`));
    expect(lines.map((line) => line.bytes)).toEqual([5, 1_400_000, 0, Buffer.byteLength('last-unterminated ✓')]);
  });
});
