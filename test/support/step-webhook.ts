/**
 * A webhook that `http` steps of a real service process call, for tests that count step
 * executions from outside the process: it records each call's JSON body (the step's evaluated
 * `config`), counts calls in flight (a call ends when it is answered or its client goes away, e.g.
 * the process was killed or aborted the call) and answers `{ ok: true }` after the delay
 * `delayMs(body, callsSoFar)` returns.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';

/** One call the webhook received. */
export interface StepCall {
  body: Record<string, unknown>;
  /** True once the client went away before the answer was sent. */
  abandoned: boolean;
}

export class StepWebhook {
  readonly calls: StepCall[] = [];
  inFlight = 0;
  maxInFlight = 0;
  readonly #server: Server;

  /** `delayMs` decides how long each call waits before its answer (default 0). */
  constructor(private readonly delayMs: (body: Record<string, unknown>, earlierCalls: readonly StepCall[]) => number = () => 0) {
    this.#server = createServer((request, response) => {
      let raw = '';
      request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      request.on('end', () => {
        const body = JSON.parse(raw || '{}') as Record<string, unknown>;
        const earlier = this.calls.slice();
        const call: StepCall = { body, abandoned: false };
        this.calls.push(call);
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        let open = true;
        const end = () => {
          if (!open) return;
          open = false;
          this.inFlight--;
        };
        const timer = setTimeout(() => {
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
          end();
        }, this.delayMs(body, earlier));
        response.on('close', () => {
          if (!response.writableFinished) {
            call.abandoned = true;
            clearTimeout(timer);
          }
          end();
        });
      });
    });
  }

  /** Listens on a free loopback port; resolves with the URL to call. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/step`;
  }

  /** Calls whose body has `step` (and `n`, when given). */
  callsOf(step: string, n?: number): StepCall[] {
    return this.calls.filter((call) => call.body['step'] === step && (n === undefined || call.body['n'] === n));
  }

  /** Resolves once `predicate` holds (checked every 10 ms; rejects after `timeoutMs` of real time: a bound, not a margin). */
  async until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** Writes a registry file with an `http` executor `work` calling `url` (and the built-in `echo`); returns its path. */
export async function writeStepRegistry(path: string, url: string): Promise<string> {
  await writeFile(
    path,
    JSON.stringify({
      executors: {
        work: { kind: 'http', url, timeoutSeconds: 60 },
        echo: { kind: 'builtin', name: 'echo' },
      },
    }),
  );
  return path;
}
