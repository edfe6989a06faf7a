/**
 * Retry backoff (DESIGN.md "Retries"): base * 2^(n-1) seconds, capped at max, with "equal jitter"
 * (half fixed, half random) so that retrying callers spread out without ever waiting longer than
 * the cap.
 */

/**
 * Delay before retry number `retry` (1 = the first retry), in milliseconds.
 * `baseSeconds` and `maxSeconds` are seconds (> 0); `random` returns [0, 1).
 */
export function backoffDelayMs(retry: number, baseSeconds: number, maxSeconds: number, random: () => number = Math.random): number {
  const capped = Math.min(maxSeconds, baseSeconds * 2 ** (retry - 1)) * 1000;
  return Math.round(capped / 2 + random() * (capped / 2));
}
