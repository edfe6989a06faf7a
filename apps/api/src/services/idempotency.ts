/**
 * Idempotent triggers (issue "Run control" item 10): a trigger carrying an `Idempotency-Key`
 * header starts its run at most once per workflow and key while the key lives (default 24 h):
 * a repeat with the same body gets the original run back (same `runId`, same 202), a repeat with
 * another body is a 409 `conflict`. Concurrent first requests are arbitrated by the key
 * document's unique id (see the `idempotency_keys` repository), not by a read-then-write; a
 * request that lost waits for the winner's run to appear, and takes the key over if the winner
 * died before creating it.
 */
import { createHash } from 'node:crypto';
import { ConflictError, InvalidRequestError, type RunRecord } from '@switchyard/domain';
import { newId } from '@switchyard/store';
import { KeyedCounts } from '../keyed-counts.ts';
import type { AppServices } from './app-services.ts';

/** How long a key is remembered unless configured (`SWITCHYARD_IDEMPOTENCY_TTL_HOURS`): 24 h, in ms. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** Longest accepted key, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** How long a winner may take to create its run before a waiting request takes the key over, ms. */
const CREATION_GRACE_MS = 10_000;

/** First pause between looks for the winner's run, ms; each next one doubles, up to {@link MAX_WAIT_STEP_MS}. */
const WAIT_STEP_MS = 20;

/** Longest pause between two looks, ms: a wait of the whole grace costs about 25 looks, not 500. */
const MAX_WAIT_STEP_MS = 500;

/**
 * Most requests of this instance waiting on one key at once (issue #16 item 9: the wait is bounded
 * in CPU); one more is a 409 at once. Each waiter also counts against the trigger rate limit.
 */
export const MAX_WAITERS_PER_KEY = 64;

/** Requests waiting per `<workflowId> <key>` in this process. */
const waiters = new KeyedCounts();

/**
 * Prefixes of the keys the service itself uses for the runs it starts (a schedule's tick, an
 * event): a client's key may not start with them, so it cannot take a tick's or an event's key.
 */
export const RESERVED_KEY_PREFIXES = ['schedule:', 'event:'] as const;

/** The header value as a key, or a 400 when it is empty, too long, not printable ASCII, or starts with a {@link RESERVED_KEY_PREFIXES reserved prefix}. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key)) {
    throw new InvalidRequestError(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters`);
  }
  const reserved = RESERVED_KEY_PREFIXES.find((prefix) => key.toLowerCase().startsWith(prefix));
  if (reserved) throw new InvalidRequestError(`Idempotency-Key may not start with '${reserved}' (the service's own keys for the runs schedules and events start)`);
  return key;
}

/** SHA-256 of the body's JSON with object keys sorted (so key order does not matter). */
export function hashBody(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Calls `create(runId)` unless `key` already started a run of `workflowId` for the same `body`;
 * returns that run (`replayed: true`) or the new one. Throws ConflictError (409) when the key
 * was used with another body, and what `create` throws (the key is then forgotten, so a
 * corrected request may use it).
 */
export async function onceForKey(
  services: AppServices,
  workflowId: string,
  key: string,
  body: unknown,
  create: (runId: string) => Promise<RunRecord>,
): Promise<{ run: RunRecord; replayed: boolean }> {
  const keys = services.repos.idempotencyKeys;
  const ttlMs = services.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  const bodyHash = hashBody(body);
  const runId = newId();
  let claim = await keys.claim(workflowId, key, { runId, bodyHash, now: services.clock.now(), ttlMs });
  const waiterKey = `${workflowId} ${key}`;
  let waiting = false;
  try {
    for (let step = WAIT_STEP_MS; !claim.won; step = Math.min(step * 2, MAX_WAIT_STEP_MS)) {
      const { existing } = claim;
      if (existing.bodyHash !== bodyHash) {
        throw new ConflictError(`Idempotency-Key '${key}' was already used with a different request body for this workflow`);
      }
      const run = await services.repos.runs.getInWorkflow(workflowId, existing.runId);
      if (run) return { run, replayed: true };
      if (!waiting) {
        if (!waiters.tryTake(waiterKey, MAX_WAITERS_PER_KEY)) {
          throw new ConflictError(`A request with Idempotency-Key '${key}' is still starting its run and ${waiters.count(waiterKey)} more wait for it; retry in a moment`);
        }
        waiting = true;
      }
      const now = services.clock.now();
      const stalled = now.getTime() - existing.createdAt.getTime() > CREATION_GRACE_MS;
      if (!stalled) await services.clock.sleep(step);
      claim = await keys.claim(workflowId, key, { runId, bodyHash, now, ttlMs, ...(stalled ? { takeOverRunId: existing.runId } : {}) });
    }
  } finally {
    if (waiting) waiters.release(waiterKey);
  }
  try {
    return { run: await create(runId), replayed: false };
  } catch (error) {
    await keys.release(workflowId, key, runId).catch(() => undefined);
    throw error;
  }
}

/**
 * The one way a request starts a run (trigger, retry, replay, node rerun; issue #21 "Shape"):
 * with an `Idempotency-Key` header (`headers['idempotency-key']`, checked by
 * {@link parseIdempotencyKey}) through {@link onceForKey} for `workflowId`, keyed with
 * `operation` (what is started: the trigger body, or the source run and body of a retry, replay or
 * rerun, so that one key cannot start two different things: a 409); without one, `create()` once.
 * `create` gets the id reserved for the new run (undefined without a key). Returns the run
 * started, or the one the key started before.
 */
export async function startOnce(
  services: AppServices,
  headers: Record<string, string | string[] | undefined>,
  workflowId: string,
  operation: unknown,
  create: (runId: string | undefined) => Promise<RunRecord>,
): Promise<RunRecord> {
  const key = parseIdempotencyKey(headers['idempotency-key']);
  return key ? (await onceForKey(services, workflowId, key, operation, create)).run : create(undefined);
}
