/**
 * Idempotent triggers (issue "Run control" item 10): a trigger carrying an `Idempotency-Key`
 * header starts its run at most once per workflow and key while the key lives (default 24 h):
 * a repeat with the same body gets the original run back (same `runId`, same 202), a repeat with
 * another body is a 409 `conflict`. Concurrent first requests are arbitrated by the key
 * document's unique id (see the `idempotency_keys` repository), not by a read-then-write; a
 * request that lost waits for the winner's run to appear, and takes the key over if the winner
 * died before creating it (services/claim-wait.ts: at most 64 waiters per key and instance).
 */
import { createHash } from 'node:crypto';
import { ConflictError, InvalidRequestError, type RunRecord } from '@switchyard/domain';
import { newId, type IdempotencyRecord } from '@switchyard/store';
import type { AppServices } from './app-services.ts';
import { awaitClaim } from './claim-wait.ts';

/** How long a key is remembered unless configured (`SWITCHYARD_IDEMPOTENCY_TTL_HOURS`): 24 h, in ms. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** Longest accepted key, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

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
  const claimOf = (now: Date, takeOverRunId?: string) => keys.claim(workflowId, key, { runId, bodyHash, now, ttlMs, ...(takeOverRunId === undefined ? {} : { takeOverRunId }) });
  let holder: IdempotencyRecord | undefined;
  const outcome = await awaitClaim<RunRecord>(services.clock, {
    key: `idempotency ${workflowId} ${key}`,
    look: async () => {
      const claim = await claimOf(services.clock.now());
      if (claim.won) return { mine: true };
      holder = claim.existing;
      if (holder.bodyHash !== bodyHash) throw new ConflictError(`Idempotency-Key '${key}' was already used with a different request body for this workflow`);
      const run = await services.repos.runs.getInWorkflow(workflowId, holder.runId);
      return run ? { result: run } : { claimedAt: holder.createdAt };
    },
    takeOver: async (_claimedAt, now) => (await claimOf(now, holder!.runId)).won,
    busy: (waiting) => new ConflictError(`A request with Idempotency-Key '${key}' is still starting its run and ${waiting} more wait for it; retry in a moment`),
  });
  if ('result' in outcome) return { run: outcome.result, replayed: true };
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
