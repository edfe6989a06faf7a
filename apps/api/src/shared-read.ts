/**
 * A read that many callers may ask for often but that should run seldom: {@link SharedRead.get}
 * answers the last value while it is younger than `maxAgeMs` (counted from when it was read), and
 * callers that come while a read is under way share that read. A failed read is not kept: the
 * next call reads again. Used by the readiness probe (services/readiness.ts) and the store-backed
 * metrics gauges (metrics/metrics.ts), which any number of unauthenticated callers may poll.
 */
export class SharedRead<T> {
  private last: { at: number; value: T } | null = null;
  private inFlight: Promise<T> | null = null;

  /** `read` produces a fresh value; `now` returns milliseconds (the caller's clock). */
  constructor(
    private readonly read: () => Promise<T>,
    private readonly options: { maxAgeMs: number; now: () => number },
  ) {}

  /** The last value when younger than `maxAgeMs`, else the read under way, else a new read. Rejects when that read rejects. */
  get(): Promise<T> {
    if (this.last !== null && this.options.now() - this.last.at < this.options.maxAgeMs) return Promise.resolve(this.last.value);
    this.inFlight ??= this.read()
      .then((value) => {
        this.last = { at: this.options.now(), value };
        return value;
      })
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }
}
