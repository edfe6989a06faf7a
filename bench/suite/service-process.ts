/**
 * The parent's handle on the service under test (service-child.ts), a process of its own: the
 * suite drives it over IPC and HTTP, so the service's RSS and CPU are not shared with the load
 * generator. The child runs through tsx, as `npm start` runs the server.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ProfileSummary } from './cpu-profile.ts';
import type { WorkloadResult } from './engine-figures.ts';

/** One part of a workload's definition: `chain(size)`, `loop(size)` or `parallel(size)` of engine-figures.ts. */
export interface WorkloadPart {
  readonly kind: 'chain' | 'loop' | 'parallel';
  readonly size: number;
}

/** A workload run in the service: its definition's parts (in order), runs, a bound per run (ms), and the run errors tolerated (a RegExp source). */
export interface WorkloadSpec {
  readonly parts: readonly WorkloadPart[];
  readonly runs: number;
  readonly timeoutMs: number;
  readonly tolerate?: string;
}

/** A request over the IPC channel (see service-child.ts). */
export interface ServiceRequest {
  readonly id: number;
  readonly op: 'workload' | 'openHttp' | 'runsOf' | 'dataDirBytes' | 'bareRoute' | 'peakRssMb' | 'rssMb' | 'profileStart' | 'profileStop' | 'close';
  readonly args?: unknown;
}

interface ServiceAnswer {
  readonly id: number;
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: string;
}

const CHILD = fileURLToPath(new URL('./service-child.ts', import.meta.url));

/** The service process (see the module comment). */
export class ServiceProcess {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #nextId = 1;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on('message', (answer: ServiceAnswer) => {
      const pending = this.#pending.get(answer.id);
      if (!pending) return;
      this.#pending.delete(answer.id);
      if (answer.ok) pending.resolve(answer.result);
      else pending.reject(new Error(answer.error));
    });
    child.on('exit', (code, signal) => {
      for (const { reject } of this.#pending.values()) reject(new Error(`the service process exited (code ${code}, signal ${signal})`));
      this.#pending.clear();
    });
    // A send on a channel closed meanwhile is reported to its callback; nothing else to do here.
    child.on('error', () => undefined);
  }

  /** Forks the service and waits until it is ready. Rejects when it exits first. */
  static async start(): Promise<ServiceProcess> {
    const child = fork(CHILD, [], { execArgv: ['--import', 'tsx', ...(process.env.SWITCHYARD_BENCH_SERVICE_FLAGS?.split(' ').filter(Boolean) ?? [])], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the service process exited before it was ready (code ${code})`)));
    });
    return new ServiceProcess(child);
  }

  /** Runs `spec` on a fresh engine and data directory in the service. */
  workload(spec: WorkloadSpec): Promise<WorkloadResult> {
    return this.#request('workload', spec) as Promise<WorkloadResult>;
  }

  /** Opens the real app (on a fresh data directory) in the service; resolves with its base URL. */
  async openHttp(): Promise<string> {
    return ((await this.#request('openHttp')) as { baseUrl: string }).baseUrl;
  }

  /** How many runs of `workflowId` have not ended, and (once none is left) how many completed. */
  runsOf(workflowId: string): Promise<{ unfinished: number; completed: number | null }> {
    return this.#request('runsOf', workflowId) as Promise<{ unfinished: number; completed: number | null }>;
  }

  /** Bytes of the app's data directory. */
  dataDirBytes(): Promise<number> {
    return this.#request('dataDirBytes') as Promise<number>;
  }

  /** Starts (in place of any earlier one) a bare Fastify route `GET /detail` answering `body`, in the service; resolves with its base URL. */
  async bareRoute(body: unknown): Promise<string> {
    return ((await this.#request('bareRoute', body)) as { baseUrl: string }).baseUrl;
  }

  /** The service's peak RSS so far, MB. */
  peakRssMb(): Promise<number> {
    return this.#request('peakRssMb') as Promise<number>;
  }

  /** The service's resident set size now (after a full GC when the child exposes one), MB. */
  rssMb(): Promise<number> {
    return this.#request('rssMb') as Promise<number>;
  }

  /**
   * Runs `work` with the service's CPU profiled (see cpu-profile.ts) when `profile`; resolves with
   * its result and the profile's top (undefined when not profiled).
   */
  async profiled<T>(profile: boolean, work: () => Promise<T>): Promise<{ result: T; profile?: ProfileSummary }> {
    if (!profile) return { result: await work() };
    await this.#request('profileStart');
    let result: T;
    try {
      result = await work();
    } catch (error) {
      // Stopped anyway, so that the next profile can start.
      await this.#request('profileStop').catch(() => undefined);
      throw error;
    }
    return { result, profile: (await this.#request('profileStop')) as ProfileSummary };
  }

  /** Closes the app and ends the process. */
  async close(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    await this.#request('close').catch(() => undefined);
    await exited;
  }

  #request(op: ServiceRequest['op'], args?: unknown): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (!this.#child.connected) {
        reject(new Error(`the service process is gone (exit code ${this.#child.exitCode}, signal ${this.#child.signalCode})`));
        return;
      }
      this.#pending.set(id, { resolve, reject });
      this.#child.send({ id, op, args } satisfies ServiceRequest, (error) => {
        if (!error) return;
        this.#pending.delete(id);
        reject(error);
      });
    });
  }
}
