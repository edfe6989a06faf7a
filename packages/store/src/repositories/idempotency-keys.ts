/**
 * `idempotency_keys` repository (issue "Run control" item 10): one document per (workflow,
 * `Idempotency-Key`) naming the run that key started and a hash of the request body, so that a
 * retried trigger returns the original run instead of starting another. The document's `_id` is
 * the pair itself, so of concurrent first requests exactly one insert wins (unique `_id`), on
 * either backend. Keys expire (`expires_at`); an expired key is taken over by the next request
 * with a compare-and-set, and expired ones are purged now and then.
 */
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { oid } from './documents.ts';

export const IDEMPOTENCY_KEYS = 'idempotency_keys';

/** A stored key: which run it started, for which request body, until when. */
export interface IdempotencyRecord {
  runId: string;
  bodyHash: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Outcome of {@link IdempotencyKeys.claim}: this request owns the key, or someone did before. */
export type IdempotencyClaim = { readonly won: true } | { readonly won: false; readonly existing: IdempotencyRecord };

export class IdempotencyKeys {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(IDEMPOTENCY_KEYS);
  }

  /**
   * Records `key` of `workflowId` for `runId` (a run about to be created) and `bodyHash`, valid
   * for `ttlMs`. Wins when the key is new or expired (taken over with a compare-and-set), or when
   * `takeOverRunId` names the run the key points at (a creator that died before creating it).
   */
  async claim(workflowId: string, key: string, claim: { runId: string; bodyHash: string; now: Date; ttlMs: number; takeOverRunId?: string }): Promise<IdempotencyClaim> {
    const _id = idOf(workflowId, key);
    const fields = { run_id: oid(claim.runId), body_hash: claim.bodyHash, created_at: claim.now, expires_at: new Date(claim.now.getTime() + claim.ttlMs) };
    try {
      await this.collection.insertOne({ _id, workflow_definition_id: oid(workflowId), key, ...fields });
      return { won: true };
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const takeOver: Document[] = [{ expires_at: { $lte: claim.now } }];
    if (claim.takeOverRunId !== undefined) takeOver.push({ run_id: oid(claim.takeOverRunId) });
    const byId: Document = { _id };
    if (await this.collection.findOneAndUpdate({ ...byId, $or: takeOver }, { $set: fields })) return { won: true };
    const doc = await this.collection.findOne(byId);
    if (!doc) return this.claim(workflowId, key, claim); // purged meanwhile: try again
    return { won: false, existing: toRecord(doc) };
  }

  /** Forgets `key` of `workflowId` if it still names `runId` (the run could not be created). */
  async release(workflowId: string, key: string, runId: string): Promise<void> {
    const filter: Document = { _id: idOf(workflowId, key), run_id: oid(runId) };
    await this.collection.deleteOne(filter);
  }

  /** Deletes keys that expired before `now`; returns how many. */
  async purgeExpired(now: Date): Promise<number> {
    return (await this.collection.deleteMany({ expires_at: { $lt: now } })).deletedCount;
  }

  /** Deletes every key of a workflow; returns how many. */
  async deleteByWorkflow(workflowId: string): Promise<number> {
    return (await this.collection.deleteMany({ workflow_definition_id: oid(workflowId) })).deletedCount;
  }
}

/** The document id of a key: the workflow id and the key, which holds any characters. */
function idOf(workflowId: string, key: string): string {
  return `${workflowId}:${key}`;
}

function toRecord(doc: Document): IdempotencyRecord {
  return {
    runId: (doc.run_id as { toHexString(): string }).toHexString(),
    bodyHash: doc.body_hash as string,
    createdAt: doc.created_at as Date,
    expiresAt: doc.expires_at as Date,
  };
}
