/**
 * Schedules under load (issue #21 item 1, docs/guide/schedules.md), measured twice side by side:
 * in-process (the app and services in this process, store in memory) and as by `npm start` (its
 * own process, store on disk), both without authentication and rate limits (bench/targets.ts).
 *
 * 1. Backfill: `POST …/schedules/{id}/backfill` of `--ticks` (default 1,000, the most one request
 *    takes) ticks of a 1 s interval schedule with `allow_all` on a workflow of one echo step,
 *    `--backfills` times (default 3, each a new range, after a 20-tick warm-up); prints ms per
 *    request (median and max), runs created per second, and how long the created runs took to
 *    complete after the answer (bounded: 120 s).
 * 2. The schedule loop: `--schedules` (default 200) schedules of a 1 s interval (`allow_all`, all
 *    due on the same second, 100 per workflow), then a window of `--window-seconds` (default 20):
 *    ticks fired per second (runs whose `scheduledAt` lies in the window, read back after a 3 s
 *    grace and the schedules paused) against the expected, and the lag from `scheduledAt` to the
 *    run's `startedAt` (p50/p99/max, and its median in the first and the last quarter of the window:
 *    a lag that grows is a loop falling behind). The loop's period is `--interval-ms` (default 1000, the
 *    service's default `SWITCHYARD_SCHEDULE_INTERVAL_MS`).
 * 3. Meanwhile: p50/p99 of `GET /api/v1/workflows/{id}` (one request at a time, all through the
 *    window) against the same read before the schedules existed (after a warm-up).
 *
 * `npm run bench:schedules [-- --ticks 1000 --backfills 3 --schedules 200 --window-seconds 20 --interval-ms 1000]`
 */
import { availableParallelism } from 'node:os';
import { echoStep } from './support.ts';
import { percentileOf } from './suite/stats.ts';
import { TARGETS, flag, json, sleep, timedJson, type Target } from './targets.ts';

const TICKS = flag('ticks', 1_000, 1, 1_000);
const BACKFILLS = flag('backfills', 3, 1, 20);
const SCHEDULES = flag('schedules', 200, 1, 2_000);
const WINDOW_S = flag('window-seconds', 20, 2, 120);
const INTERVAL_MS = flag('interval-ms', 1_000, 100, 60_000);
const READ_WARM_UP = 500;
const BASELINE_READS = 1_000;
const COMPLETE_WITHIN_MS = 120_000;
const PER_WORKFLOW = 100;
const CANVAS = { viewport: { x: 0, y: 0, zoom: 1 } };

/** Printed figures of one target: label -> value. */
type Figures = Map<string, string>;

async function main(): Promise<void> {
  const columns: Array<{ name: string; figures: Figures }> = [];
  for (const open of TARGETS) {
    const target = await open({ SWITCHYARD_SCHEDULE_INTERVAL_MS: String(INTERVAL_MS), SWITCHYARD_SCHEDULE_MIN_INTERVAL_SECONDS: '1' });
    try {
      const figures: Figures = new Map();
      await backfill(target, figures);
      await loop(target, figures);
      columns.push({ name: target.name, figures });
    } finally {
      await target.stop();
    }
  }
  console.log(
    `\nSchedules: backfill of ${TICKS} ticks × ${BACKFILLS}; ${SCHEDULES} schedules every 1 s for ${WINDOW_S} s, loop every ${INTERVAL_MS} ms ` +
      `(Node ${process.versions.node}, ${availableParallelism()} cores)\n`,
  );
  console.log(`| figure | ${columns.map((c) => c.name).join(' | ')} |`);
  console.log(`| --- | ${columns.map(() => '---:').join(' | ')} |`);
  for (const label of columns[0]!.figures.keys()) console.log(`| ${label} | ${columns.map((c) => c.figures.get(label) ?? '—').join(' | ')} |`);
}

/** An enabled workflow of one echo step; its id. */
async function echoWorkflow(target: Target, name: string): Promise<string> {
  const { id } = await json(target.baseUrl, 'POST', '/api/v1/workflows', { name, canvas: CANVAS, nodes: [echoStep('Only', { n: 1 })] });
  await json(target.baseUrl, 'POST', `/api/v1/workflows/${id}/toggle`, { enabled: true });
  return id as string;
}

/** Completed runs of `workflowId` (one list request). */
async function completedRuns(target: Target, workflowId: string): Promise<number> {
  return (await json(target.baseUrl, 'GET', `/api/v1/runs?workflowId=${workflowId}&status=completed&perPage=1&includeNodeRuns=false`)).pagination.total as number;
}

/** Part 1: backfills of {@link TICKS} ticks, each waited on until its runs completed. */
async function backfill(target: Target, figures: Figures): Promise<void> {
  const workflowId = await echoWorkflow(target, 'bench backfill');
  const base = `/api/v1/workflows/${workflowId}/schedules`;
  const { id } = await json(target.baseUrl, 'POST', base, { name: 'backfill', intervalSeconds: 1, overlapPolicy: 'allow_all', paused: true });
  const origin = Date.parse('2020-01-01T00:00:00Z');
  const range = (from: number, ticks: number) => ({ startAt: new Date(from).toISOString(), endAt: new Date(from + ticks * 1000).toISOString() });
  let expected = 0;
  const request = async (from: number, ticks: number): Promise<{ ms: number; completeMs: number }> => {
    const { ms, answer } = await timedJson(target.baseUrl, 'POST', `${base}/${id}/backfill`, range(from, ticks));
    if (answer.started !== ticks) throw new Error(`backfill started ${answer.started} of ${ticks} ticks`);
    expected += ticks;
    const answered = performance.now();
    while ((await completedRuns(target, workflowId)) < expected) {
      if (performance.now() - answered > COMPLETE_WITHIN_MS) throw new Error(`backfilled runs not completed within ${COMPLETE_WITHIN_MS} ms`);
      await sleep(50);
    }
    return { ms, completeMs: performance.now() - answered };
  };
  await request(origin - 20_000, 20);
  const measured = [];
  for (let k = 0; k < BACKFILLS; k++) measured.push(await request(origin + k * TICKS * 1000, TICKS));
  const ms = measured.map((m) => m.ms);
  const median = percentileOf(ms, 50);
  figures.set(`backfill of ${TICKS} ticks: ms per request, median (max)`, `${median.toFixed(0)} (${Math.max(...ms).toFixed(0)})`);
  figures.set('backfill: runs created/s', (TICKS / (median / 1000)).toFixed(0));
  figures.set('backfill: its runs completed, s after the answer (median)', (percentileOf(measured.map((m) => m.completeMs), 50) / 1000).toFixed(1));
}

/** `count` sequential GETs of `path`; their latencies, ms. */
async function reads(target: Target, path: string, count: number, until = Number.POSITIVE_INFINITY): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count && Date.now() < until; i++) latencies.push((await timedJson(target.baseUrl, 'GET', path)).ms);
  return latencies;
}

/** Parts 2 and 3: the loop firing {@link SCHEDULES} schedules for {@link WINDOW_S} seconds, and reads meanwhile. */
async function loop(target: Target, figures: Figures): Promise<void> {
  const readPath = `/api/v1/workflows/${await echoWorkflow(target, 'bench read')}`;
  await reads(target, readPath, READ_WARM_UP);
  const idle = await reads(target, readPath, BASELINE_READS);

  const workflowIds: string[] = [];
  const schedules: Array<{ workflowId: string; id: string }> = [];
  for (let i = 0; i < SCHEDULES; i++) {
    if (i % PER_WORKFLOW === 0) workflowIds.push(await echoWorkflow(target, `bench loop ${workflowIds.length}`));
    const workflowId = workflowIds.at(-1)!;
    const { id } = await json(target.baseUrl, 'POST', `/api/v1/workflows/${workflowId}/schedules`, { name: `every second ${i}`, intervalSeconds: 1, overlapPolicy: 'allow_all' });
    schedules.push({ workflowId, id });
  }
  const from = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
  const to = from + WINDOW_S * 1000;
  await sleep(from - Date.now());
  const during = await reads(target, readPath, Number.MAX_SAFE_INTEGER, to);
  await sleep(Math.max(0, to - Date.now()) + 3_000);
  for (const s of schedules) await json(target.baseUrl, 'POST', `/api/v1/workflows/${s.workflowId}/schedules/${s.id}/pause`, {});

  const lags: number[] = [];
  const firstQuarter: number[] = [];
  const lastQuarter: number[] = [];
  const quarter = (to - from) / 4;
  for (const workflowId of workflowIds) {
    for (let page = 1; ; page++) {
      const { runs, pagination } = await json(target.baseUrl, 'GET', `/api/v1/runs?workflowId=${workflowId}&perPage=100&page=${page}&includeNodeRuns=false`);
      for (const run of runs as Array<{ scheduledAt: string | null; startedAt: string }>) {
        const scheduledAt = run.scheduledAt === null ? NaN : Date.parse(run.scheduledAt);
        if (!(scheduledAt >= from && scheduledAt < to)) continue;
        const lag = Date.parse(run.startedAt) - scheduledAt;
        lags.push(lag);
        if (scheduledAt < from + quarter) firstQuarter.push(lag);
        if (scheduledAt >= to - quarter) lastQuarter.push(lag);
      }
      if (page >= pagination.totalPages) break;
    }
  }
  const expected = SCHEDULES * WINDOW_S;
  figures.set(`loop: ticks fired/s (expected ${SCHEDULES})`, `${(lags.length / WINDOW_S).toFixed(1)} (${lags.length} of ${expected})`);
  figures.set('loop: lag scheduledAt → startedAt, ms p50 / p99 / max', lags.length === 0 ? '—' : `${percentileOf(lags, 50)} / ${percentileOf(lags, 99)} / ${Math.max(...lags)}`);
  figures.set('loop: lag p50 ms, first → last quarter of the window (growing: falling behind)', lags.length === 0 ? '—' : `${percentileOf(firstQuarter, 50)} → ${percentileOf(lastQuarter, 50)}`);
  figures.set('GET workflow, ms p50 / p99, idle', `${percentileOf(idle, 50).toFixed(2)} / ${percentileOf(idle, 99).toFixed(2)}`);
  figures.set('GET workflow, ms p50 / p99, while the loop fires (reads)', `${percentileOf(during, 50).toFixed(2)} / ${percentileOf(during, 99).toFixed(2)} (${during.length})`);
}

await main();
