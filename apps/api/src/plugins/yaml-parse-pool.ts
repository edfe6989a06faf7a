/**
 * YAML bodies are parsed off the event loop: a 1 MiB YAML body takes the parser up to seconds
 * (bench:yaml), which on the main thread would stall every request of the instance. A
 * {@link YamlParsePool} runs the shared parser (yaml-parse-task.ts) in a small pool of worker
 * threads (piscina):
 *
 * - at most `threads` parses run at once (default {@link DEFAULT_YAML_THREADS}); the threads are
 *   started on the first YAML body, end after a minute idle, and are ended by {@link close}.
 *   `threads: 0` parses on the event loop, as before the pool existed (for comparison in
 *   bench:yaml; a large body then stalls every request), with no queue and no time bound;
 * - at most `queue` more wait for a thread (default {@link DEFAULT_YAML_QUEUE}); a body arriving
 *   when the queue is full, or waiting longer than `timeoutMs`, is refused with 503 `too_busy`
 *   (Retry-After: 1) and costs nothing more;
 * - a parse running longer than `timeoutMs` (default {@link DEFAULT_YAML_PARSE_TIMEOUT_MS}) has its
 *   thread terminated (the pool starts another) and is refused with 413 `request_too_large`.
 *
 * Results and messages are those of the parser itself: the value is handed back as JSON text and
 * parsed here (plain data, as for a JSON body).
 */
import { Piscina } from 'piscina';
import { InvalidRequestError, TooBusyError } from '@switchyard/domain';
import parseYamlTask, { type YamlParseOutcome, type YamlParseTask } from './yaml-parse-task.ts';

/** Parser threads by default (SWITCHYARD_YAML_PARSER_THREADS). */
export const DEFAULT_YAML_THREADS = 1;
/** Bodies that may wait for a thread by default, beyond those being parsed. */
export const DEFAULT_YAML_QUEUE = 4;
/**
 * Longest one parse may run, and one body may wait for a thread, by default (ms). The slowest
 * 1 MiB bodies the body guard lets through take 2.5–3.5 s alone and about 5 s in a thread on a
 * busy two-core machine (bench:yaml), so 10 s refuses only what is pathological.
 */
export const DEFAULT_YAML_PARSE_TIMEOUT_MS = 10_000;
/** A thread idle this long ends (ms); the next body starts one again. */
const IDLE_THREAD_MS = 60_000;
/** Heap of a parser thread, MiB: far above what a 1 MiB document needs, far below the service's memory. */
const PARSER_HEAP_MB = 512;
/** Retry-After of a `too_busy` answer (s). */
const BUSY_RETRY_AFTER_S = 1;

/** The thread's entry module (plain JavaScript, see there). */
const WORKER_URL = new URL('./yaml-parse-worker.mjs', import.meta.url).href;

/** A body whose aliases expand beyond the limit, or whose parse ran out of time: 413 `request_too_large`. */
export class YamlBodyTooLargeError extends Error {
  readonly statusCode = 413;
}

/** Options of {@link YamlParsePool}; every field defaults to the constant of that name above. */
export interface YamlParsePoolOptions {
  /** Most parses at once (threads); 0 parses on the event loop (see the module comment). */
  threads?: number;
  /** Most bodies waiting for a thread. */
  queue?: number;
  /** Longest parse, and longest wait for a thread (ms). */
  timeoutMs?: number;
}

/** A body waiting for a thread: started by {@link YamlParsePool.release}, refused by its timer. */
interface Waiter {
  start: () => void;
  refuse: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Parses YAML bodies in worker threads; see the module comment. */
export class YamlParsePool {
  readonly #threads: number;
  readonly #queue: number;
  readonly #timeoutMs: number;
  #pool: Piscina<YamlParseTask, YamlParseOutcome> | undefined;
  #running = 0;
  readonly #waiting: Waiter[] = [];
  #closed = false;

  constructor(options: YamlParsePoolOptions = {}) {
    this.#threads = options.threads ?? DEFAULT_YAML_THREADS;
    this.#queue = options.queue ?? DEFAULT_YAML_QUEUE;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_YAML_PARSE_TIMEOUT_MS;
  }

  /**
   * The value YAML `text` holds, as plain JSON data; `limitBytes` is the route's body limit.
   * Rejects with InvalidRequestError (400, the parser's message with line and column),
   * {@link YamlBodyTooLargeError} (413: aliases expand too far, or the parse ran out of time) or
   * TooBusyError (503 `too_busy`: no thread free and the queue full, the wait too long, or the
   * pool closed).
   */
  async parse(text: string, limitBytes: number): Promise<unknown> {
    if (this.#threads === 0) return valueOf(parseYamlTask({ text, limitBytes }));
    await this.#acquire();
    try {
      return valueOf(await this.#run({ text, limitBytes }));
    } finally {
      this.#release();
    }
  }

  /** Ends the threads (a parse running is refused with `too_busy`) and refuses every body waiting. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.refuse(busy('the service is shutting down'));
    }
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.destroy();
  }

  /** Resolves when a thread is free for this body; rejects with `too_busy` as the module comment says. */
  #acquire(): Promise<void> {
    if (this.#closed) return Promise.reject(busy('the service is shutting down'));
    if (this.#running < this.#threads) {
      this.#running += 1;
      return Promise.resolve();
    }
    if (this.#waiting.length >= this.#queue) {
      return Promise.reject(busy(`${this.#running} YAML bodies are being parsed and ${this.#waiting.length} are waiting`));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        refuse: reject,
        timer: setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          reject(busy(`no YAML parser thread was free within ${this.#timeoutMs} ms`));
        }, this.#timeoutMs),
      };
      this.#waiting.push(waiter);
    });
  }

  /** Hands the thread slot to the next body waiting, or frees it. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.start();
    } else {
      this.#running -= 1;
    }
  }

  /** Runs `task` on a thread within the time bound. */
  async #run(task: YamlParseTask): Promise<YamlParseOutcome> {
    this.#pool ??= new Piscina({
      filename: WORKER_URL,
      minThreads: 0,
      maxThreads: this.#threads,
      idleTimeout: IDLE_THREAD_MS,
      // A document that needs more memory ends its thread, not the service (see below).
      resourceLimits: { maxOldGenerationSizeMb: PARSER_HEAP_MB },
    });
    const pool = this.#pool;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.#timeoutMs);
    try {
      return await pool.run(task, { signal: timeout.signal });
    } catch (error) {
      if (timeout.signal.aborted) {
        throw new YamlBodyTooLargeError(`The YAML body took longer than ${this.#timeoutMs} ms to parse; send a smaller or simpler document (or JSON)`);
      }
      if (this.#closed) throw busy('the service is shutting down');
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new YamlBodyTooLargeError(`The YAML body needed more than ${PARSER_HEAP_MB} MiB to parse; send a smaller or simpler document (or JSON)`);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The value of a parse's outcome, or its problem as the error the API answers. */
function valueOf(outcome: YamlParseOutcome): unknown {
  if ('json' in outcome) return JSON.parse(outcome.json);
  if (outcome.problem.kind === 'too_large') throw new YamlBodyTooLargeError(outcome.problem.message);
  throw new InvalidRequestError(outcome.problem.message);
}

/** The `too_busy` refusal, saying why. */
function busy(why: string): TooBusyError {
  return new TooBusyError(`The service cannot parse another YAML body now (${why}); retry in a moment, or send JSON`, BUSY_RETRY_AFTER_S);
}
