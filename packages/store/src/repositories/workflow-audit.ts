/**
 * `workflow_audit` repository (issue #18 item 6; domain audit.ts, docs/guide/audit.md): an
 * append-only trail per workflow of who changed its definition or access, and when. Documents:
 * `workflow_id` (ObjectId), `type`, `actor` (`user_id`, `username`, `via`), `payload` (keys as
 * given, like a run event's), `created_at`. Index `workflow_created` (`workflow_id`, `created_at`
 * desc, `_id` desc) serves the newest-first pages.
 *
 * Entries are never deleted here: not with their workflow (`deleteWorkflow` removes runs, node
 * runs, run events and idempotency keys, not this), not by the retention sweeper (which only
 * deletes ended runs). The trail grows with definition and access changes only, never with runs.
 */
import type { AuditEntryOf, AuditEntryRecord, AuditEventType } from '@switchyard/domain';
import { fromStoredUserData, toStoredUserData } from '@switchyard/domain';
import type { Document, DocumentCollection, DocumentStore } from '../document-collection.ts';
import { hexId, newId, oid } from './documents.ts';

export const WORKFLOW_AUDIT = 'workflow_audit';

/** An entry of type `T` to append: everything but its id. */
export type NewAuditEntry<T extends AuditEventType = AuditEventType> = Omit<AuditEntryOf<T>, 'id' | 'seq'>;

export class WorkflowAudit {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(WORKFLOW_AUDIT);
  }

  /** Appends one entry; returns it with its new id. Throws store errors (the caller decides what a lost entry means). */
  async append<T extends AuditEventType>(entry: NewAuditEntry<T>): Promise<AuditEntryOf<T>> {
    const id = newId();
    await this.collection.insertOne({
      _id: oid(id),
      workflow_id: oid(entry.workflowId),
      type: entry.type,
      actor: { user_id: entry.actor.userId, username: entry.actor.username, via: entry.actor.via },
      payload: toStoredUserData(entry.payload),
      created_at: entry.createdAt,
    });
    return { ...entry, id };
  }

  /**
   * One page of a workflow's entries, newest first (`created_at` desc, then id desc), and how many
   * it has in all. `page` is 1-based; callers bound `perPage` (the API: ≤ 100). The workflow need
   * not exist any more.
   */
  async list(workflowId: string, page: number, perPage: number): Promise<{ items: AuditEntryRecord[]; total: number }> {
    const query = { workflow_id: oid(workflowId) };
    const [docs, total] = await Promise.all([
      this.collection.find(query, { sort: { created_at: -1, _id: -1 }, skip: (page - 1) * perPage, limit: perPage }),
      this.collection.countDocuments(query),
    ]);
    return { items: docs.map(toRecord), total };
  }
}

function toRecord(doc: Document): AuditEntryRecord {
  const actor = (doc.actor ?? {}) as { user_id?: string | null; username?: string | null; via?: AuditEntryRecord['actor']['via'] };
  return {
    id: hexId(doc),
    workflowId: (doc.workflow_id as { toHexString(): string }).toHexString(),
    type: doc.type,
    actor: { userId: actor.user_id ?? null, username: actor.username ?? null, via: actor.via ?? 'none' },
    payload: fromStoredUserData(doc.payload),
    createdAt: doc.created_at as Date,
  } as AuditEntryRecord;
}
