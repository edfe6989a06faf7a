/**
 * Prometheus metrics over real HTTP (docs/operations/metrics.md, issue #20 item 2): what a scrape
 * of `GET /metrics` shows after a completed, a failed, a retried and a cancelled run and a gate
 * decided by its timeout (a ManualClock drives the retry backoff and the sweeper); the bound on
 * workflow labels; route patterns, not raw URLs, in the HTTP histogram; the scrape token.
 */
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sample } from './support/prometheus.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

/** The values the label `label` takes in the samples of `name`. */
function labelValues(text: string, name: string, label: string): Set<string> {
  const values = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const value = new RegExp(`${label}="([^"]*)"`).exec(line)?.[1];
    if (value !== undefined) values.add(value);
  }
  return values;
}

function body(nodes: unknown[]): Record<string, unknown> {
  return { name: uniqueName('metrics'), canvas: CANVAS, nodes };
}

describe('GET /metrics after runs of every outcome', () => {
  const clock = new ManualClock(Date.now());
  let svc: TestService;
  let scrape: () => Promise<string>;

  beforeAll(async () => {
    // At most 2 workflow ids as labels: the five runs below belong to five workflows.
    svc = await startService({ clock, sweepIntervalMs: 1_000, env: { SWITCHYARD_METRICS_MAX_WORKFLOWS: '2' } });
    scrape = async () => {
      const response = await svc.api.get('/metrics');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      return response.text;
    };
  });

  afterAll(async () => {
    await svc?.close();
  });

  it('counts runs, attempts, retries, pending approvals and timeouts as they happen', async () => {
    const before = await scrape();
    expect(sample(before, 'switchyard_runs_executing')).toBe(0);
    expect(sample(before, 'switchyard_runs_queued')).toBe(0);
    expect(sample(before, 'switchyard_pending_approvals')).toBe(0);
    expect(sample(before, 'switchyard_sweeper_actions_total', { kind: 'gate_timeout' })).toBe(0);

    // Completed.
    const completed = await svc.runWorkflow(body([echoStep('Echo', { a: 1 })]));
    expect(completed.run.status).toBe('completed');
    // Failed: the flaky executor fails its only attempt.
    const failed = await svc.runWorkflow(body([{ name: 'Flaky', nodeType: 'step', executorKey: 'flaky', config: {} }]));
    expect(failed.run.status).toBe('failed');
    // Retried: the first attempt fails, the retry after a 1 s backoff (manual clock) succeeds.
    const retry = await svc.startRun(
      body([{ name: 'Once', nodeType: 'step', executorKey: 'flaky', config: { times: 1 }, stepConfig: { maxRetries: 1, backoffBaseSeconds: 1, backoffMaxSeconds: 1, onError: 'fail' } }]),
    );
    await clock.untilSleepers(1);
    await clock.advance(1_000);
    expect((await svc.waitForRun(retry.workflowId, retry.runId)).status).toBe('completed');

    // Two runs parked at gates: one to cancel, one whose gate times out after 5 s (approve).
    const toCancel = await svc.startRun(body([echoStep('Gate', {}, { humanReview: { requiresConfirmation: true } })]));
    await svc.waitForGate(toCancel.workflowId, toCancel.runId);
    const timed = await svc.startRun(body([echoStep('Timed', {}, { humanReview: { requiresConfirmation: true, timeoutSeconds: 5, onTimeout: 'approve' } })]));
    await svc.waitForGate(timed.workflowId, timed.runId);
    const parked = await scrape();
    expect(sample(parked, 'switchyard_pending_approvals')).toBe(2);
    expect(sample(parked, 'switchyard_runs_executing')).toBe(0);

    const cancelled = await svc.api.post(wf(`/${toCancel.workflowId}/runs/${toCancel.runId}/cancel`), { reason: 'metrics test' });
    expect(cancelled.status).toBe(200);
    expect((await svc.waitForRun(toCancel.workflowId, toCancel.runId)).status).toBe('cancelled');
    await clock.advance(5_000);
    expect((await svc.waitForRun(timed.workflowId, timed.runId)).status).toBe('completed');
    await svc.engine.idle();

    const text = await scrape();
    const byStatus = (status: string) =>
      [...labelValues(text, 'switchyard_runs_finished_total', 'workflow')].reduce((sum, workflow) => sum + (sample(text, 'switchyard_runs_finished_total', { workflow, status }) ?? 0), 0);
    expect({ completed: byStatus('completed'), failed: byStatus('failed'), cancelled: byStatus('cancelled') }).toEqual({ completed: 3, failed: 1, cancelled: 1 });

    // The first two workflows have their own label, the other three share `other`.
    expect(labelValues(text, 'switchyard_runs_started_total', 'workflow')).toEqual(new Set([completed.workflowId, failed.workflowId, 'other']));
    expect(sample(text, 'switchyard_runs_started_total', { workflow: completed.workflowId })).toBe(1);
    expect(sample(text, 'switchyard_runs_started_total', { workflow: 'other' })).toBe(3);
    expect(sample(text, 'switchyard_runs_finished_total', { workflow: failed.workflowId, status: 'failed' })).toBe(1);
    expect(sample(text, 'switchyard_runs_finished_total', { workflow: 'other', status: 'cancelled' })).toBe(1);

    expect(sample(text, 'switchyard_node_retries_total', { workflow: 'other' })).toBe(1);
    // Step attempts by executor kind and outcome: echo, the retry's second attempt, the timed gate's step; the flaky failures.
    expect(sample(text, 'switchyard_node_attempt_duration_seconds_count', { executor_kind: 'builtin', outcome: 'completed' })).toBe(3);
    expect(sample(text, 'switchyard_node_attempt_duration_seconds_count', { executor_kind: 'builtin', outcome: 'failed' })).toBe(2);
    expect(sample(text, 'switchyard_sweeper_actions_total', { kind: 'gate_timeout' })).toBe(1);
    expect(sample(text, 'switchyard_pending_approvals')).toBe(0);
    expect(sample(text, 'switchyard_lease_takeovers_total')).toBe(0);

    // The store port is timed by collection and operation.
    expect(sample(text, 'switchyard_store_operation_duration_seconds_count', { collection: 'run_events', operation: 'insertOne', outcome: 'ok' })).toBeGreaterThan(10);
    expect(sample(text, 'switchyard_store_operation_duration_seconds_count', { collection: 'workflow_runs', operation: 'findOneAndUpdate', outcome: 'ok' })).toBeGreaterThan(5);
    // Process defaults, event-loop lag among them.
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });

  it('labels HTTP durations by route pattern and status, never by the raw URL', async () => {
    const { workflowId, run } = await svc.runWorkflow(body([echoStep('Echo')]));
    expect((await svc.api.get(wf(`/${workflowId}/runs/${run.id}`))).status).toBe(200);
    expect((await svc.api.get(wf(`/${workflowId}/runs/000000000000000000000000`))).status).toBe(404);
    expect((await svc.api.get(`/no/such/path/${run.id}`)).status).toBe(404);
    const text = await scrape();
    const routes = labelValues(text, 'switchyard_http_request_duration_seconds_count', 'route');
    expect(routes).toContain('/api/v1/workflows/:workflow_id/runs/:run_id');
    expect(routes).toContain('unmatched');
    expect([...routes].filter((route) => route.includes(run.id) || route.includes(workflowId))).toEqual([]);
    const detail = { method: 'GET', route: '/api/v1/workflows/:workflow_id/runs/:run_id' };
    expect(sample(text, 'switchyard_http_request_duration_seconds_count', { ...detail, status_code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'switchyard_http_request_duration_seconds_count', { ...detail, status_code: '404' })).toBe(1);
    expect(sample(text, 'switchyard_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/workflows/:workflow_id/runs', status_code: '202' })).toBeGreaterThanOrEqual(1);
  });
});

describe('SWITCHYARD_METRICS_TOKEN', () => {
  const token = 'scrape-token-0123456789abcdef';
  let svc: TestService;

  beforeAll(async () => {
    svc = await startService({ env: { SWITCHYARD_METRICS_TOKEN: token } });
  });

  afterAll(async () => {
    await svc?.close();
  });

  const get = (authorization?: string) => fetch(`${svc.baseUrl}/metrics`, { headers: authorization === undefined ? {} : { authorization } });

  it('answers 401 without the token or with another, and the metrics with it', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${token}`, `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`]) {
      const response = await get(authorization);
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const text = await response.text();
      expect(JSON.parse(text).detail.error).toBe('authentication_required');
      expect(text).not.toContain('switchyard_');
    }
    const response = await get(`Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('# TYPE switchyard_runs_started_total counter');
  });

  it('is not in the OpenAPI document', async () => {
    const spec = await svc.api.get('/docs/json');
    expect(spec.status).toBe(200);
    expect(Object.keys(spec.body.paths)).not.toContain('/metrics');
  });
});
