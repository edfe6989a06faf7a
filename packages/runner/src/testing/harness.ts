/**
 * Test support for the runner: an in-memory embedded store with repositories, a registry of the
 * built-in executors (plus the clock-driven `wait`) that counts calls, and helpers to create and
 * run workflows. Not exported from the package; tests import it directly.
 */
import { tmpdir } from 'node:os';
import pino from 'pino';
import { DEFAULT_LEGACY_ACCESS, normalizeDefinition, validateDecision, type ApproveBody, type RunRecord, type WorkflowNode, type WorkflowNodeInput } from '@switchyard/domain';
import { openEmbeddedStore, openRepositories, type DecidedRun, type DocumentStore, type Repositories } from '@switchyard/store';
import { CelEngine } from '../cel/index.ts';
import { systemClock, type Clock } from '../clock.ts';
import { definitionChecks } from '../definition-checks.ts';
import { recordDecision } from '../decisions.ts';
import { RunEngine, type RunEngineOptions } from '../engine.ts';
import { abortedError } from '../executors/shared/abort.ts';
import { createExecutorRegistry } from '../executors/registry.ts';
import type { RegistryConfig } from '../executors/registry-config.ts';
import type { Executor, ExecutorRegistry } from '../executors/types.ts';

/**
 * `wait`: like the built-in `sleep` (waits `arguments.ms`, default 100, then echoes; rejects with
 * `cancelled` or `timed out after N s` when the call aborts), but on `clock`, so that with a ManualClock the call ends only
 * when the test advances time, and a test can see it in flight as a pending sleep.
 */
function clockWaitExecutor(clock: Clock): Executor {
  return {
    kind: 'test',
    key: 'wait',
    timeoutMs: 60_000,
    invoke: async (call) => {
      const ms = call.arguments['ms'];
      try {
        await clock.sleep(typeof ms === 'number' ? ms : 100, call.signal);
      } catch (error) {
        if (call.signal.aborted) throw abortedError(call.signal);
        throw error;
      }
      return { arguments: call.arguments, input: call.input };
    },
  };
}

/** A registry wrapper that records every invocation's executor key and arguments; `extra` adds test-only executors. */
export class CountingRegistry implements ExecutorRegistry {
  readonly calls: Array<{ key: string; arguments: Record<string, unknown>; attempt: number; identity: unknown }> = [];
  constructor(
    private readonly inner: ExecutorRegistry,
    private readonly extra: Record<string, Executor> = {},
  ) {}
  has(key: string) {
    return key in this.extra || this.inner.has(key);
  }
  kindOf(key: string) {
    return this.extra[key]?.kind ?? this.inner.kindOf(key);
  }
  keys() {
    return [...new Set([...this.inner.keys(), ...Object.keys(this.extra)])].sort();
  }
  /** The inner registry's catalogue (the test-only `extra` executors are not described). */
  describe(options?: { kind?: string }) {
    return this.inner.describe(options);
  }
  close() {
    return this.inner.close();
  }
  get(key: string) {
    const executor = this.extra[key] ?? this.inner.get(key);
    return {
      kind: executor.kind,
      key: executor.key,
      timeoutMs: executor.timeoutMs,
      invoke: (call: Parameters<typeof executor.invoke>[0]) => {
        this.calls.push({ key, arguments: call.arguments, attempt: call.attempt, identity: call.context.identity });
        return executor.invoke(call);
      },
    };
  }
  /** Number of calls made with `key`. */
  count(key: string): number {
    return this.calls.filter((c) => c.key === key).length;
  }
}

export interface Harness {
  /** The clock of the harness engines, the `wait` executor and the harness's own timestamps. */
  clock: Clock;
  store: DocumentStore;
  repos: Repositories;
  executors: CountingRegistry;
  cel: CelEngine;
  engine: RunEngine;
  /** Normalizes nodes (as the API would) and stores an enabled workflow. */
  createWorkflow(nodes: WorkflowNodeInput[]): Promise<{ id: string; nodes: WorkflowNode[] }>;
  /** Creates a run of `workflowId` with `input` and executes it to the end. */
  runToEnd(workflowId: string, input?: Record<string, unknown>): Promise<RunRecord>;
  /** Creates a pending run without starting it (optionally with a triggering identity and trigger options). */
  createRun(
    workflowId: string,
    input?: Record<string, unknown>,
    identity?: { userId: string; username: string; scopes: string[] },
    options?: { timeoutSeconds?: number; now?: Date; traceParent?: string },
  ): Promise<RunRecord>;
  /**
   * Decides the undecided gate `stepId` of a run as the approve endpoint does (validation, CAS)
   * and wakes the run on `engine` (default: the harness engine). Null when the CAS lost.
   */
  decide(runId: string, body: ApproveBody, engine?: RunEngine): Promise<DecidedRun | null>;
  /** The run's undecided requirements. */
  pending(runId: string): Promise<RunRecord['pendingRequirements']>;
  /** Builds another engine on the same store (a second instance, or a restarted process). */
  newEngine(options?: Partial<RunEngineOptions>): RunEngine;
  close(): Promise<void>;
}

/** Extra registry entries for a harness (e.g. `http` executors pointing at a test server). */
export interface HarnessRegistry {
  executors?: RegistryConfig['executors'];
  /** For `${VAR}` expansion in those entries; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Test doubles by key, next to `wait` (e.g. an executor that ignores its signal). */
  doubles?: Record<string, Executor>;
}

/**
 * Opens a fresh in-memory harness. `engineOptions` tune the engine (lease, clock, ...); their
 * `clock` (default: the system clock) is also the harness clock (see {@link Harness.clock}).
 * `registry` adds executors to the built-in aliases `echo`, `fail`, `sleep` (and `wait`).
 */
export async function openHarness(engineOptions: Partial<RunEngineOptions> = {}, registry: HarnessRegistry = {}): Promise<Harness> {
  const clock = engineOptions.clock ?? systemClock;
  const store = await openEmbeddedStore({ dataDir: null });
  const repos = await openRepositories(store);
  const executors = new CountingRegistry(
    createExecutorRegistry(
      {
        executors: {
          echo: { kind: 'builtin', name: 'echo' },
          fail: { kind: 'builtin', name: 'fail' },
          sleep: { kind: 'builtin', name: 'sleep' },
          ...registry.executors,
        },
      },
      { baseDir: tmpdir(), env: registry.env },
    ),
    { wait: clockWaitExecutor(clock), ...registry.doubles },
  );
  const cel = new CelEngine();
  const logger = pino({ level: 'silent' });
  const engines: RunEngine[] = [];
  const newEngine = (options: Partial<RunEngineOptions> = {}) => {
    const engine = new RunEngine({ repos, executors, cel, logger, random: () => 0, ...engineOptions, ...options });
    engines.push(engine);
    return engine;
  };
  const engine = newEngine();
  const checks = definitionChecks(executors, cel);
  let counter = 0;

  const createRun: Harness['createRun'] = async (workflowId, input = {}, identity, options = {}) => {
    const workflow = (await repos.definitions.get(workflowId))!;
    return repos.runs.create(
      {
        workflowDefinitionId: workflow.id,
        workflowVersion: workflow.version,
        triggerSource: 'test',
        initialInput: input,
        definitionSnapshot: { name: workflow.name, description: null, canvas: workflow.canvas, nodes: workflow.nodes },
        parentRunId: null,
        resolvedDependencies: [],
        triggeringUserId: identity?.userId ?? null,
        triggeringUsername: identity?.username ?? null,
        triggeringScopes: identity?.scopes ?? [],
        timeoutSeconds: options.timeoutSeconds ?? null,
        traceParent: options.traceParent ?? null,
      },
      options.now ?? clock.now(),
    );
  };

  return {
    clock,
    store,
    repos,
    executors,
    cel,
    engine,
    newEngine,
    createRun,
    async createWorkflow(nodeInputs) {
      const nodes = normalizeDefinition(nodeInputs, checks);
      const record = await repos.definitions.create({ name: `wf-${++counter}`, description: null, canvas: { viewport: { x: 0, y: 0, zoom: 1 } }, nodes, access: DEFAULT_LEGACY_ACCESS }, clock.now());
      await repos.definitions.update(record.id, { enabled: true }, false, clock.now());
      return { id: record.id, nodes };
    },
    async runToEnd(workflowId, input = {}) {
      const run = await createRun(workflowId, input);
      engine.start(run.id);
      await engine.idle();
      return (await repos.runs.get(run.id))!;
    },
    async decide(runId, body, on = engine) {
      const run = (await repos.runs.get(runId))!;
      const requirement = run.pendingRequirements.find((r) => r.stepId === body.stepId && r.decidedAt === null);
      if (!requirement) return null;
      return recordDecision({ repos, wake: (id) => on.start(id) }, run, requirement, validateDecision(requirement, body), clock.now());
    },
    async pending(runId) {
      return (await repos.runs.get(runId))!.pendingRequirements.filter((r) => r.decidedAt === null);
    },
    async close() {
      for (const e of engines) await e.close();
      await executors.close();
      await store.close();
    },
  };
}
