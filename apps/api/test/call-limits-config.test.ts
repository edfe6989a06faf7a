/**
 * The caps on concurrent executor calls in the configuration (security issue, item 9):
 * `SWITCHYARD_MAX_CONCURRENT_CALLS` (default 256) and `SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN`
 * (default 32), positive integers; anything else stops the start with the variable's name.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';

describe('concurrent call caps', () => {
  it('default to 256 per instance and 32 per origin', () => {
    expect(loadConfig({})).toMatchObject({ maxConcurrentCalls: 256, maxConcurrentCallsPerOrigin: 32 });
  });

  it('take positive integers', () => {
    const config = loadConfig({ SWITCHYARD_MAX_CONCURRENT_CALLS: '10', SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN: '2' });
    expect(config).toMatchObject({ maxConcurrentCalls: 10, maxConcurrentCallsPerOrigin: 2 });
  });

  it('refuse zero, negatives and non-integers, naming the variable', () => {
    expect(() => loadConfig({ SWITCHYARD_MAX_CONCURRENT_CALLS: '0' })).toThrow(/^Invalid configuration: SWITCHYARD_MAX_CONCURRENT_CALLS must be an integer between 1 and/);
    expect(() => loadConfig({ SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN: '1.5' })).toThrow(/^Invalid configuration: SWITCHYARD_MAX_CONCURRENT_CALLS_PER_ORIGIN must be/);
  });
});
