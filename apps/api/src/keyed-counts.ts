/**
 * Holders counted per key, with a cap: connections per client address (plugins/edge-limits.ts),
 * event streams per caller (routes/events.ts), requests waiting on one claim: an `Idempotency-Key`
 * or an event `id` (services/claim-wait.ts). In memory, per instance; a key with no holder is forgotten, so the
 * map does not grow with every key ever seen.
 */
export class KeyedCounts {
  readonly #counts = new Map<string, number>();

  /** Holders of `key` now. */
  count(key: string): number {
    return this.#counts.get(key) ?? 0;
  }

  /** Takes a place for `key` unless `max` are held already; true when taken (then {@link release} it once). */
  tryTake(key: string, max: number): boolean {
    const held = this.count(key);
    if (held >= max) return false;
    this.#counts.set(key, held + 1);
    return true;
  }

  /** Gives back a place {@link tryTake} took for `key`. */
  release(key: string): void {
    const left = this.count(key) - 1;
    if (left <= 0) this.#counts.delete(key);
    else this.#counts.set(key, left);
  }
}
