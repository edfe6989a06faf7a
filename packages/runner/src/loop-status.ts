/**
 * What a periodic background loop of this instance says about itself (issue #20 item 1): the
 * engine's recovery scan, the HITL timeout sweeper, the retention sweeper. `/readyz` reads it to
 * tell a loop that stopped turning (a hung store call, a crashed timer) from one that is merely
 * between two passes. Times come from the loop's injected `Clock`.
 */

/** The state of one periodic loop. Milliseconds and the loop's clock throughout. */
export interface LoopStatus {
  /** True once started and until stopped. */
  readonly running: boolean;
  /** Period between two passes, ms. */
  readonly intervalMs: number;
  /** When the loop was started (null before). */
  readonly startedAt: Date | null;
  /** When the last pass finished without an error (null before the first one). */
  readonly lastRunAt: Date | null;
}

/**
 * Bookkeeping behind a {@link LoopStatus}: a loop calls {@link started} when it starts,
 * {@link ran} after each pass that finished without an error, {@link stopped} when it stops.
 */
export class LoopClock {
  private startedAt: Date | null = null;
  private lastRunAt: Date | null = null;
  private running = false;

  /** `now` is the loop's clock; `intervalMs` its period, ms. */
  constructor(
    private readonly now: () => Date,
    private readonly intervalMs: number,
  ) {}

  started(): void {
    this.running = true;
    this.startedAt = this.now();
  }

  ran(): void {
    this.lastRunAt = this.now();
  }

  stopped(): void {
    this.running = false;
  }

  get status(): LoopStatus {
    return { running: this.running, intervalMs: this.intervalMs, startedAt: this.startedAt, lastRunAt: this.lastRunAt };
  }
}
