import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from './backoff.ts';

describe('backoffDelayMs', () => {
  it('doubles per retry between half and all of the nominal delay', () => {
    expect(backoffDelayMs(1, 1, 60, () => 0)).toBe(500);
    expect(backoffDelayMs(1, 1, 60, () => 0.999999)).toBe(1000);
    expect(backoffDelayMs(3, 1, 60, () => 0)).toBe(2000);
    expect(backoffDelayMs(3, 1, 60, () => 0.999999)).toBe(4000);
  });

  it('never exceeds the cap', () => {
    for (let retry = 1; retry < 40; retry++) expect(backoffDelayMs(retry, 2, 30, () => 0.999999)).toBeLessThanOrEqual(30_000);
    expect(backoffDelayMs(10, 2, 30, () => 0)).toBe(15_000);
  });
});
