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
  /** A timer of `after` (no sleeper: {@link ManualClock.sleepers} counts `sleep` waits only). */
  callback?: boolean;
  cancelled: boolean;
}

/** Real time {@link ManualClock.untilSleepers} waits before it fails the test (a bound, not a margin). */
const UNTIL_TIMEOUT_MS = 10_000;

export class ManualClock implements Clock {
  private current: number;
  private readonly timers: Timer[] = [];
  /** Waits of {@link untilSleepers}, checked whenever the set of pending sleeps changes. */
  private readonly waiters = new Set<() => void>();

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
      const onAbort = () => {
        timer.cancelled = true;
        this.changed();
        reject(signal!.reason);
      };
      const timer: Timer = {
        at: this.current + ms,
        cancelled: false,
        fire: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.push(timer);
      this.changed();
    });
  }

  after(ms: number, fire: () => void): () => void {
    const timer: Timer = { at: this.current + ms, callback: true, cancelled: false, fire };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
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
      this.changed();
      await settle();
    }
    this.current = end;
    for (let i = this.timers.length - 1; i >= 0; i--) if (this.timers[i]!.cancelled) this.timers.splice(i, 1);
    await settle();
  }

  /** Number of pending `sleep` waits (tests wait for a step to reach its backoff). */
  get sleepers(): number {
    return this.timers.filter((t) => !t.cancelled && t.periodMs === undefined && !t.callback).length;
  }

  /**
   * Resolves once at least `count` `sleep` waits are pending (e.g. a step reached its backoff, or
   * a clock-driven executor call is in flight), so that a following {@link advance} is known to
   * reach them. Rejects when that does not happen within a few seconds of real time.
   */
  untilSleepers(count = 1): Promise<void> {
    if (this.sleepers >= count) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (this.sleepers < count) return;
        this.waiters.delete(check);
        clearTimeout(timeout);
        resolve();
      };
      const timeout = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`expected ${count} pending sleep(s) on the manual clock, found ${this.sleepers}`));
      }, UNTIL_TIMEOUT_MS);
      this.waiters.add(check);
    });
  }

  private changed(): void {
    for (const check of [...this.waiters]) check();
  }
}

/** Lets pending promise jobs and I/O callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
