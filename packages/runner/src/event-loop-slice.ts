/**
 * Cooperative scheduling for the interpreter. With the embedded store every write completes
 * synchronously, so a run of builtin steps could go from node to node on promise jobs alone and
 * never let timers (its own heartbeat), HTTP requests or other runs in. Between nodes the
 * interpreter asks {@link EventLoopSlice.yield}, which gives the event loop a turn once the
 * current slice is used up. All runs of the process share one slice ({@link sharedSlice}): what
 * matters is how long the event loop went without a turn, whichever run kept it.
 */

/** Milliseconds of continuous work after which the interpreter lets the event loop in. */
export const DEFAULT_SLICE_MS = 10;

/** A time slice on the event loop (wall-clock milliseconds, from `performance.now()`). */
export class EventLoopSlice {
  #started = performance.now();

  /** `sliceMs`: how long work may go on before {@link yield} gives way (default {@link DEFAULT_SLICE_MS}). */
  constructor(private readonly sliceMs: number = DEFAULT_SLICE_MS) {}

  /** Resolves at once while the slice lasts; otherwise after one turn of the event loop (`setImmediate`), starting a new slice. */
  async yield(): Promise<void> {
    if (performance.now() - this.#started < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#started = performance.now();
  }
}

/** The slice all interpreters of this process share. */
export const sharedSlice = new EventLoopSlice();
