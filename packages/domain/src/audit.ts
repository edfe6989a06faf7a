/**
 * The workflow audit catalogue (issue #18 items 5 and 6; docs/guide/audit.md): every change to a
 * workflow's definition or access, with who made it and when. Like run events, one writer
 * (`recordAudit` in apps/api/src/services/audit-trail.ts) appends entries through the store's
 * `WorkflowAudit` repository, typed by this catalogue; unlike run events they are kept when the
 * workflow is deleted (admins read them with `GET /api/v1/audit?workflowId=`).
 *
 * | type | when | payload |
 * | --- | --- | --- |
 * | `workflow.created` | `POST /workflows` stored a new definition | `name`, `version` |
 * | `workflow.updated` | a `PUT` changed at least one field (a PUT that changes nothing records nothing) | `fromVersion`, `toVersion` (equal when only `enabled`/`tags` changed), `fields` (the changed fields) |
 * | `workflow.toggled` | `POST …/toggle` changed `enabled` (a toggle to the current value records nothing) | `enabled` |
 * | `workflow.deleted` | `DELETE /workflows/{id}` removed the definition | `name` |
 * | `access.changed` | the workflow's access list was replaced | `before`, `after` (WorkflowAccess) |
 * | `schedule.created` / `schedule.deleted` | a schedule of the workflow was created / deleted (issue #21) | `scheduleId`, `name` |
 * | `schedule.updated` | a `PUT` of a schedule | `scheduleId`, `name`, `fields` (the fields the PUT gave) |
 * | `schedule.paused` / `schedule.resumed` | `…/pause`, `…/resume` | `scheduleId`, `name`, `note` (the note given, if any) |
 */
import Type, { type Static } from 'typebox';
import { ActorSchema, WorkflowAccess, type Actor } from './access.ts';
import { Pagination, PageQuery, Timestamp, objectIdString } from './schemas/common.ts';

/** Every audit entry type (see the module comment). */
export const AUDIT_EVENT_TYPES = [
  'workflow.created',
  'workflow.updated',
  'workflow.toggled',
  'workflow.deleted',
  'access.changed',
  'schedule.created',
  'schedule.updated',
  'schedule.deleted',
  'schedule.paused',
  'schedule.resumed',
] as const;

/** An audit entry type. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** The fields of a workflow a `PUT` may change, as `workflow.updated` names them in `fields`. */
export type AuditedWorkflowField = 'name' | 'description' | 'canvas' | 'nodes' | 'enabled' | 'tags' | 'approvers' | 'inputSchema' | 'triggers';

/** The payload of each audit entry type (see the module comment). */
export interface AuditPayloads {
  'workflow.created': { name: string; version: number };
  /** `fromVersion` = `toVersion` when only metadata (`enabled`, `tags`) changed. */
  'workflow.updated': { fromVersion: number; toVersion: number; fields: AuditedWorkflowField[] };
  'workflow.toggled': { enabled: boolean };
  'workflow.deleted': { name: string };
  'access.changed': { before: WorkflowAccess; after: WorkflowAccess };
  'schedule.created': { scheduleId: string; name: string };
  'schedule.updated': { scheduleId: string; name: string; fields: string[] };
  'schedule.deleted': { scheduleId: string; name: string };
  'schedule.paused': { scheduleId: string; name: string; note: string | null };
  'schedule.resumed': { scheduleId: string; name: string; note: string | null };
}

/** One audit entry of type `T` as the store holds it (`workflow_audit` document). */
export interface AuditEntryOf<T extends AuditEventType> {
  /** 24-hex id. */
  id: string;
  /** The workflow the entry is about (it may have been deleted since). */
  workflowId: string;
  /** Reserved for a per-workflow sequence number; entries are ordered by `createdAt`, then id. */
  seq?: number;
  type: T;
  /** Who made the change; never a credential. */
  actor: Actor;
  payload: AuditPayloads[T];
  /** When the change was made (the service clock). */
  createdAt: Date;
}

/** One audit entry, of any type (a union discriminated on `type`). */
export type AuditEntryRecord = { [T in AuditEventType]: AuditEntryOf<T> }[AuditEventType];

/** Most entries one page of an audit list holds. */
export const MAX_AUDIT_PER_PAGE = 100;

/** One audit entry as the API shows it. */
export const AuditEntry = Type.Object(
  {
    id: Type.String({ description: '24-character hex id' }),
    workflowId: Type.String({ description: 'The workflow the entry is about (it may have been deleted since)' }),
    type: Type.Enum([...AUDIT_EVENT_TYPES]),
    actor: ActorSchema,
    payload: Type.Object({}, {
      additionalProperties: true,
      description:
        'Per type: `workflow.created` {name, version}; `workflow.updated` {fromVersion, toVersion, fields}; `workflow.toggled` {enabled}; ' +
        '`workflow.deleted` {name}; `access.changed` {before, after} (each a WorkflowAccess)',
    }),
    createdAt: Timestamp,
  },
  { title: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntry>;

/** Query of `GET /workflows/{workflow_id}/audit`: `page`, `perPage` (1..100, default 20). */
export const AuditListQuery = Type.Object({ ...PageQuery.properties });
export type AuditListQuery = Static<typeof AuditListQuery>;

/** Query of the admins' `GET /api/v1/audit`: `workflowId` (required, also of a deleted workflow), `page`, `perPage`. */
export const AdminAuditListQuery = Type.Object(
  { workflowId: objectIdString('The workflow whose trail to read; it may have been deleted'), ...PageQuery.properties },
);
export type AdminAuditListQuery = Static<typeof AdminAuditListQuery>;

/** Response of both audit lists: newest entry first. */
export const AuditListResponse = Type.Object(
  {
    workflowId: Type.String(),
    entries: Type.Array(AuditEntry, { description: 'Newest first' }),
    pagination: Pagination,
  },
  { title: 'AuditListResponse' },
);
export type AuditListResponse = Static<typeof AuditListResponse>;

/** AuditEntryRecord -> AuditEntry (dates as ISO-8601; `seq` is not shown). */
export function toAuditEntryView(entry: AuditEntryRecord): AuditEntry {
  return {
    id: entry.id,
    workflowId: entry.workflowId,
    type: entry.type,
    actor: { userId: entry.actor.userId, username: entry.actor.username, via: entry.actor.via },
    payload: entry.payload as unknown as AuditEntry['payload'],
    createdAt: entry.createdAt.toISOString(),
  };
}
