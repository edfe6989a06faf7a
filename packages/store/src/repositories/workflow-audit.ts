/**
 * `workflow_audit` repository (issue #18 item 6; domain audit.ts, docs/guide/audit.md): an
 * append-only trail per workflow of who changed its definition or access, and when. Documents:
 * `workflow_id` (ObjectId), `type`, `actor` (`user_id`, `username`, `via`), `payload` (keys as
 * given, like a run event's), `created_at`. Index `workflow_created` (`workflow_id`, `created_at`
 * desc, `_id` desc) serves the newest-first pages.
 *
 * **Outbox.** The store has no transaction spanning two collections, so an entry that must not be
 * lost with its change travels inside the change's own write: `WorkflowDefinitions.create` stores
 * the `workflow.created` entry in the new definition's `audit_outbox` (one insert: both or
 * neither). {@link WorkflowAudit.flushOutbox} then moves pending entries here, under the id they
 * already have (a repeated move finds the entry present and goes on), and pulls them from the
 * definition. Callers move them right after the write, before any later entry of the workflow, and
 * before the trail is read or the workflow deleted.
 *
 * Entries are never deleted here: not with their workflow (`deleteWorkflow` removes runs, node
 * runs, run events and idempotency keys, not this), not by the retention sweeper (which only
 * deletes ended runs). The trail grows with definition and access changes only, never with runs.
 */
import type { AuditEntryOf, AuditEntryRecord, AuditEventType } from '@switchyard/domain';
import { fromStoredUserData, toStoredUserData } from '@switchyard/domain';
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { hexId, newId, oid } from './documents.ts';

export const WORKFLOW_AUDIT = 'workflow_audit';
/** The definitions' collection, whose documents carry pending entries in `audit_outbox` (see the module comment). */
const DEFINITIONS = 'workflow_definitions';

/** An entry of type `T` to append: everything but its id. */
export type NewAuditEntry<T extends AuditEventType = AuditEventType> = Omit<AuditEntryOf<T>, 'id' | 'seq'>;

/** The stored document of `entry` under a new id: what {@link WorkflowAudit.append} inserts and an outbox holds. */
export function auditDocument(entry: NewAuditEntry): Document {
  return {
    _id: oid(newId()),
    workflow_id: oid(entry.workflowId),
    type: entry.type,
    actor: { user_id: entry.actor.userId, username: entry.actor.username, via: entry.actor.via },
    payload: toStoredUserData(entry.payload),
    created_at: entry.createdAt,
  };
}

export class WorkflowAudit {
  private readonly collection: DocumentCollection;
  private readonly definitions: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(WORKFLOW_AUDIT);
    this.definitions = store.collection(DEFINITIONS);
  }

  /** Appends one entry; returns it with its new id. Throws store errors (the caller decides what a lost entry means). */
  async append<T extends AuditEventType>(entry: NewAuditEntry<T>): Promise<AuditEntryOf<T>> {
    const doc = auditDocument(entry);
    await this.collection.insertOne(doc);
    return { ...entry, id: hexId(doc) };
  }

  /**
   * Moves the entries pending in workflow `workflowId`'s `audit_outbox` to the trail, oldest first
   * (see the module comment); returns how many were pending (0 when the workflow does not exist).
   * Throws store errors: what was not moved stays pending, and a later call moves it.
   */
  async flushOutbox(workflowId: string): Promise<number> {
    const definition = await this.definitions.findOne({ _id: oid(workflowId) }, { projection: { audit_outbox: 1 } });
    const pending = Array.isArray(definition?.audit_outbox) ? (definition.audit_outbox as Document[]) : [];
    if (pending.length === 0) return 0;
    for (const doc of pending) {
      try {
        await this.collection.insertOne({ ...doc });
      } catch (error) {
        // Moved before, by a call that could not pull it from the outbox afterwards.
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
    await this.definitions.updateOne({ _id: oid(workflowId) }, { $pull: { audit_outbox: { _id: { $in: pending.map((doc) => doc._id) } } } as Document });
    return pending.length;
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
