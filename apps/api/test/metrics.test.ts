/**
 * The metrics fed from run events (run-event-metrics.ts), the workflow label bound and the scrape
 * token check, without a service: what a scrape shows after given events.
 */
import { describe, expect, it } from 'vitest';
import type { AppendedRunEvent } from '@switchyard/store';
import { Metrics } from '../src/metrics/metrics.ts';
import { runEventMetrics } from '../src/metrics/run-event-metrics.ts';
import { BoundedLabelValues } from '../src/metrics/bounded-labels.ts';
import { bearerMatches } from '../src/plugins/metrics.ts';

const T0 = Date.UTC(2026, 0, 1);
let seq = 0;

function event(type: string, workflowDefinitionId: string, payload: Record<string, unknown>, atMs = 0): AppendedRunEvent {
  seq += 1;
  return { id: `e${seq}`, runId: 'r1', workflowDefinitionId, seq, type, payload, createdAt: new Date(T0 + atMs) };
}

async function valueOf(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const metric = await metrics.registry.getSingleMetric(name)!.get();
  return metric.values.find((v) => (v as { metricName?: string }).metricName === undefined && Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

describe('run-event metrics', () => {
  it('measures an attempt from node.started to its end, by executor kind and outcome', async () => {
    const metrics = new Metrics({ processDefaults: false });
    const listen = runEventMetrics(metrics, (key) => (key === 'hook' ? 'http' : undefined));
    const node = { nodeId: 'n', nodeName: 'N', iterationPath: '', nodeRunId: 'nr1' };
    listen(event('node.started', 'w', { ...node, attempt: 1 }, 0));
    listen(event('node.failed', 'w', { ...node, attempt: 1, executorKey: 'hook', error: 'boom' }, 2_500));
    listen(event('node.retrying', 'w', { ...node, attempt: 1, delayMs: 1000 }, 2_500));
    listen(event('node.started', 'w', { ...node, attempt: 2 }, 3_500));
    listen(event('node.completed', 'w', { ...node, attempt: 2, executorKey: 'gone' }, 3_600));
    // A container node (no executor) and an end without a start are not measured.
    listen(event('node.started', 'w', { ...node, nodeRunId: 'nr2', attempt: 1 }, 0));
    listen(event('node.completed', 'w', { ...node, nodeRunId: 'nr2', attempt: 1 }, 9_000));
    listen(event('node.completed', 'w', { ...node, nodeRunId: 'nr3', attempt: 1, executorKey: 'hook' }, 9_000));
    const text = await metrics.render();
    expect(text).toContain('switchyard_node_attempt_duration_seconds_sum{executor_kind="http",outcome="failed"} 2.5');
    expect(text).toContain('switchyard_node_attempt_duration_seconds_count{executor_kind="http",outcome="failed"} 1');
    expect(text).toContain('switchyard_node_attempt_duration_seconds_sum{executor_kind="unknown",outcome="completed"} 0.1');
    expect(text).not.toContain('switchyard_node_attempt_duration_seconds_count{executor_kind="http",outcome="completed"}');
    expect(text).toContain('switchyard_node_retries_total{workflow="w"} 1');
  });

  it('counts runs by workflow up to the label bound, then as other; takeovers and timeouts', async () => {
    const metrics = new Metrics({ processDefaults: false, maxWorkflows: 2 });
    const listen = runEventMetrics(metrics, () => undefined);
    for (const workflow of ['a', 'b', 'c', 'd', 'a']) listen(event('run.started', workflow, { owner: 'me' }));
    listen(event('run.resumed', 'a', { owner: 'me', takenOverFrom: 'dead' }));
    listen(event('run.resumed', 'a', { owner: 'me' }));
    listen(event('run.failed', 'c', { errorSummary: 'x' }));
    listen(event('requirement.decided', 'a', { stepId: 's', nodeId: 'n', resolution: 'confirm', decidedBy: 'timeout' }));
    listen(event('requirement.decided', 'a', { stepId: 's', nodeId: 'n', resolution: 'confirm', decidedBy: 'human' }));
    listen(event('run.timed_out', 'a', { timeoutSeconds: 1, deadlineAt: null }));
    expect(await valueOf(metrics, 'switchyard_runs_started_total', { workflow: 'a' })).toBe(2);
    expect(await valueOf(metrics, 'switchyard_runs_started_total', { workflow: 'b' })).toBe(1);
    expect(await valueOf(metrics, 'switchyard_runs_started_total', { workflow: 'other' })).toBe(2);
    expect(await valueOf(metrics, 'switchyard_runs_finished_total', { workflow: 'other', status: 'failed' })).toBe(1);
    expect(await valueOf(metrics, 'switchyard_lease_takeovers_total')).toBe(1);
    expect(await valueOf(metrics, 'switchyard_sweeper_actions_total', { kind: 'gate_timeout' })).toBe(1);
    expect(await valueOf(metrics, 'switchyard_sweeper_actions_total', { kind: 'run_timeout' })).toBe(1);
    expect(await valueOf(metrics, 'switchyard_sweeper_actions_total', { kind: 'retention_delete' })).toBe(0);
  });

  it('reads the gauges at scrape time and keeps the last value when a read fails', async () => {
    const warnings: unknown[] = [];
    const metrics = new Metrics({ processDefaults: false, logger: { warn: (...args: unknown[]) => warnings.push(args) } as never });
    let queued: number | Error = 3;
    metrics.setSources({
      runsExecuting: () => 2,
      runsQueued: async () => {
        if (queued instanceof Error) throw queued;
        return queued;
      },
      pendingApprovals: async () => 5,
    });
    expect(await valueOf(metrics, 'switchyard_runs_queued')).toBe(3);
    queued = new Error('store down');
    expect(await valueOf(metrics, 'switchyard_runs_queued')).toBe(3);
    expect(warnings).toHaveLength(1);
    expect(await valueOf(metrics, 'switchyard_runs_executing')).toBe(2);
    expect(await valueOf(metrics, 'switchyard_pending_approvals')).toBe(5);
  });

  it('reads the store-backed gauges at most once per interval: concurrent and later scrapes share the read, a failed read is not kept', async () => {
    let now = 0;
    const metrics = new Metrics({ processDefaults: false, storeReadIntervalMs: 1_000, now: () => now });
    const reads = { queued: 0, approvals: 0 };
    let fail = false;
    metrics.setSources({
      runsExecuting: () => 0,
      runsQueued: async () => {
        reads.queued++;
        if (fail) throw new Error('store down');
        return reads.queued;
      },
      pendingApprovals: async () => ++reads.approvals,
    });
    // A burst of 50 concurrent scrapes: one read of each.
    await Promise.all(Array.from({ length: 50 }, () => metrics.render()));
    expect(reads).toEqual({ queued: 1, approvals: 1 });
    now = 999;
    expect(await valueOf(metrics, 'switchyard_runs_queued')).toBe(1);
    expect(reads).toEqual({ queued: 1, approvals: 1 });
    now = 1_000;
    fail = true;
    expect(await valueOf(metrics, 'switchyard_runs_queued')).toBe(1); // the failed read keeps the last value...
    fail = false;
    expect(await valueOf(metrics, 'switchyard_runs_queued')).toBe(3); // ...and is not shared: the next scrape reads again
    expect(reads).toEqual({ queued: 3, approvals: 1 }); // reading one gauge reads only its source
  });

  it('keeps the metrics of two instances apart (own registries)', async () => {
    const [one, two] = [new Metrics({ processDefaults: false }), new Metrics({ processDefaults: false })];
    one.sweeperAction('retention_delete', 4);
    expect(await valueOf(one, 'switchyard_sweeper_actions_total', { kind: 'retention_delete' })).toBe(4);
    expect(await valueOf(two, 'switchyard_sweeper_actions_total', { kind: 'retention_delete' })).toBe(0);
  });
});

describe('BoundedLabelValues', () => {
  it('admits the first values up to the limit, keeps them, and maps later ones to other', () => {
    const labels = new BoundedLabelValues(2);
    expect(['x', 'y', 'z', 'x', 'y', 'z'].map((v) => labels.label(v))).toEqual(['x', 'y', 'other', 'x', 'y', 'other']);
    expect(labels.size).toBe(2);
    expect(new BoundedLabelValues(0).label('x')).toBe('other');
  });
});

describe('bearerMatches', () => {
  it('accepts exactly Bearer <token>', () => {
    const token = 'abcdefghijklmnop';
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    for (const header of [undefined, '', token, `Bearer ${token}q`, `Bearer  `, `Basic ${token}`, `Bearer ${token} extra`]) {
      expect(bearerMatches(header, token), String(header)).toBe(false);
    }
  });
});
