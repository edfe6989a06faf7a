/**
 * Bounds on what one API response may carry (issue "Reliability" item 5: no read can exhaust
 * memory). Values are stored up to the write-time limits (`SWITCHYARD_MAX_OUTPUT_BYTES` for
 * executor outputs and step arguments), and responses that list many of them inline only the
 * small ones, within a byte budget per response:
 * - a snapshot (node run input, output, original output; a gate's `stepOutput`, `editedOutput`,
 *   `userInput`) is inlined when it
 *   is at most {@link INLINE_SNAPSHOT_MAX_BYTES} and the response has inlined less than
 *   {@link RESPONSE_SNAPSHOT_BUDGET_BYTES} so far; otherwise it is `null` and its size is given in
 *   `omittedSnapshots` (node runs) or `omittedFields` (gates), so that clients fetch it
 *   from `GET .../nodes/{node_run_id}`, which always returns every snapshot in full;
 * - run detail and run list entries carry at most {@link MAX_INLINE_NODE_RUNS} node runs (the
 *   first by `startedAt`), with `nodeRunCount` and `nodeRunsUrl` for the paginated list, and
 *   `nodeStatusCounts` over all of them with at most {@link MAX_ACTIVE_NODE_IDS} `activeNodeIds`.
 * Sizes are bytes of the value's JSON text (UTF-8). Error texts are cut to
 * {@link MAX_ERROR_CHARS} characters wherever they are stored.
 */

/** Largest snapshot (bytes of JSON) inlined in a list-like response: 32 KiB. */
export const INLINE_SNAPSHOT_MAX_BYTES = 32 * 1024;

/** Snapshot bytes one response inlines at most: 4 MiB. */
export const RESPONSE_SNAPSHOT_BUDGET_BYTES = 4 * 1024 * 1024;

/** Node runs carried by one run in a run detail or run list response. */
export const MAX_INLINE_NODE_RUNS = 100;

/** Node ids a run's `activeNodeIds` lists at most. */
export const MAX_ACTIVE_NODE_IDS = 20;

/** Node runs per page of `GET .../nodes`: the default and the maximum. */
export const NODE_RUN_PAGE_SIZE = 100;

/** Bytes of `null` as JSON text: a snapshot of this size is null (no need to read it). */
export const JSON_NULL_BYTES = 4;

/** Longest error text kept (a node run's `error`, a run's `errorSummary`, event payloads), in characters. */
export const MAX_ERROR_CHARS = 8_192;

/** `text` cut to `maxChars` characters (default {@link MAX_ERROR_CHARS}), saying how much was left out. */
export function boundedText(text: string, maxChars: number = MAX_ERROR_CHARS): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}… (${text.length - maxChars} more characters left out)`;
}

/**
 * The snapshot bytes one response may still inline (see the module comment). One instance per
 * response; views ask it before inlining each snapshot.
 */
export class SnapshotBudget {
  #left: number;

  /** `totalBytes`: the response's budget (default {@link RESPONSE_SNAPSHOT_BUDGET_BYTES}). */
  constructor(
    totalBytes: number = RESPONSE_SNAPSHOT_BUDGET_BYTES,
    private readonly itemMaxBytes: number = INLINE_SNAPSHOT_MAX_BYTES,
  ) {
    this.#left = totalBytes;
  }

  /** True (and the bytes are spent) when a snapshot of `bytes` may be inlined. */
  take(bytes: number): boolean {
    if (bytes > this.itemMaxBytes || bytes > this.#left) return false;
    this.#left -= bytes;
    return true;
  }
}
