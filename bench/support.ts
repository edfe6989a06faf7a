/**
 * What the benchmarks share: argument checks, the engine's services on the embedded
 * store (in memory or in a data directory), workflows and runs made through the repositories, the
 * real HTTP app on those services, and the size of a data directory. Percentiles are in
 * suite/stats.ts.
 */
import { readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { DEFAULT_LEGACY_ACCESS, normalizeDefinition, type WorkflowNode, type WorkflowNodeInput } from '@switchyard/domain';
import { buildApp, loadConfig, openServices, type OpenServices } from '@switchyard/api';
import { openEmbeddedStore } from '@switchyard/store';

/**
 * The integer `raw` (a command-line value) of option `--name`, checked to lie in [`min`, `max`].
 * Throws an Error naming the option otherwise.
 */
export function boundedInteger(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], got ${String(raw)}`);
  return value;
}

/** A step node running the built-in `echo` executor (key `builtin.echo`) with `config`. */
export function echoStep(name: string, config: Record<string, unknown> = {}, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput {
  return { name, nodeType: 'step', executorKey: 'builtin.echo', config, ...extra } as WorkflowNodeInput;
}

/** The services of one engine (see {@link openBenchServices}), and where its store keeps its files. */
export interface BenchServices extends OpenServices {
  /** The data directory, or null in memory. */
  readonly dataDir: string | null;
}

/** Options of {@link openBenchServices}. */
export interface BenchServicesOptions {
  /** Directory of the embedded store's journal, or null to keep everything in memory. */
  dataDir: string | null;
  /**
   * Journal entries before compaction may start (the store's default when absent). A benchmark
   * that reads the bytes written from the directory's size passes `Number.MAX_SAFE_INTEGER`.
   */
  compactionMinEntries?: number;
  /** Journal bytes before compaction may start (the store's default, 64 MiB, when absent); as {@link compactionMinEntries}. */
  compactionMinBytes?: number;
}

/**
 * The server's composition root (`openServices`) on the embedded store (with `dataDir`, locked and
 * replayed; in memory when null), with the example registry (nothing in it starts until used: the
 * benches run the built-ins only), a silent logger and no background work. Rejects with the
 * store's errors (e.g. the data directory locked by another process).
 */
export async function openBenchServices(options: BenchServicesOptions): Promise<BenchServices> {
  const store = await openEmbeddedStore({ dataDir: options.dataDir, compactionMinEntries: options.compactionMinEntries, compactionMinBytes: options.compactionMinBytes });
  const config = loadConfig({ DATA_DIR: options.dataDir ?? join(tmpdir(), 'switchyard-bench'), SWITCHYARD_MAX_NODES: String(BENCH_MAX_NODES) });
  const services = await openServices(config, pino({ level: 'silent' }), { store, background: false });
  return { dataDir: options.dataDir, ...services };
}

/** The node limit of bench definitions (the long chain has 2,000 steps). */
const BENCH_MAX_NODES = 5_000;

/** A workflow saved through the repositories: its id and normalized nodes. */
export interface BenchWorkflow {
  readonly id: string;
  readonly nodes: WorkflowNode[];
}

/**
 * Saves a workflow `name` of `nodes` (normalized and checked as the API would). Throws the
 * domain's InvalidRequestError when the definition is refused (e.g. over the node limit).
 */
export async function createBenchWorkflow(services: BenchServices, name: string, nodes: readonly WorkflowNodeInput[]): Promise<BenchWorkflow> {
  const normalized = normalizeDefinition(nodes, services.checks);
  const canvas = { viewport: { x: 0, y: 0, zoom: 1 } };
  const workflow = await services.repos.definitions.create({ name, description: null, canvas, nodes: normalized, access: DEFAULT_LEGACY_ACCESS }, new Date());
  return { id: workflow.id, nodes: normalized };
}

/** Creates a pending run of `workflow` with `initialInput` (as a trigger would, without HTTP); returns its id. */
export async function createBenchRun(services: BenchServices, workflow: BenchWorkflow, initialInput: Record<string, unknown>): Promise<string> {
  const run = await services.repos.runs.create(
    {
      workflowDefinitionId: workflow.id,
      workflowVersion: 1,
      triggerSource: 'bench',
      initialInput,
      definitionSnapshot: { name: 'bench', description: null, canvas: { viewport: { x: 0, y: 0, zoom: 1 } }, nodes: workflow.nodes },
      parentRunId: null,
      resolvedDependencies: [],
      triggeringUserId: null,
      triggeringUsername: null,
      triggeringScopes: [],
    },
    new Date(),
  );
  return run.id;
}

/** The real HTTP app listening on loopback. */
export interface BenchApp {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** Stops listening (the services stay open). */
  close(): Promise<void>;
}

/**
 * Builds the real app (buildApp: every route, no logger, no rate limits, no Swagger UI) on
 * `services` and listens on 127.0.0.1 on a free port. Rejects with Fastify's errors.
 */
export async function startBenchApp(services: BenchServices): Promise<BenchApp> {
  const app = await buildApp({ services, docs: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error(`unexpected server address ${String(address)}`);
  return { baseUrl: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/** Bytes of all files under `path` (recursively; symbolic links not followed). Throws fs errors. */
export function directoryBytes(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) total += directoryBytes(child);
    else if (entry.isFile()) total += statSync(child).size;
  }
  return total;
}
