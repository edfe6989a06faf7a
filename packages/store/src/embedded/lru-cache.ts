/**
 * A bounded least-recently-used cache on a Map (whose iteration order is insertion order).
 */

/** At most `capacity` entries; a hit makes its entry the most recent, an insert past capacity drops the least recent. */
export class LruCache<K, V> {
  readonly capacity: number;
  readonly #entries = new Map<K, V>();

  /** An empty cache of at most `capacity` entries. Throws a RangeError unless `capacity` is a positive integer. */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
  }

  /** Number of entries held (never above `capacity`). */
  get size(): number {
    return this.#entries.size;
  }

  /** The value under `key` (now the most recent entry), or undefined. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  /** Stores `value` under `key` as the most recent entry, dropping the least recent one when full. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as K);
  }
}
