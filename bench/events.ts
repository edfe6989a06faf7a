/**
 * Event triggers under load (issue #21 item 2, docs/guide/event-triggers.md), measured twice side
 * by side: in-process (the app and services in this process, store in memory) and as by
 * `npm start` (its own process, store on disk), both without authentication (the caller has
 * `events-write`) and rate limits (bench/targets.ts).
 *
 * Workflows of one echo step, enabled, each with one trigger `filterCel: event.data.total > 100.0`
 * and `inputCel: { 'orderId': event.data.id, 'total': event.data.total }`: 1, 10 and 100 of them on
 * their own event names, and `--non-matching` (default 1,000, the most one event looks at) on
 * another name, posted with a total of 5 so that every filter is evaluated and none holds.
 *
 * 1. Latency of `POST /api/v1/events`, one request at a time, p50/p99: with 1, 10 and 100
 *    matching workflows (each event starts that many runs; checked), with the non-matching
 *    candidates (no run), and with 1 match and a new dedupe `id` on each event. `--events`
 *    (default 200) per row, a quarter of it with 100 matches (each starts 100 runs); each row
 *    stops after 30 s. A 50-event warm-up first.
 * 2. A burst: `--burst` (default 500) events with new ids, 1 match each, over 8 connections:
 *    events/s.
 * 3. A repeated id: the first burst event's id posted again, `--events` times one at a time
 *    (answered from the stored event; nothing starts): p50/p99.
 *
 * `npm run bench:events [-- --events 200 --burst 500 --non-matching 1000]`
 */
import { availableParallelism } from 'node:os';
import { echoStep } from './support.ts';
import { runLoad } from './suite/http-load.ts';
import { percentileOf } from './suite/stats.ts';
import { TARGETS, flag, json, timedJson, type Target } from './targets.ts';

const EVENTS = flag('events', 200, 10, 5_000);
const BURST = flag('burst', 500, 10, 20_000);
const NON_MATCHING = flag('non-matching', 1_000, 1, 1_000);
const CONNECTIONS = 8;
const WARM_UP = 50;
const ROW_MS = 30_000;
const MATCHING = [1, 10, 100] as const;
const CANVAS = { viewport: { x: 0, y: 0, zoom: 1 } };

/** Printed figures of one target: label -> value. */
type Figures = Map<string, string>;

async function main(): Promise<void> {
  const columns: Array<{ name: string; figures: Figures }> = [];
  for (const open of TARGETS) {
    const target = await open({});
    try {
      columns.push({ name: target.name, figures: await measure(target) });
    } finally {
      await target.stop();
    }
  }
  console.log(
    `\nPOST /api/v1/events: ${EVENTS} events per row, burst of ${BURST} over ${CONNECTIONS} connections, ${NON_MATCHING} non-matching candidates ` +
      `(Node ${process.versions.node}, ${availableParallelism()} cores)\n`,
  );
  console.log(`| figure | ${columns.map((c) => c.name).join(' | ')} |`);
  console.log(`| --- | ${columns.map(() => '---:').join(' | ')} |`);
  for (const label of columns[0]!.figures.keys()) console.log(`| ${label} | ${columns.map((c) => c.figures.get(label) ?? '—').join(' | ')} |`);
}

/** Creates and enables `count` workflows of one echo step with one trigger on `event`. */
async function triggeredWorkflows(target: Target, event: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { id } = await json(target.baseUrl, 'POST', '/api/v1/workflows', {
      name: `bench ${event} ${i}`,
      canvas: CANVAS,
      nodes: [echoStep('Only', { n: 1 })],
      triggers: [{ event, filterCel: 'event.data.total > 100.0', inputCel: "{ 'orderId': event.data.id, 'total': event.data.total }" }],
    });
    await json(target.baseUrl, 'POST', `/api/v1/workflows/${id}/toggle`, { enabled: true });
  }
}

/** An event body; `id` is the dedupe id (none when undefined). */
function event(name: string, n: number, total: number, id?: string): Record<string, unknown> {
  return { name, ...(id === undefined ? {} : { id }), data: { id: `order-${n}`, total } };
}

/** `count` events (at most {@link ROW_MS}) posted one at a time; checks each started `runs` runs; their latencies, ms. */
async function sequential(target: Target, count: number, runs: number, body: (i: number) => Record<string, unknown>): Promise<number[]> {
  const latencies: number[] = [];
  const until = performance.now() + ROW_MS;
  for (let i = 0; i < count && performance.now() < until; i++) {
    const { ms, answer } = await timedJson(target.baseUrl, 'POST', '/api/v1/events', body(i));
    if (answer.runIds.length !== runs) throw new Error(`an event started ${answer.runIds.length} runs, expected ${runs}`);
    latencies.push(ms);
  }
  return latencies;
}

const p50p99 = (values: number[]) => `${percentileOf(values, 50).toFixed(2)} / ${percentileOf(values, 99).toFixed(2)} (${values.length})`;

async function measure(target: Target): Promise<Figures> {
  const figures: Figures = new Map();
  for (const count of MATCHING) await triggeredWorkflows(target, `bench.match.${count}`, count);
  await triggeredWorkflows(target, 'bench.none', NON_MATCHING);
  let n = 0;
  await sequential(target, WARM_UP, 1, () => event('bench.match.1', n++, 250));
  await sequential(target, WARM_UP, 0, () => event('bench.none', n++, 5));

  for (const count of MATCHING) {
    const latencies = await sequential(target, count === 100 ? Math.ceil(EVENTS / 4) : EVENTS, count, () => event(`bench.match.${count}`, n++, 250));
    figures.set(`${count} matching workflow${count === 1 ? '' : 's'}: ms p50 / p99 (events)`, p50p99(latencies));
  }
  figures.set(`0 of ${NON_MATCHING} candidates match: ms p50 / p99 (events)`, p50p99(await sequential(target, EVENTS, 0, () => event('bench.none', n++, 5))));
  figures.set('1 match, a new dedupe id each: ms p50 / p99 (events)', p50p99(await sequential(target, EVENTS, 1, (i) => event('bench.match.1', n++, 250, `fresh-${i}`))));

  const burst = await runLoad({
    origin: target.baseUrl,
    connections: CONNECTIONS,
    durationMs: 120_000,
    maxRequests: BURST,
    request: (i) => ({ method: 'POST', path: '/api/v1/events', body: JSON.stringify(event('bench.match.1', 1_000_000 + i, 250, `burst-${i}`)) }),
  });
  if ((burst.statuses.get(202) ?? 0) !== burst.requests) throw new Error(`burst answers ${JSON.stringify([...burst.statuses])}, expected only 202`);
  figures.set(`burst of ${BURST} events with new ids, ${CONNECTIONS} connections: events/s (ms p99)`, `${burst.perSecond.toFixed(0)} (${percentileOf(burst.latenciesMs, 99).toFixed(1)})`);

  const first = await timedJson(target.baseUrl, 'POST', '/api/v1/events', event('bench.match.1', 1_000_000, 250, 'burst-0'));
  const repeats = await sequential(target, EVENTS, first.answer.runIds.length, () => event('bench.match.1', 1_000_000, 250, 'burst-0'));
  figures.set('a repeated (deduplicated) id: ms p50 / p99 (events)', p50p99(repeats));
  return figures;
}

await main();
