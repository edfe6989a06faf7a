/**
 * A clock that moves only when a test says so (DESIGN.md "Deterministic time in tests"): `sleep`
 * and `every` timers fire from {@link ManualClock.advance}, in time order, so lease, heartbeat,
 * backoff and timeout tests assert behaviour without real-time margins.
 */
import type { Clock } from '../clock.ts';

interface Timer {
  at: number;
  fire: () => void;
  /** Repeat period for `every` timers. */
  periodMs?: number;
  cancelled: boolean;
}

export class ManualClock implements Clock {
  private current: number;
  private readonly timers: Timer[] = [];

  /** Starts at `start` (epoch ms; default 2026-01-01T00:00:00Z). */
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): Date {
    return new Date(this.current);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer: Timer = { at: this.current + ms, cancelled: false, fire: () => resolve() };
      signal?.addEventListener(
        'abort',
        () => {
          timer.cancelled = true;
          reject(signal.reason);
        },
        { once: true },
      );
      this.timers.push(timer);
    });
  }

  every(ms: number, tick: () => void): () => void {
    const timer: Timer = { at: this.current + ms, periodMs: ms, cancelled: false, fire: tick };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way in time order, and lets the
   * promise jobs each firing starts run (a few macrotask turns) before the next one.
   */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      if (due.periodMs !== undefined) due.at += Math.max(1, due.periodMs);
      else due.cancelled = true;
      due.fire();
      await settle();
    }
    this.current = end;
    for (let i = this.timers.length - 1; i >= 0; i--) if (this.timers[i]!.cancelled) this.timers.splice(i, 1);
    await settle();
  }

  /** Number of pending `sleep` waits (tests wait for a step to reach its backoff). */
  get sleepers(): number {
    return this.timers.filter((t) => !t.cancelled && t.periodMs === undefined).length;
  }
}

/** Lets pending promise jobs and I/O callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
