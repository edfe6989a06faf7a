/**
 * A bounded map that forgets its least recently used entry when full. Backed by a `Map`, whose
 * iteration order is insertion order: a hit re-inserts the entry so the oldest one comes first.
 */
export class LruCache<K, V> {
  readonly #capacity: number;
  readonly #entries = new Map<K, V>();

  /**
   * @param capacity most entries kept, a positive integer.
   * @throws RangeError when `capacity` is not a positive integer.
   */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`LRU cache capacity must be a positive integer, got ${capacity}`);
    }
    this.#capacity = capacity;
  }

  /** Number of entries currently held (at most the capacity). */
  get size(): number {
    return this.#entries.size;
  }

  /** The value stored under `key`, marking it most recently used; undefined when absent. */
  get(key: K): V | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key) as V;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Stores `value` under `key` as the most recently used entry, evicting the least recently used one when full. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }
}
