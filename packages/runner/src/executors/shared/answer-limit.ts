/**
 * The output limit applied while an answer is read (security issue, item 5): an executor stops
 * reading an answer once it passed {@link answerReadLimit} bytes, destroys the connection, and
 * fails the attempt without parsing what it read. Every executor kind reads through this module:
 *
 * - {@link readBounded}: a Node body (undici's `request`, any async iterable of byte chunks), read
 *   with a byte counter (`http`);
 * - {@link boundedFetch}: a `fetch` whose responses have a counted body that errors past the limit
 *   (the SDK clients of `a2a` and MCP over Streamable HTTP, which parse answers themselves). A
 *   `text/event-stream` answer is counted per event (an event is what lies between two blank
 *   lines), so a long stream of small events stays readable while no single event may pass the
 *   limit; what a kind keeps of many events is its own business (see `a2a.ts`).
 *
 * The limit is `maxOutputBytes` (`SWITCHYARD_MAX_OUTPUT_BYTES`, bytes of an output's JSON text;
 * twice that for MCP results, see {@link answerReadLimit})
 * plus a margin of a quarter of it, at least {@link MIN_ANSWER_MARGIN_BYTES}: the JSON text of an
 * answer is about the JSON size of the output made of it, give or take the envelope (JSON-RPC, an
 * A2A task, MCP content blocks) and whitespace. An answer within the margin is parsed and then
 * measured exactly by the step runner (`output-limit.ts`), which fails it if its output is still
 * over `maxOutputBytes`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ExecutorError } from '../types.ts';

/** Least margin above `maxOutputBytes` an answer may have before reading stops (64 KiB). */
export const MIN_ANSWER_MARGIN_BYTES = 64 * 1024;

/** The margin above `maxOutputBytes`, as a fraction of it (a quarter), unless {@link MIN_ANSWER_MARGIN_BYTES} is more. */
export const ANSWER_MARGIN_FRACTION = 0.25;

/**
 * Most bytes of one answer (or of one event of a streamed answer) read for an output limit of
 * `maxOutputBytes` bytes: `kept + max(64 KiB, ceil(kept / 4))` where `kept = copies *
 * maxOutputBytes`. `copies`: how many times an answer may legitimately carry the output made of
 * it (1; 2 for MCP results, whose structured content comes twice: as itself and as its JSON text
 * in a content block, as the MCP specification recommends).
 */
export function answerReadLimit(maxOutputBytes: number, copies = 1): number {
  const kept = copies * maxOutputBytes;
  return kept + Math.max(MIN_ANSWER_MARGIN_BYTES, Math.ceil(kept * ANSWER_MARGIN_FRACTION));
}

/**
 * An answer was over the read limit: reading stopped, nothing was parsed. Not retryable (the same
 * call would answer as much again), like an output over the limit.
 */
export class AnswerTooLargeError extends ExecutorError {
  /** Bytes received when reading stopped (the last chunk included). */
  readonly bytesRead: number;
  /** The output limit (`SWITCHYARD_MAX_OUTPUT_BYTES`), bytes. */
  readonly maxOutputBytes: number;

  /**
   * `what`: the answer's sender for the message, e.g. `webhook answer`, `A2A agent answer`.
   * Message: `<what> exceeds SWITCHYARD_MAX_OUTPUT_BYTES (<max> bytes): read stopped at <n> bytes`.
   * `copies`: as for {@link answerReadLimit} (the read limit reported in `details.readLimit`).
   */
  constructor(what: string, maxOutputBytes: number, bytesRead: number, details?: Record<string, unknown>, copies = 1) {
    super(`${what} exceeds SWITCHYARD_MAX_OUTPUT_BYTES (${maxOutputBytes} bytes): read stopped at ${bytesRead} bytes`, {
      retryable: false,
      details: { ...details, maxOutputBytes, bytesRead, readLimit: answerReadLimit(maxOutputBytes, copies) },
    });
    this.bytesRead = bytesRead;
    this.maxOutputBytes = maxOutputBytes;
  }
}

/** What {@link readBounded} read. */
export interface BoundedRead {
  /** The bytes read, at most `limit`. */
  bytes: Buffer;
  /** False when the body had more than `limit` bytes (reading stopped, the body was destroyed). */
  complete: boolean;
  /** Bytes received, the chunk that crossed the limit included (equals `bytes.length` when complete). */
  bytesRead: number;
}

/**
 * Reads `body` until its end or until more than `limit` bytes came. In the second case the
 * iteration is ended early, which destroys a Node stream (for undici's body: the request is
 * aborted and its socket closed), and `bytes` holds the first `limit` bytes. A body of exactly
 * `limit` bytes is complete. Rejects with what the body rejects with (a reset, an abort).
 */
export async function readBounded(body: AsyncIterable<Uint8Array>, limit: number): Promise<BoundedRead> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.length > limit) {
      chunks.push(chunk.subarray(0, limit - size));
      const bytesRead = size + chunk.length;
      // Leaving the loop ends the iteration: a Node stream is destroyed.
      return { bytes: Buffer.concat(chunks), complete: false, bytesRead };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks), complete: true, bytesRead: size };
}

/** Where a {@link boundedFetch} reports an answer over the limit, besides erroring its body. */
export interface AnswerGuard {
  /** Called once per response that went over the limit, with the error its body errored with. */
  tripped(error: AnswerTooLargeError): void;
}

/**
 * The answer guard of one call: remembers the first answer over the limit, and aborts
 * {@link signal} then, so that a call still waiting for an answer that will never come (an
 * event-stream cut off mid-way) ends at once.
 */
export class AnswerWatch implements AnswerGuard {
  #error: AnswerTooLargeError | undefined;
  readonly #abort = new AbortController();

  /** The first answer over the limit, once one came. */
  get error(): AnswerTooLargeError | undefined {
    return this.#error;
  }

  /** Aborts (reason: the {@link error}) once an answer was over the limit. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  tripped(error: AnswerTooLargeError): void {
    if (this.#error !== undefined) return;
    this.#error = error;
    this.#abort.abort(error);
  }
}

/**
 * The guard of the call in whose async context a request is sent, for clients shared by many
 * calls (a pooled MCP connection): a call runs its requests in `answerScope.run(watch, ...)` and a
 * {@link boundedFetch} with `guard: () => answerScope.getStore()` reports to it.
 */
export const answerScope = new AsyncLocalStorage<AnswerGuard>();

/** Options of {@link boundedFetch}. */
export interface BoundedFetchOptions {
  /** The output limit, bytes (`SWITCHYARD_MAX_OUTPUT_BYTES`); reading stops past {@link answerReadLimit} of it. */
  maxOutputBytes: number;
  /** The answer's sender for the message (see {@link AnswerTooLargeError}). */
  what: string;
  /** How many times an answer may carry its output (see {@link answerReadLimit}); default 1. */
  copies?: number;
  /**
   * The guard to tell, looked up when a request is sent (so an async-context lookup sees the
   * context of the caller that sent it); undefined: none.
   */
  guard?: () => AnswerGuard | undefined;
}

/**
 * `fetchImpl` with counted response bodies: a body errors with {@link AnswerTooLargeError} once it
 * passed {@link answerReadLimit} bytes (an event-stream: once one event did), which cancels the
 * underlying body (undici closes the connection), and the guard hears of it. Status, status text
 * and headers are those of the real response; responses without a body are returned as they are.
 */
export function boundedFetch<I>(fetchImpl: (input: I, init?: RequestInit) => Promise<Response>, options: BoundedFetchOptions): (input: I, init?: RequestInit) => Promise<Response> {
  const limit = answerReadLimit(options.maxOutputBytes, options.copies);
  return countedFetch(fetchImpl, limit, () => {
    const guard = options.guard?.();
    return (bytesRead) => {
      const error = new AnswerTooLargeError(options.what, options.maxOutputBytes, bytesRead, undefined, options.copies);
      guard?.tripped(error);
      return error;
    };
  });
}

/** Most bytes of an A2A agent card read (256 KiB; cards list a few skills): a larger one is refused unparsed. */
export const MAX_AGENT_CARD_BYTES = 256 * 1024;

/**
 * `fetchImpl` for agent cards: a body over {@link MAX_AGENT_CARD_BYTES} errors with an
 * ExecutorError (not retryable) `A2A agent card exceeds 262144 bytes: read stopped at <n> bytes`,
 * and the connection is closed.
 */
export function agentCardFetch<I>(fetchImpl: (input: I, init?: RequestInit) => Promise<Response>): (input: I, init?: RequestInit) => Promise<Response> {
  return countedFetch(fetchImpl, MAX_AGENT_CARD_BYTES, () => (bytesRead) =>
    new ExecutorError(`A2A agent card exceeds ${MAX_AGENT_CARD_BYTES} bytes: read stopped at ${bytesRead} bytes`, { retryable: false, details: { bytesRead, limit: MAX_AGENT_CARD_BYTES } }),
  );
}

/**
 * `fetchImpl` whose response bodies error past `limit` bytes (per event for an event-stream, see
 * {@link countingStream}) with the error `exceeded()` makes of the bytes read; `exceeded` is asked
 * for when the request is sent (so that it may capture the sender's async context).
 */
function countedFetch<I>(
  fetchImpl: (input: I, init?: RequestInit) => Promise<Response>,
  limit: number,
  exceeded: () => (bytesRead: number) => Error,
): (input: I, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const onExceeded = exceeded();
    const response = await fetchImpl(input, init);
    if (response.body === null) return response;
    const perEvent = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
    const counted = response.body.pipeThrough(countingStream(limit, perEvent, onExceeded));
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * A pass-through stream that errors (with what `exceeded(bytesReadSoFar)` returns) once more than
 * `limit` bytes passed, or, with `perEvent`, once one event of an event stream did: an event ends
 * at a blank line (`\n\n` or `\r\n\r\n`; a lone `\r` as line end is not recognised, so such a
 * stream is counted as one event). Exported for tests.
 */
export function countingStream(limit: number, perEvent: boolean, exceeded: (bytesRead: number) => Error): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  // Bytes of the current event (or of everything, without perEvent).
  let current = 0;
  // The last two bytes seen, to find blank lines across chunk boundaries.
  let last = -1;
  let beforeLast = -1;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.length;
      if (!perEvent) {
        current += chunk.length;
      } else {
        let start = 0;
        for (let lf = chunk.indexOf(10); lf >= 0; lf = chunk.indexOf(10, lf + 1)) {
          const previous = lf > 0 ? chunk[lf - 1]! : last;
          const beforePrevious = lf > 1 ? chunk[lf - 2]! : lf === 1 ? last : beforeLast;
          const blank = previous === 10 || (previous === 13 && beforePrevious === 10);
          if (!blank) continue;
          // The event ends with this byte: check it, then count the next one from here.
          if (current + (lf + 1 - start) > limit) return controller.error(exceeded(total - chunk.length + lf + 1));
          current = 0;
          start = lf + 1;
        }
        current += chunk.length - start;
        if (chunk.length >= 2) [beforeLast, last] = [chunk[chunk.length - 2]!, chunk[chunk.length - 1]!];
        else if (chunk.length === 1) [beforeLast, last] = [last, chunk[0]!];
      }
      if (current > limit) return controller.error(exceeded(total));
      controller.enqueue(chunk);
    },
  });
}
