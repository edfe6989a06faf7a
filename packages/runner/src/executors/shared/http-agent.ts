/**
 * The undici Agent the kinds that send HTTP requests (`http`, `a2a`) share within one registry,
 * and the `user-agent` they send. undici is loaded, and the Agent created, on the first call.
 */
import type { LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import runnerPackage from '../../../package.json' with { type: 'json' };
import { ExecutorError } from '../types.ts';

/** `user-agent` of every request Switchyard's executors send over HTTP: `switchyard/<version>`. */
export const USER_AGENT = `switchyard/${runnerPackage.version}`;

/** The Agent of one registry (or of one entry): undici is loaded, and the Agent created, on the first call. */
export class SharedAgent {
  #agent: Promise<Agent> | undefined;
  #closing: Promise<void> | undefined;
  readonly #lookup: LookupFunction | undefined;
  readonly #connections: number | undefined;

  /**
   * `options.lookup`: how the Agent's connections resolve hostnames (e.g. a `TargetPolicy`'s, which
   * refuses non-public addresses); default the system's. `options.connections`: most sockets the
   * Agent opens to one origin (undici's `connections`; requests beyond wait in its queue); default
   * unbounded, as undici's.
   */
  constructor(options: { lookup?: LookupFunction; connections?: number } = {}) {
    this.#lookup = options.lookup;
    this.#connections = options.connections;
  }

  /** The Agent; rejects (not retryable) once the registry is closed. */
  get(): Promise<Agent> {
    if (this.#closing !== undefined) return Promise.reject(new ExecutorError('executor registry is closed', { retryable: false }));
    // No header or body timers of its own: the call's signal bounds every request.
    const connect = this.#lookup === undefined ? {} : { connect: { lookup: this.#lookup } };
    const connections = this.#connections === undefined ? {} : { connections: this.#connections };
    return (this.#agent ??= import('undici').then(({ Agent }) => new Agent({ keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0, ...connect, ...connections })));
  }

  /** Destroys the Agent: open sockets close and requests still under way fail. Idempotent. */
  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      const agent = await this.#agent?.catch(() => undefined);
      await agent?.destroy();
    })());
  }
}
