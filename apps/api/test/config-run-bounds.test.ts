/** The run-bound variables of the configuration (security item 4; .notes/security-run-bounds.md). */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';

describe('run bounds configuration', () => {
  it('has documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      maxOpenHumanRequests: 100,
      maxStoredRequirements: 1_000,
      humanRequestRunBudgetBytes: 8 * 1024 * 1024,
      maxDecisionBytes: 256 * 1024,
      compactJournalBytes: 64 * 1024 * 1024,
    });
  });

  it('reads each variable and refuses values out of range, naming the variable', () => {
    expect(
      loadConfig({
        SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS: '5',
        SWITCHYARD_MAX_STORED_REQUIREMENTS: '50',
        SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES: String(4 * 1024 * 1024),
        SWITCHYARD_MAX_DECISION_BYTES: '65536',
        SWITCHYARD_COMPACT_JOURNAL_BYTES: String(16 * 1024 * 1024),
      }),
    ).toMatchObject({ maxOpenHumanRequests: 5, maxStoredRequirements: 50, humanRequestRunBudgetBytes: 4 * 1024 * 1024, maxDecisionBytes: 65_536, compactJournalBytes: 16 * 1024 * 1024 });
    // A budget over 12 MiB would leave too little of MongoDB's 16 MiB to the engine's own gates.
    expect(() => loadConfig({ SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES: String(13 * 1024 * 1024) })).toThrow(/SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES must be an integer between/);
    expect(() => loadConfig({ SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS: '0' })).toThrow(/SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS/);
    expect(() => loadConfig({ SWITCHYARD_MAX_DECISION_BYTES: String(2 * 1024 * 1024) })).toThrow(/SWITCHYARD_MAX_DECISION_BYTES/);
    expect(() => loadConfig({ SWITCHYARD_COMPACT_JOURNAL_BYTES: '1000' })).toThrow(/SWITCHYARD_COMPACT_JOURNAL_BYTES/);
  });
});
