/**
 * The statistics of the benches (and of the tests that need one): nearest-rank percentiles.
 * The one implementation in the repository; import it rather than writing another.
 */

/** The `p`-th percentile (0-100, nearest rank) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** The `p`-th percentile (0-100, nearest rank) of `values` in any order (sorted on a copy); NaN when empty. */
export function percentileOf(values: readonly number[], p: number): number {
  return percentile([...values].sort((a, b) => a - b), p);
}

/** The median (nearest rank) of `values` in any order; NaN when empty. */
export function median(values: readonly number[]): number {
  return percentileOf(values, 50);
}
