/**
 * What YAML bodies cost, in two parts.
 *
 * 1. Parse time of the shared parser (`@switchyard/domain/yaml-definition`) against the same value
 *    as JSON (JSON.parse of its JSON text), for bodies of about `--kib` KiB (default 1024, the
 *    body limit): a realistic definition (many small step nodes), a flat mapping, a flow sequence
 *    of numbers, and blank lines. Each shape is parsed 3 times (the first also warms up); prints
 *    the median ms.
 * 2. What the rest of the service sees while YAML bodies of that size are parsed: the longest
 *    event-loop stall and the latency of `GET /livez` (one probe at a time, all along) while the
 *    flow sequence and the definition are each sent twice to POST /workflows/validate, one after
 *    the other. Measured with the parser on the event loop (`SWITCHYARD_YAML_PARSER_THREADS=0`,
 *    how YAML bodies were parsed before the parser threads) and in a parser thread (the
 *    default), and, for comparison, with the JSON twins of the same bodies; each in this process
 *    (stall by `monitorEventLoopDelay`) and as by `npm start` (its own process; stall from its
 *    `/metrics`, `nodejs_eventloop_lag_max_seconds`). Prints each body's status too (a 413 would
 *    be a parse that ran out of time).
 *
 * `npm run bench:yaml [-- --kib 256] [-- --parse-only]`
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { buildApp, loadConfig, openServices } from '@switchyard/api';
import { parseYamlDefinition } from '@switchyard/domain/yaml-definition';
import { openEmbeddedStore } from '@switchyard/store';
import { startServerProcess } from '../test/support/server-process.ts';
import { sample } from '../test/support/prometheus.ts';
import { boundedInteger } from './support.ts';
import { percentileOf } from './suite/stats.ts';

const kibArg = process.argv.indexOf('--kib');
const KIB = kibArg > 0 ? boundedInteger('kib', process.argv[kibArg + 1], 1, 1024) : 1024;
const BYTES = KIB * 1024 - 64;
const LIMIT = 1024 * 1024 * 8;
const PARSE_ONLY = process.argv.includes('--parse-only');

/** Repeats `unit(i)` until `BYTES` is reached. */
function fill(head: string, unit: (i: number) => string, tail = ''): string {
  const parts = [head];
  let length = head.length + tail.length;
  for (let i = 0; length < BYTES; i++) {
    const part = unit(i);
    if (length + part.length > BYTES) break;
    parts.push(part);
    length += part.length;
  }
  return parts.join('') + tail;
}

const SHAPES: Record<string, string> = {
  'definition (step nodes)': fill('name: big\ncanvas: {viewport: {x: 0, y: 0, zoom: 1}}\nnodes:\n', (i) => `  - name: step-${i}\n    nodeType: step\n    executorKey: echo\n    config: {message: "hi ${i}"}\n`),
  'flat mapping': fill('', (i) => `k${i}: value ${i}\n`),
  'flow sequence': fill('[', () => '1, ', '1]'),
  'blank lines': fill('', () => '\n', 'a: 1\n'),
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function time(run: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return median(times);
}

function parseCosts(): void {
  console.log(`| Shape (${Math.round(BYTES / 1024)} KiB of YAML) | YAML ms | JSON ms (same value) |`);
  console.log('| --- | ---: | ---: |');
  for (const [name, text] of Object.entries(SHAPES)) {
    const yamlMs = time(() => parseYamlDefinition(text, LIMIT));
    const json = JSON.stringify(parseYamlDefinition(text, LIMIT));
    const jsonMs = time(() => JSON.parse(json));
    console.log(`| ${name} | ${yamlMs.toFixed(0)} | ${jsonMs.toFixed(1)} |`);
  }
}

/** A service to measure: its base URL, how to read its longest stall since the last reading (ms), and how to stop it. */
interface Target {
  baseUrl: string;
  stallMs(): Promise<number>;
  stop(): Promise<void>;
}

/** The composition root and the real app in this process, store in memory, `threads` parser threads. */
async function inProcess(threads: number, dataDir: string): Promise<Target> {
  const store = await openEmbeddedStore({ dataDir: null });
  const services = await openServices(loadConfig({ DATA_DIR: dataDir }), pino({ level: 'silent' }), { store, background: false });
  const app = await buildApp({ services, docs: false, yamlParser: { threads } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error(`unexpected server address ${String(address)}`);
  let histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    async stallMs() {
      const max = histogram.max / 1e6;
      histogram.disable();
      histogram = monitorEventLoopDelay({ resolution: 10 });
      histogram.enable();
      return max;
    },
    async stop() {
      histogram.disable();
      await app.close();
      await services.close();
    },
  };
}

/** The service as `npm start` runs it, in a process of its own. */
async function asProcess(threads: number, dataDir: string): Promise<Target> {
  const server = await startServerProcess({ DATA_DIR: dataDir, SWITCHYARD_YAML_PARSER_THREADS: String(threads), SWITCHYARD_RATE_LIMIT_DEFINITIONS_PER_MINUTE: '0' });
  return {
    baseUrl: server.baseUrl,
    async stallMs() {
      // Each scrape resets the maximum.
      const seconds = sample(await (await fetch(`${server.baseUrl}/metrics`)).text(), 'nodejs_eventloop_lag_max_seconds');
      if (seconds === undefined) throw new Error('no nodejs_eventloop_lag_max_seconds in /metrics');
      return seconds * 1000;
    },
    stop: () => server.stop(),
  };
}

/** What one target showed while the YAML bodies were parsed. */
interface Figures {
  bodyMs: number;
  bodyMaxMs: number;
  /** The answers' statuses in order (400: the flow sequence is no definition, the definition has too many nodes; 413: a parse ran out of time). */
  statuses: string;
  livezP50Ms: number;
  livezP99Ms: number;
  livezMaxMs: number;
  probes: number;
  stallMs: number;
}

/** POSTs `text` to validate as `type`; returns the status (a 5xx throws). */
async function post(baseUrl: string, text: string, type: string): Promise<number> {
  const response = await fetch(`${baseUrl}/api/v1/workflows/validate`, { method: 'POST', headers: { 'content-type': type }, body: text });
  await response.text();
  if (response.status >= 500) throw new Error(`POST validate answered ${response.status}`);
  return response.status;
}

/** The load's bodies: each shape as YAML, or as the JSON text of the same value. */
const BODIES: Record<'yaml' | 'json', Array<{ text: string; type: string }>> = {
  yaml: ['flow sequence', 'definition (step nodes)'].map((shape) => ({ text: SHAPES[shape]!, type: 'application/yaml' })),
  json: ['flow sequence', 'definition (step nodes)'].map((shape) => ({ text: JSON.stringify(parseYamlDefinition(SHAPES[shape]!, LIMIT)), type: 'application/json' })),
};

/** Sends the flow sequence and the definition twice each (as `form`), one after the other, while probing /livez. */
async function load(target: Target, form: 'yaml' | 'json'): Promise<Figures> {
  await post(target.baseUrl, 'name: warm\nnodes: []\n', 'application/yaml');
  for (let i = 0; i < 50; i++) await (await fetch(`${target.baseUrl}/livez`)).text();
  await target.stallMs();
  let done = false;
  const latencies: number[] = [];
  const prober = (async () => {
    while (!done) {
      const t0 = performance.now();
      await (await fetch(`${target.baseUrl}/livez`)).text();
      latencies.push(performance.now() - t0);
    }
  })();
  const bodyTimes: number[] = [];
  const statuses: number[] = [];
  try {
    for (const body of [...BODIES[form], ...BODIES[form]]) {
      const t0 = performance.now();
      statuses.push(await post(target.baseUrl, body.text, body.type));
      bodyTimes.push(performance.now() - t0);
    }
  } finally {
    done = true;
    await prober;
  }
  return {
    bodyMs: median(bodyTimes),
    bodyMaxMs: Math.max(...bodyTimes),
    statuses: statuses.join(' '),
    livezP50Ms: percentileOf(latencies, 50),
    livezP99Ms: percentileOf(latencies, 99),
    livezMaxMs: Math.max(...latencies),
    probes: latencies.length,
    stallMs: await target.stallMs(),
  };
}

async function eventLoopFigures(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-yaml-'));
  const rows: string[] = [];
  try {
    for (const [where, open] of [['in-process', inProcess], ['npm start', asProcess]] as const) {
      for (const [form, threads] of [['yaml', 0], ['yaml', 1], ['json', 1]] as const) {
        const target = await open(threads, join(dir, `${where}-${form}-${threads}`.replace(' ', '-')));
        try {
          const f = await load(target, form);
          const parser = form === 'json' ? 'JSON twin (for comparison)' : threads === 0 ? 'YAML on the event loop (before)' : `YAML in ${threads} thread (after)`;
          rows.push(
            `| ${where} | ${parser} | ${f.stallMs.toFixed(0)} | ${f.livezP50Ms.toFixed(1)} | ${f.livezP99Ms.toFixed(0)} | ${f.livezMaxMs.toFixed(0)} | ${f.probes} | ${f.bodyMs.toFixed(0)} / ${f.bodyMaxMs.toFixed(0)} | ${f.statuses} |`,
          );
        } finally {
          await target.stop();
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`\nWhile four ${Math.round(BYTES / 1024)} KiB bodies (flow sequence, definition, twice) are validated one after the other (Node ${process.versions.node}):\n`);
  console.log('| service | bodies | longest event-loop stall ms | /livez p50 ms | p99 ms | max ms | probes | body answered in, median / max ms | statuses |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const row of rows) console.log(row);
}

parseCosts();
if (!PARSE_ONLY) await eventLoopFigures();
