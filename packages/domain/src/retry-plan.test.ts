import { describe, expect, it } from 'vitest';
import type { NodeRunRecord, RequirementRecord } from './records.ts';
import { decisionsToReplay, nodeRunsToReuse } from './retry-plan.ts';

const requirement = (stepId: string, fields: Partial<RequirementRecord>): RequirementRecord =>
  ({ stepId, decidedAt: new Date(), decidedBy: 'human', resolution: 'confirm', onReject: 'skip', ...fields }) as RequirementRecord;

describe('the plan of a full retry', () => {
  it('replays human and timeout decisions, not those that cancelled the run, gates closed by its end, nor human requests', () => {
    const replayed = decisionsToReplay([
      requirement('confirmed', {}),
      requirement('rejected-retry', { resolution: 'reject', onReject: 'retry' }),
      requirement('timed-out', { decidedBy: 'timeout', resolution: 'skip' }),
      requirement('rejected-cancel', { resolution: 'reject', onReject: 'cancel' }),
      requirement('timeout-cancel', { decidedBy: 'timeout', resolution: 'cancel' }),
      requirement('closed', { decidedBy: 'run_ended', resolution: 'cancel' }),
      requirement('undecided', { decidedAt: null, decidedBy: null, resolution: null }),
      requirement('human-request', { phase: 'ask' }),
    ]);
    expect(replayed.map((r) => r.stepId)).toEqual(['confirmed', 'rejected-retry', 'timed-out']);
  });

  it('reuses completed node runs only', () => {
    const nodeRun = (id: string, status: NodeRunRecord['status']) => ({ id, status }) as NodeRunRecord;
    expect(nodeRunsToReuse([nodeRun('a', 'completed'), nodeRun('b', 'failed'), nodeRun('c', 'skipped'), nodeRun('d', 'cancelled')]).map((n) => n.id)).toEqual(['a']);
  });
});
