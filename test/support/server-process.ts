/**
 * The service as users run it (`apps/api/src/server.ts` through tsx) in a child process, for
 * tests that must see what only a real process shows: its log output and its DATA_DIR files.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A running server process. */
export interface ServerProcess {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** Everything it wrote to stdout and stderr so far. */
  logs(): string;
  /** A JSON call under `/api/v1/workflows`; throws on a non-2xx answer. */
  call(method: string, path: string, body?: unknown): Promise<any>;
  /** Stops it with SIGTERM and waits until it has exited (its output is complete then). */
  stop(): Promise<void>;
  /** Kills it at once (cleanup). */
  kill(): void;
  /** Sends `signal` (default SIGTERM) without waiting. */
  signal(signal?: NodeJS.Signals): void;
  /** Settles when the process has exited: its exit code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the server on a free loopback port with the embedded store (`MONGODB_URI` cleared) and
 * `env` added to this process's environment; resolves once it listens (rejects after 20 s).
 */
export function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'apps/api/src/server.ts')], {
    cwd: ROOT,
    env: { ...process.env, MONGODB_URI: '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  let baseUrl = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const process_: ServerProcess = {
    exited,
    signal: (signal = 'SIGTERM') => void child.kill(signal),
    get baseUrl() {
      return baseUrl;
    },
    logs: () => logs,
    async call(method, path, body) {
      const response = await fetch(`${baseUrl}/api/v1/workflows${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text === '' ? null : JSON.parse(text);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
    kill: () => void child.kill('SIGKILL'),
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${logs}`)), 20_000);
    const collect = (chunk: Buffer): void => {
      logs += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs);
      if (match && baseUrl === '') {
        baseUrl = match[1]!;
        clearTimeout(timer);
        resolve(process_);
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${logs}`)));
  });
}
