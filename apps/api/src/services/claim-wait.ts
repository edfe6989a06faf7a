/**
 * Waiting on a claim another request holds (an `Idempotency-Key` whose run is being created,
 * services/idempotency.ts; an event `id` whose runs are being started, services/event-service.ts).
 * Of concurrent requests for one thing exactly one wins a claim in the store; the others look at
 * its progress with pauses that double from {@link WAIT_STEP_MS} up to {@link MAX_WAIT_STEP_MS},
 * take the claim over once its holder stalled past {@link CLAIM_GRACE_MS}, and are at most
 * {@link MAX_WAITERS_PER_CLAIM} per claim in this process (one more: the caller's `busy` error at once).
 */
import type { Clock } from '@switchyard/runner';
import { KeyedCounts } from '../keyed-counts.ts';

/** How long a holder may take before a waiting request takes its claim over, ms. */
export const CLAIM_GRACE_MS = 10_000;

/** First pause between two looks, ms; each next one doubles, up to {@link MAX_WAIT_STEP_MS}. */
export const WAIT_STEP_MS = 20;

/** Longest pause between two looks, ms: a wait of the whole grace costs about 25 looks, not 500. */
export const MAX_WAIT_STEP_MS = 500;

/**
 * Most requests of this instance waiting on one claim at once (issue #16 item 9: the wait is
 * bounded in CPU); one more is refused at once. Each waiter also counts against its rate limit.
 */
export const MAX_WAITERS_PER_CLAIM = 64;

/** Requests waiting per claim key in this process. */
const waiters = new KeyedCounts();

/**
 * What one look finds: the holder's `result`; the claim is this request's now (`mine`: it won,
 * e.g. because the holder gave the claim up); or the holder still works, holding it since `claimedAt`.
 */
export type ClaimLook<T> = { readonly result: T } | { readonly mine: true } | { readonly claimedAt: Date };

/** How {@link awaitClaim} ends: with the holder's result, or with the claim this request now holds (it does the work). */
export type ClaimOutcome<T> = { readonly result: T } | { readonly mine: true };

/** What {@link awaitClaim} needs to know of one claim. */
export interface ClaimWait<T> {
  /** The claim's key among all claims of this process (callers prefix their kind, e.g. `idempotency ...`). */
  key: string;
  /** Looks at the claim (the first call may make it); throws to end the wait (e.g. a 409 for another body). */
  look: () => Promise<ClaimLook<T>>;
  /** Tries to take over the claim held since `claimedAt` (a compare-and-set); true when this request holds it now. */
  takeOver: (claimedAt: Date, now: Date) => Promise<boolean>;
  /** The error thrown when {@link MAX_WAITERS_PER_CLAIM} already wait (`waiting` of them). */
  busy: (waiting: number) => Error;
}

/**
 * Looks at the claim until it has a result or is this request's: pauses (on `clock`) between
 * looks, takes over a holder that stalled past {@link CLAIM_GRACE_MS}. Throws what `look` or
 * `takeOver` throw, and `busy(...)` when too many wait.
 */
export async function awaitClaim<T>(clock: Pick<Clock, 'now' | 'sleep'>, wait: ClaimWait<T>): Promise<ClaimOutcome<T>> {
  let waiting = false;
  try {
    for (let step = WAIT_STEP_MS; ; step = Math.min(step * 2, MAX_WAIT_STEP_MS)) {
      const look = await wait.look();
      if (!('claimedAt' in look)) return look;
      const now = clock.now();
      if (now.getTime() - look.claimedAt.getTime() > CLAIM_GRACE_MS && (await wait.takeOver(look.claimedAt, now))) return { mine: true };
      if (!waiting) {
        if (!waiters.tryTake(wait.key, MAX_WAITERS_PER_CLAIM)) throw wait.busy(waiters.count(wait.key));
        waiting = true;
      }
      await clock.sleep(step);
    }
  } finally {
    if (waiting) waiters.release(wait.key);
  }
}
