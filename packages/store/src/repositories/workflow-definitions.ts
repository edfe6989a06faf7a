/**
 * `workflow_definitions` repository. Names are unique (index `name_unique`): a clash is a
 * DuplicateEntryError (409 `duplicate_entry`).
 */
import { DuplicateEntryError, type WorkflowRecord } from '@switchyard/domain';
import { isDuplicateKeyError, type DocumentCollection, type DocumentStore } from '../document-collection.ts';
import { documentToRecord, escapeRegex, hexId, newId, oid, recordToDocument } from './documents.ts';

export const WORKFLOW_DEFINITIONS = 'workflow_definitions';

/** Fields a PUT may change; `version` is bumped when any definition field changes. */
export type WorkflowChanges = Partial<Pick<WorkflowRecord, 'name' | 'description' | 'canvas' | 'nodes' | 'enabled'>>;

export class WorkflowDefinitions {
  private readonly collection: DocumentCollection;
  constructor(store: DocumentStore) {
    this.collection = store.collection(WORKFLOW_DEFINITIONS);
  }

  /** Creates the indexes this repository relies on. Idempotent. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ name: 1 }, { unique: true, name: 'name_unique' });
    await this.collection.createIndex({ created_at: -1 }, { name: 'created_at' });
  }

  /** Inserts a new definition (version 1, disabled). Throws DuplicateEntryError on a taken name. */
  async create(fields: Pick<WorkflowRecord, 'name' | 'description' | 'canvas' | 'nodes'>, now: Date): Promise<WorkflowRecord> {
    const record: WorkflowRecord = { id: newId(), ...fields, enabled: false, version: 1, createdAt: now, updatedAt: now };
    await this.guardName(fields.name, () => this.collection.insertOne(recordToDocument(record)));
    return record;
  }

  /** The definition, or null. */
  async get(id: string): Promise<WorkflowRecord | null> {
    const doc = await this.collection.findOne({ _id: oid(id) });
    return doc ? documentToRecord<WorkflowRecord>(doc) : null;
  }

  /**
   * One page of definitions, newest first. `search` matches name or description,
   * case-insensitively, as literal text. `page` is 1-based.
   */
  async list(search: string | undefined, page: number, perPage: number): Promise<{ items: WorkflowRecord[]; total: number }> {
    const filter = search
      ? { $or: [{ name: { $regex: escapeRegex(search), $options: 'i' } }, { description: { $regex: escapeRegex(search), $options: 'i' } }] }
      : {};
    const [docs, total] = await Promise.all([
      this.collection.find(filter, { sort: { created_at: -1, _id: -1 }, skip: (page - 1) * perPage, limit: perPage }),
      this.collection.countDocuments(filter),
    ]);
    return { items: docs.map((d) => documentToRecord<WorkflowRecord>(d)), total };
  }

  /**
   * Applies `changes`; bumps `version` when `definitionChanged`. Returns the new record, or null
   * when the definition does not exist. Throws DuplicateEntryError on a taken name.
   */
  async update(id: string, changes: WorkflowChanges, definitionChanged: boolean, now: Date): Promise<WorkflowRecord | null> {
    const set = recordToDocument({ id, ...changes, updatedAt: now } as { id: string });
    delete set._id;
    const update = definitionChanged ? { $set: set, $inc: { version: 1 } } : { $set: set };
    const doc = await this.guardName(changes.name, () => this.collection.findOneAndUpdate({ _id: oid(id) }, update));
    return doc ? documentToRecord<WorkflowRecord>(doc) : null;
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
