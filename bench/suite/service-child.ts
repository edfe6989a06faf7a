/**
 * The service under test, as its own process (forked by service-process.ts): the engine
 * workloads run here, the real app listens here (with the bare reference route beside it), and
 * its peak RSS is the service's alone, the load generator's not included. Requests come over
 * the IPC channel as `{ id, op, args }`; each is answered `{ id, ok: true, result }` or
 * `{ id, ok: false, error }`. Servers listen on 127.0.0.1 only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { directoryBytes, openBenchServices, startBenchApp, type BenchApp, type BenchServices } from '../support.ts';
import { chain, loop, parallel, runWorkload } from './engine-figures.ts';
import { CpuProfiler } from './cpu-profile.ts';
import { peakRssMb } from './figure.ts';
import type { ServiceRequest, WorkloadSpec } from './service-process.ts';

let http: { services: BenchServices; app: BenchApp; dataDir: string } | undefined;
let bare: FastifyInstance | undefined;
const profiler = new CpuProfiler();

const WORKLOADS = { chain, loop, parallel };

/** Runs one request; resolves with its result. */
async function handle(request: ServiceRequest): Promise<unknown> {
  switch (request.op) {
    case 'workload': {
      const spec = request.args as WorkloadSpec;
      const nodes = spec.parts.flatMap(({ kind, size }) => WORKLOADS[kind](size));
      return runWorkload(nodes, spec.runs, spec.timeoutMs, spec.tolerate ? new RegExp(spec.tolerate) : undefined);
    }
    case 'openHttp': {
      const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-suite-http-'));
      const services = await openBenchServices({ dataDir, compactionMinEntries: Number.MAX_SAFE_INTEGER, compactionMinBytes: Number.MAX_SAFE_INTEGER });
      http = { services, app: await startBenchApp(services), dataDir };
      return { baseUrl: http.app.baseUrl };
    }
    case 'runsOf': {
      // The unfinished count is cheap; the completed one (a sorted page) is read once none is left.
      const { repos } = requireHttp().services;
      const workflowId = request.args as string;
      const unfinished = (await repos.runs.countUnfinishedByWorkflow([workflowId])).get(workflowId) ?? 0;
      const completed = unfinished > 0 ? null : (await repos.runs.list({ workflowId, status: 'completed' }, 1, 1)).total;
      return { unfinished, completed };
    }
    case 'dataDirBytes':
      return directoryBytes(requireHttp().dataDir);
    case 'bareRoute': {
      await bare?.close();
      const body = request.args;
      bare = Fastify({ logger: false });
      bare.get('/detail', async () => body);
      await bare.listen({ port: 0, host: '127.0.0.1' });
      const address = bare.server.address();
      if (address === null || typeof address === 'string') throw new Error(`unexpected server address ${String(address)}`);
      return { baseUrl: `http://127.0.0.1:${address.port}` };
    }
    case 'peakRssMb':
      return peakRssMb();
    case 'rssMb':
      (globalThis as { gc?: () => void }).gc?.();
      return process.memoryUsage().rss / 1024 / 1024;
    case 'profileStart':
      return profiler.start();
    case 'profileStop':
      return profiler.stop();
    case 'close':
      await bare?.close();
      if (http) {
        await http.app.close();
        await http.services.close();
        await rm(http.dataDir, { recursive: true, force: true });
      }
      setImmediate(() => process.exit(0));
      return null;
  }
}

function requireHttp(): NonNullable<typeof http> {
  if (!http) throw new Error('the app is not started (openHttp first)');
  return http;
}

process.on('message', (message: ServiceRequest) => {
  handle(message).then(
    (result) => process.send!({ id: message.id, ok: true, result }),
    (error: unknown) => process.send!({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ id: 0, ok: true, result: 'ready' });
