/**
 * What a periodic background loop of this instance says about itself (issue #20 item 1): the
 * engine's recovery scan, the HITL timeout sweeper, the retention sweeper, the schedule loop.
 * `/readyz` reads it to tell a loop that stopped turning (a hung store call, a crashed timer) from
 * one that is merely between two passes. Times come from the loop's injected `Clock`.
 * {@link PeriodicLoop} runs such a loop's passes.
 */
import type { Clock } from './clock.ts';

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

/** What {@link PeriodicLoop} runs. */
export interface PeriodicLoopOptions {
  /** The loop's clock: its timer (`every`) and the times of its status. */
  clock: Clock;
  /** Period between two passes, ms. */
  intervalMs: number;
  /** One pass; a rejection is handed to {@link onError} and the loop goes on. */
  pass: () => Promise<unknown>;
  /** Reports a failed pass (the loop logs it). */
  onError: (error: unknown) => void;
  /** Run a pass at once on start, not only after the first period (default false). */
  passAtStart?: boolean;
}

/**
 * Runs `pass` every `intervalMs` on the injected clock from {@link start} until {@link stop}, never
 * two at once (a pass still running when the timer fires again is not overlapped), and keeps the
 * loop's {@link LoopStatus}: the one timer of the sweepers and the schedule loop.
 */
export class PeriodicLoop {
  private cancelTimer: (() => void) | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private busy = false;
  private readonly loop: LoopClock;

  constructor(private readonly options: PeriodicLoopOptions) {
    this.loop = new LoopClock(() => options.clock.now(), options.intervalMs);
  }

  /** The loop's state: `lastRunAt` is when the last pass finished without an error. */
  get status(): LoopStatus {
    return this.loop.status;
  }

  /** Starts the timer (again after {@link stop}); a second call while started does nothing. */
  start(): void {
    if (this.cancelTimer) return;
    this.loop.started();
    if (this.options.passAtStart) this.tick();
    this.cancelTimer = this.options.clock.every(this.options.intervalMs, () => this.tick());
  }

  /** Stops the timer; resolves once a pass in progress has finished. */
  async stop(): Promise<void> {
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.loop.stopped();
    await this.running;
  }

  private tick(): void {
    if (this.busy) return;
    this.busy = true;
    this.running = this.options
      .pass()
      .then(
        () => this.loop.ran(),
        (error: unknown) => this.options.onError(error),
      )
      .finally(() => {
        this.busy = false;
      });
  }
}
