/**
 * `workflow_definitions` repository. Names are unique (index `name_unique`): a clash is a
 * DuplicateEntryError (409 `duplicate_entry`). `tags` is a list of strings (multikey index
 * `tags`); a document stored before tags existed has none and reads as []. `access` (issue #18)
 * is stored with `access_principals`, the union of its principals (multikey index
 * `access_created`): a list for a caller keeps the documents naming one of its principals or
 * `*`, in the query itself, so that `total` and pages count only what the caller may see.
 */
import { DuplicateEntryError, EVERYONE, accessPrincipals, immutable, type WorkflowAccess, type WorkflowRecord } from '@switchyard/domain';
import { isDuplicateKeyError, type Document, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { documentToRecord, escapeRegex, hexId, newId, oid, recordToDocument } from './documents.ts';
import { auditDocument, type NewAuditEntry } from './workflow-audit.ts';

export const WORKFLOW_DEFINITIONS = 'workflow_definitions';

/** Fields a PUT may change; `version` is bumped when any definition field changes. */
export type WorkflowChanges = Partial<Pick<WorkflowRecord, 'name' | 'description' | 'canvas' | 'nodes' | 'enabled' | 'tags' | 'inputSchema' | 'triggers'>>;

/** Filters of {@link WorkflowDefinitions.list}; absent fields do not filter. */
export interface WorkflowListFilter {
  /** Matches name or description, case-insensitively, as literal text. */
  search?: string;
  /** Only definitions carrying this tag (exact match). */
  tag?: string;
  /** Only enabled (true) or disabled (false) definitions. */
  enabled?: boolean;
  /** Only definitions some role of which names one of these principals or `*` (absent: all, as for an admin). */
  visibleTo?: readonly string[];
}

/** A workflow's access as stored: the lists and their union (`access_principals`). */
function accessFields(access: WorkflowAccess): Document {
  return { access: { ...access }, access_principals: accessPrincipals(access) };
}

/** The filter of the definitions visible to `principals`: some role names one of them or `*` (index `access_created`). */
export function visibleToFilter(principals: readonly string[]): Document {
  return { access_principals: { $in: [...principals, EVERYONE] } };
}

export class WorkflowDefinitions {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(WORKFLOW_DEFINITIONS);
  }

  /**
   * Gives `access` to every definition stored without one (before issue #18): one update at
   * start-up. Returns how many were changed.
   */
  async applyDefaultAccess(access: WorkflowAccess): Promise<number> {
    // `access_principals` is written with `access`, always: the same documents, found by index `access_created`.
    const { modifiedCount } = await this.collection.updateMany({ access_principals: { $exists: false } }, { $set: accessFields(access) });
    return modifiedCount;
  }

  /** The access of workflow `id`; null when it does not exist. Reads nothing else. */
  async accessOf(id: string): Promise<WorkflowAccess | null> {
    const doc = await this.collection.findOne({ _id: oid(id) }, { projection: { access: 1 } });
    return doc ? accessOfDocument(doc) : null;
  }

  /**
   * Replaces the access of workflow `id` (its `updated_at` too; `version` stays: access is not
   * part of what runs execute). Returns the access before and after, or null when it does not exist.
   */
  async setAccess(id: string, access: WorkflowAccess, now: Date): Promise<{ before: WorkflowAccess; after: WorkflowAccess } | null> {
    const doc = await this.collection.findOneAndUpdate(
      { _id: oid(id) },
      { $set: { ...accessFields(access), updated_at: now } },
      { returnDocument: 'before', projection: { access: 1 } },
    );
    return doc ? { before: accessOfDocument(doc), after: access } : null;
  }

  /** Ids of the definitions visible to `principals` (see {@link visibleToFilter}), in id order. */
  async visibleIds(principals: readonly string[]): Promise<string[]> {
    const docs = await this.collection.find(visibleToFilter(principals), { sort: { _id: 1 }, projection: { _id: 1 } });
    return docs.map(hexId);
  }

  /**
   * Inserts a new definition (version 1, disabled; no tags or inputSchema unless given) with `access` (required:
   * a forgotten access list must not default to a wide one). `audit`, the audit entry of the
   * creation (about this new workflow), is stored with it in `audit_outbox`, in the same insert
   * (WorkflowAudit.flushOutbox moves it to the trail). Throws DuplicateEntryError on a taken name.
   */
  async create(
    fields: Pick<WorkflowRecord, 'name' | 'description' | 'canvas' | 'nodes' | 'access'> & { tags?: string[]; inputSchema?: Record<string, unknown> | null; triggers?: WorkflowRecord['triggers'] },
    now: Date,
    audit?: Omit<NewAuditEntry, 'workflowId'>,
  ): Promise<WorkflowRecord> {
    const record: WorkflowRecord = {
      id: newId(),
      ...fields,
      tags: fields.tags ?? [],
      inputSchema: fields.inputSchema ?? null,
      triggers: fields.triggers ?? [],
      enabled: false,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    const doc: Document = { ...withImmutableDefinition(recordToDocument(record)), ...accessFields(record.access) };
    if (audit) doc.audit_outbox = [auditDocument({ ...audit, workflowId: record.id } as NewAuditEntry)];
    await this.guardName(fields.name, () => this.collection.insertOne(doc));
    return record;
  }

  /** The definition, or null. */
  async get(id: string): Promise<WorkflowRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(id) });
    return doc ? toRecord(doc) : null;
  }

  /** One page of definitions matching `filter` (both filters must hold), newest first. `page` is 1-based. */
  async list(filter: WorkflowListFilter, page: number, perPage: number): Promise<{ items: WorkflowRecord[]; total: number }> {
    const query: Document = {};
    if (filter.search) {
      const pattern = { $regex: escapeRegex(filter.search), $options: 'i' };
      query.$or = [{ name: pattern }, { description: pattern }];
    }
    // Equality on an array field: the definitions whose `tags` contain it.
    if (filter.tag !== undefined) query.tags = filter.tag;
    if (filter.enabled !== undefined) query.enabled = filter.enabled;
    if (filter.visibleTo !== undefined) Object.assign(query, visibleToFilter(filter.visibleTo));
    const [docs, total] = await Promise.all([
      this.collection.find(query, { sort: { created_at: -1, _id: -1 }, skip: (page - 1) * perPage, limit: perPage }),
      this.collection.countDocuments(query),
    ]);
    return { items: docs.map(toRecord), total };
  }

  /**
   * Applies `changes`; bumps `version` when `definitionChanged`. Returns the new record, or null
   * when the definition does not exist. Throws DuplicateEntryError on a taken name.
   */
  async update(id: string, changes: WorkflowChanges, definitionChanged: boolean, now: Date): Promise<WorkflowRecord | null> {
    const set = withImmutableDefinition(recordToDocument({ id, ...changes, updatedAt: now } as { id: string }));
    delete set._id;
    const update = definitionChanged ? { $set: set, $inc: { version: 1 } } : { $set: set };
    const doc = await this.guardName(changes.name, () => this.collection.findOneAndUpdate({ _id: oid(id) }, update));
    return doc ? toRecord(doc) : null;
  }

  /**
   * The enabled workflows with a trigger on event `eventName` (issue #21), in id order, at most
   * `limit`: an event starts runs of these only. Multikey index `triggers_enabled`.
   */
  async listTriggeredBy(eventName: string, limit: number): Promise<WorkflowRecord[]> {
    const docs = await this.collection.find({ 'triggers.event': eventName, enabled: true }, { sort: { _id: 1 }, limit });
    return docs.map(toRecord);
  }

  /** Ids of the workflows after `afterId` (all when null), in id order, at most `limit`: for scans in batches. */
  async listIdsAfter(afterId: string | null, limit: number): Promise<string[]> {
    const docs = await this.collection.find(afterId === null ? {} : { _id: { $gt: oid(afterId) } }, { sort: { _id: 1 }, limit, projection: { _id: 1 } });
    return docs.map(hexId);
  }

  /** The names of the workflows `ids` (those that exist), by id; reads nothing else. */
  async namesOf(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const docs = await this.collection.find({ _id: { $in: [...new Set(ids)].map(oid) } }, { projection: { name: 1 } });
    return new Map(docs.map((doc) => [hexId(doc), doc.name as string]));
  }

  /** The access of the workflows `ids` (those that exist), by id; reads nothing else. */
  async accessesOf(ids: readonly string[]): Promise<Map<string, WorkflowAccess>> {
    if (ids.length === 0) return new Map();
    const docs = await this.collection.find({ _id: { $in: [...new Set(ids)].map(oid) } }, { projection: { access: 1 } });
    return new Map(docs.map((doc) => [hexId(doc), accessOfDocument(doc)]));
  }

  /** Deletes the definition; false when it did not exist. */
  async delete(id: string): Promise<boolean> {
    const { deletedCount } = await this.collection.deleteOne({ _id: oid(id) });
    return deletedCount === 1;
  }

  private async guardName<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new DuplicateEntryError(`A workflow named '${name}' already exists`);
      throw error;
    }
  }
}

/** Document -> record; a definition stored before tags (or inputSchema, triggers) existed has none, one stored before access existed none (only admins see it until start-up gives it the default). */
function toRecord(doc: Document): WorkflowRecord {
  const { accessPrincipals: _principals, auditOutbox: _outbox, ...record } = documentToRecord<WorkflowRecord & { accessPrincipals?: unknown; auditOutbox?: unknown }>(doc);
  return {
    ...record,
    tags: Array.isArray(record.tags) ? record.tags : [],
    inputSchema: record.inputSchema ?? null,
    triggers: Array.isArray(record.triggers) ? record.triggers : [],
    access: accessOfDocument(doc),
  };
}

/** The `access` of a stored definition; no role for anyone when it has none. */
function accessOfDocument(doc: Document): WorkflowAccess {
  const access = (doc.access ?? {}) as Partial<WorkflowAccess>;
  return { owners: access.owners ?? [], editors: access.editors ?? [], operators: access.operators ?? [], viewers: access.viewers ?? [] };
}

/**
 * `doc` with its definition (`nodes`, `canvas`) made immutable: the embedded store then keeps
 * those very objects, hands them out without copying, and every run of the workflow shares them
 * (reads map them once, see mapping.ts; each run's definition snapshot stores the same objects).
 * User data the mapping passed through (a step's `config`, form defaults) is the caller's own
 * object and is frozen with it: a caller hands its definition over and does not change it after.
 */
function withImmutableDefinition(doc: Document): Document {
  if (doc.nodes !== undefined) immutable(doc.nodes);
  if (doc.canvas !== undefined) immutable(doc.canvas);
  return doc;
}
