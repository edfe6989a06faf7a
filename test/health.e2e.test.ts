/**
 * The probes (issue #20 item 1) of the real app over HTTP: `/livez` and `/healthz` answer while
 * the process answers; `/readyz` names the check that fails — here a timeout sweeper whose pass
 * hangs on a store call that never answers (time moved by a ManualClock) — and recovers once the
 * loop turns again; probes are public and cheap (a burst of 100 costs at most a couple of store
 * checks). The store refusing writes on a full disk: store-disk-full.e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '@switchyard/api';
import { ManualClock } from '@switchyard/runner/testing/manual-clock';
import { startService, type TestService } from './support/service.ts';

/** The sweeper's period in these tests, ms. */
const SWEEP_MS = 1_000;

describe('probes with a stuck background loop', () => {
  const clock = new ManualClock();
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ clock, sweepIntervalMs: SWEEP_MS });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('answers /readyz 200 with every check, then 503 naming the timeout sweeper once it has not turned for twice its interval, /livez 200 throughout, and 200 again once it turns', async () => {
    const ready = await svc.api.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { store: { ok: true }, timeoutSweeper: { ok: true, running: true, intervalMs: SWEEP_MS } } });
    // This test service does not start the recovery scan nor the retention sweeper: they pass, not running.
    expect(ready.body.checks.recovery).toMatchObject({ ok: true, running: false });
    expect(ready.body.checks.retention).toMatchObject({ ok: true, running: false });

    // The sweeper's next pass hangs on a store call that never answers.
    const runs = svc.repos.runs;
    const original = runs.listUntimedGates.bind(runs);
    let release: () => void = () => {};
    runs.listUntimedGates = (limit) =>
      new Promise((resolve, reject) => {
        release = () => original(limit).then(resolve, reject);
      });
    try {
      await clock.advance(SWEEP_MS); // the pass starts and hangs
      const lastRunAt = (await svc.api.get('/readyz')).body.checks.timeoutSweeper.lastRunAt;
      await clock.advance(2 * SWEEP_MS + 100);
      const stuck = await svc.api.get('/readyz');
      expect(stuck.status).toBe(503);
      expect(stuck.body.status).toBe('unavailable');
      expect(stuck.body.checks.store).toMatchObject({ ok: true });
      expect(stuck.body.checks.timeoutSweeper).toMatchObject({ ok: false, running: true, lastRunAt });
      expect(stuck.body.checks.timeoutSweeper.error).toMatch(/more than twice its 1000 ms interval/);
      for (const path of ['/livez', '/healthz']) {
        const live = await svc.api.get(path);
        expect([path, live.status, live.body]).toEqual([path, 200, { status: 'ok' }]);
      }
    } finally {
      runs.listUntimedGates = original;
      release();
    }
    // The hung pass finishes, the next one runs: ready again.
    await clock.advance(SWEEP_MS);
    const again = await svc.api.get('/readyz');
    expect(again.status).toBe(200);
    expect(again.body.checks.timeoutSweeper.ok).toBe(true);
  });
});

describe('probes under load and with authentication on', () => {
  let svc: TestService;
  beforeAll(async () => {
    // Every /api/ request needs a JWT; the probes need nothing.
    const authenticator = await Authenticator.create({ modes: ['jwt'], jwt: { secret: 'x'.repeat(32) }, trustProxyIdentity: false });
    svc = await startService({ edge: { authenticator } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('answers the probes without a credential while /api/ requires one', async () => {
    expect((await svc.api.get('/api/v1/workflows')).status).toBe(401);
    for (const path of ['/livez', '/healthz', '/readyz']) expect([path, (await svc.api.get(path)).status]).toEqual([path, 200]);
  });

  it('runs at most a couple of store checks for a burst of 100 concurrent /readyz', async () => {
    const before = svc.readiness.storeChecks;
    const answers = await Promise.all(Array.from({ length: 100 }, () => fetch(`${svc.baseUrl}/readyz`).then((response) => response.status)));
    expect(answers.every((status) => status === 200)).toBe(true);
    expect(svc.readiness.storeChecks - before).toBeLessThanOrEqual(2);
  });
});
