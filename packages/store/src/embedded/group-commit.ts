/**
 * Group commit of the embedded store's journal: the writes of one turn of the event loop reach
 * the journal together, in one `write(2)`, instead of one each.
 *
 * A write is applied to memory when it is made (so the next operation, even in the same turn,
 * sees it: a compare-and-set stays a compare-and-set) and its line is queued; at the end of the
 * turn (`setImmediate`) the queued lines are written at once. Every operation made while lines
 * are queued, read or write, settles only after that write: an operation never answers with
 * something that is not yet durable. When the write fails, every change of the batch is undone,
 * newest first, and every operation of the batch rejects with the write's error: memory is
 * exactly as before the batch, as for a single failed write. The durability promise is
 * unchanged: an acknowledged (settled) write's bytes are in the operating system.
 */
import { setImmediate } from 'node:timers';

/** Writes `lines` (`count` complete lines, each ending in a newline) durably; throws when they could not be written (nothing of them then remains). */
export type WriteLines = (lines: string, count: number) => void;

interface Batch {
  readonly lines: string[];
  /** Undo actions of the applied changes, oldest first. */
  readonly undo: Array<() => void>;
  /** Settles when the batch was written (or failed). */
  readonly written: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** The batch of the current turn and its flush (see the module comment). */
export class GroupCommit {
  readonly #write: WriteLines;
  readonly #afterWrite: () => void;
  #batch: Batch | undefined;

  /** Writes batches through `write`; calls `afterWrite` after each successful one (e.g. to compact). */
  constructor(write: WriteLines, afterWrite: () => void) {
    this.#write = write;
    this.#afterWrite = afterWrite;
  }

  /** True while lines wait for the end of the turn. */
  get pending(): boolean {
    return this.#batch !== undefined;
  }

  /**
   * Queues `line` (one encoded entry ending in a newline), applies the change now through `apply`
   * (which must not throw) and keeps `undo` (which restores memory as before `apply`, and must
   * not throw) for a failed write.
   */
  add(line: string, apply: () => void, undo: () => void): void {
    const batch = (this.#batch ??= this.#open());
    apply();
    batch.lines.push(line);
    batch.undo.push(undo);
  }

  /**
   * Runs the synchronous operation `operation` now and settles with its result (or error) once
   * every line queued so far is written. Rejects with the write's error, whatever `operation`
   * returned, when that write fails.
   */
  async settle<T>(operation: () => T): Promise<T> {
    let value: T;
    let failure: { error: unknown } | undefined;
    try {
      value = operation();
    } catch (error) {
      failure = { error };
    }
    const batch = this.#batch;
    if (batch) await batch.written;
    if (failure) throw failure.error;
    return value!;
  }

  /** Writes the queued lines now (at the end of the turn, before a close or a compaction); does nothing when none are queued. */
  flush(): void {
    const batch = this.#batch;
    if (!batch) return;
    this.#batch = undefined;
    try {
      this.#write(batch.lines.join(''), batch.lines.length);
    } catch (error) {
      for (let i = batch.undo.length - 1; i >= 0; i--) batch.undo[i]!();
      batch.reject(error);
      return;
    }
    batch.resolve();
    this.#afterWrite();
  }

  #open(): Batch {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const written = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Every operation of the batch awaits `written` through `settle`; this handler only keeps a
    // batch whose changes were made outside `settle` from reporting an unhandled rejection.
    written.catch(() => undefined);
    setImmediate(() => this.flush());
    return { lines: [], undo: [], written, resolve, reject };
  }
}
