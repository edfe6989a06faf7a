import { describe, expect, it } from 'vitest';
import { childIterationPath, iterationSegment, parsePathSegment, routerRoundSegment } from './iteration-path.ts';

describe('iteration paths', () => {
  it('writes a loop iteration, its review re-runs and a router review round as segments', () => {
    expect(iterationSegment(3, 0)).toBe('3');
    expect(iterationSegment(3, 1)).toBe('3r1');
    expect(routerRoundSegment(2)).toBe('r2');
  });

  it('joins segments outermost first, with no separator at the top', () => {
    expect(childIterationPath('', '1')).toBe('1');
    expect(childIterationPath('2', '1')).toBe('2/1');
    expect(childIterationPath('2/3r1', routerRoundSegment(1))).toBe('2/3r1/r1');
  });

  it('parses what it writes', () => {
    expect(parsePathSegment(iterationSegment(12, 0))).toEqual({ iteration: 12, round: 0 });
    expect(parsePathSegment(iterationSegment(3, 10))).toEqual({ iteration: 3, round: 10 });
    expect(parsePathSegment(routerRoundSegment(2))).toEqual({ iteration: null, round: 2 });
  });

  it('refuses what is not a segment', () => {
    for (const segment of ['', '0', '03', '3r0', '3r', 'r', 'r0', 'x', '1/2', '-1', '3R1']) expect(parsePathSegment(segment), segment).toBeNull();
  });
});
