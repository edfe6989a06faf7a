/**
 * Bounded concurrency for parallel nodes (DESIGN.md: "children concurrently, bounded by the
 * run's parallel limit").
 */

/**
 * Runs `task` for every item with at most `limit` in flight; resolves with every outcome in item
 * order (like Promise.allSettled), so one failure never leaves siblings unobserved.
 */
export async function settleWithConcurrency<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = { status: 'fulfilled', value: await task(items[index]!, index) };
      } catch (reason) {
        results[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
