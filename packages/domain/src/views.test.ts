import { describe, expect, it } from 'vitest';
import { MAX_ACTIVE_NODE_IDS } from './response-bounds.ts';
import type { NodeRunStatus } from './run-status.ts';
import { emptyNodeRunTally, tallyNodeRuns } from './views.ts';

describe('tallyNodeRuns', () => {
  it('counts every status and names the running and gated nodes once each, sorted', () => {
    const statuses: Array<[string, NodeRunStatus]> = [
      ['loop', 'running'],
      ['tick', 'completed'],
      ['tick', 'completed'],
      ['tick', 'running'],
      ['review', 'awaiting_approval'],
      ['review', 'awaiting_approval'],
      ['queued', 'pending'],
      ['bad', 'failed'],
      ['maybe', 'skipped'],
      ['stopped', 'cancelled'],
    ];
    expect(tallyNodeRuns(statuses.map(([nodeId, status]) => ({ nodeId, status })))).toEqual({
      total: 10,
      counts: { pending: 1, running: 2, awaiting_approval: 2, completed: 2, failed: 1, skipped: 1, cancelled: 1 },
      activeNodeIds: ['loop', 'review', 'tick'],
    });
  });

  it(`lists at most ${MAX_ACTIVE_NODE_IDS} active node ids, the first in sort order`, () => {
    const nodeRuns = Array.from({ length: 30 }, (_, i) => ({ nodeId: `n${String(29 - i).padStart(2, '0')}`, status: 'running' as const }));
    const tally = tallyNodeRuns(nodeRuns);
    expect(tally.counts.running).toBe(30);
    expect(tally.activeNodeIds).toEqual(Array.from({ length: MAX_ACTIVE_NODE_IDS }, (_, i) => `n${String(i).padStart(2, '0')}`));
  });

  it('counts a node run with an unknown status in the total only, and nothing as empty', () => {
    expect(tallyNodeRuns([{ nodeId: 'x', status: 'weird' as NodeRunStatus }])).toEqual({ ...emptyNodeRunTally(), total: 1 });
    expect(tallyNodeRuns([])).toEqual(emptyNodeRunTally());
  });
});
