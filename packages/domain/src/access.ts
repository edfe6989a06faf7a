/**
 * Who may see, change, run and decide (issue #18; spec workflow-management-api.md §2.10–2.15
 * "Required Permission: VIEW on the workflow (enforced via resource ACL)"; docs/guide/access-control.md).
 *
 * - A **principal** names a caller or a set of callers: `user:<sub>`, `group:<name>`, or `*`
 *   (every authenticated caller). A caller has the principals `user:<its sub>` plus
 *   `group:<name>` for each of its groups.
 * - A workflow's **access** lists principals per **role**; each role includes the ones before it:
 *   `viewer` (read the workflow and its runs), `operator` (trigger, control runs, decide gates
 *   that name no approvers), `editor` (update, toggle, delete), `owner` (change the access).
 * - An **actor** is who did something, as the store records it: `{ userId, username, via }`;
 *   `userId` is stable (a JWT's `sub`, an API key's subject), `username` a display name.
 *
 * No I/O here: the API's access checks (apps/api/src/access/) and the store's index on
 * `access_principals` build on these functions.
 */
import Type, { type Static } from 'typebox';
import { SwitchyardError } from './errors.ts';

/** Every role, from least to most powerful; each includes the ones before it. */
export const ROLES = ['viewer', 'operator', 'editor', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** The principal that stands for every authenticated caller. */
export const EVERYONE = '*';

/** Most principals one role of a workflow may list. */
export const MAX_PRINCIPALS_PER_ROLE = 100;

/** Most characters of a principal's name (after `user:` or `group:`). */
export const MAX_PRINCIPAL_NAME_LENGTH = 200;

/** `*`, `user:<name>` or `group:<name>`: names without whitespace or commas, 1–200 characters. */
export const PRINCIPAL_PATTERN = `^(\\*|(user|group):[^\\s,]{1,${MAX_PRINCIPAL_NAME_LENGTH}})$`;

/** One principal (see the module comment). */
export const Principal = Type.String({
  pattern: PRINCIPAL_PATTERN,
  maxLength: MAX_PRINCIPAL_NAME_LENGTH + 6,
  description: '`user:<sub>`, `group:<name>`, or `*` (every authenticated caller)',
});

const principalList = (description: string) => Type.Array(Principal, { maxItems: MAX_PRINCIPALS_PER_ROLE, description });

/** A workflow's access list, as stored and shown (`GET …/access`). */
export const WorkflowAccess = Type.Object(
  {
    owners: principalList('Change the access; everything editors may (at least one)'),
    editors: principalList('Update, enable/disable and delete the workflow; everything operators may'),
    operators: principalList('Trigger runs, pause/resume/cancel, retry/rerun/replay, decide gates that name no approvers; everything viewers may'),
    viewers: principalList('Read the workflow, its runs, node runs, events and audit trail'),
  },
  { additionalProperties: false, title: 'WorkflowAccess' },
);
export type WorkflowAccess = Static<typeof WorkflowAccess>;

/** The body of `PUT …/access`: `owners` required, the other roles default to none. */
export const WorkflowAccessBody = Type.Object(
  {
    owners: principalList('At least one principal'),
    editors: Type.Optional(principalList('Default: none')),
    operators: Type.Optional(principalList('Default: none')),
    viewers: Type.Optional(principalList('Default: none')),
  },
  { additionalProperties: false, title: 'WorkflowAccessBody' },
);
export type WorkflowAccessBody = Static<typeof WorkflowAccessBody>;

/** The list of `access` that names role `role`'s principals. */
export const ROLE_LISTS: Readonly<Record<Role, keyof WorkflowAccess>> = Object.freeze({ viewer: 'viewers', operator: 'operators', editor: 'editors', owner: 'owners' });

/** What a workflow created before access existed gets (`SWITCHYARD_DEFAULT_ACCESS` default). */
export const DEFAULT_LEGACY_ACCESS: WorkflowAccess = Object.freeze({
  owners: Object.freeze(['group:admins']),
  editors: Object.freeze([]),
  operators: Object.freeze([EVERYONE]),
  viewers: Object.freeze([EVERYONE]),
}) as unknown as WorkflowAccess;

/**
 * `body` with every list de-duplicated (first occurrence kept) and missing roles empty. Throws
 * {@link InvalidAccessError} (400) when no owner is left: a workflow always keeps one.
 */
export function normalizeAccess(body: WorkflowAccessBody): WorkflowAccess {
  const access: WorkflowAccess = {
    owners: [...new Set(body.owners)],
    editors: [...new Set(body.editors ?? [])],
    operators: [...new Set(body.operators ?? [])],
    viewers: [...new Set(body.viewers ?? [])],
  };
  if (access.owners.length === 0) throw new InvalidAccessError('A workflow must keep at least one owner: `owners` is empty');
  return access;
}

/** The access of a new workflow: its creator (`user:<sub>`) owns it; nobody else has a role. */
export function creatorAccess(creator: string): WorkflowAccess {
  return { owners: [creator], editors: [], operators: [], viewers: [] };
}

/**
 * The most powerful role `principals` hold in `access` (`*` in a list matches every caller);
 * null for none.
 */
export function roleOf(access: WorkflowAccess, principals: readonly string[]): Role | null {
  for (let i = ROLES.length - 1; i >= 0; i--) {
    const role = ROLES[i]!;
    if (listMatches(access[ROLE_LISTS[role]], principals)) return role;
  }
  return null;
}

/** True when `held` includes `required` (an owner is also an editor, an operator and a viewer). */
export function roleIncludes(held: Role | null, required: Role): boolean {
  return held !== null && ROLES.indexOf(held) >= ROLES.indexOf(required);
}

/** True when `list` names `*` or one of `principals`. */
export function listMatches(list: readonly string[], principals: readonly string[]): boolean {
  return list.some((entry) => entry === EVERYONE || principals.includes(entry));
}

/**
 * Every principal that holds some role in `access` (a role includes viewing): what the store
 * indexes as `access_principals`, so that a list query keeps the workflows a caller may see.
 */
export function accessPrincipals(access: WorkflowAccess): string[] {
  return [...new Set([...access.owners, ...access.editors, ...access.operators, ...access.viewers])];
}

/** How an actor was identified: the request's authentication, or `system` for what the service itself decides (a timeout). */
export const ACTOR_VIA = ['jwt', 'api-key', 'proxy', 'none', 'system'] as const;
export type ActorVia = (typeof ACTOR_VIA)[number];

/** Who did something (`decidedByUser`, `triggeredBy`, `cancelledBy`, `answeredBy`, an audit entry's `actor`). Never a credential. */
export interface Actor {
  /** Stable id: the JWT `sub`, the API key's subject, the proxy's user id; null when nobody is known. */
  userId: string | null;
  /** Display name (JWT `preferred_username`/`name`, the API key's name); null when none. */
  username: string | null;
  via: ActorVia;
}

/** {@link Actor} in OpenAPI. */
export const ActorSchema = Type.Object(
  {
    userId: Type.Union([Type.String(), Type.Null()], { description: 'Stable id: the JWT `sub`, the API key\'s subject, the proxy\'s user id' }),
    username: Type.Union([Type.String(), Type.Null()], { description: 'Display name, or null' }),
    via: Type.Enum([...ACTOR_VIA], { description: 'How the actor was identified; `system` for the service itself (a timeout)' }),
  },
  { title: 'Actor' },
);

/** The actor of what a timeout decides (a gate's `onTimeout`, a run's deadline). */
export const TIMEOUT_ACTOR: Actor = Object.freeze({ userId: null, username: 'timeout', via: 'system' }) as Actor;

/**
 * A stored actor as an {@link Actor}: versions before #18 stored a name (`decided_by_user`,
 * `cancelled_by` strings: username, else user id, else `api`), read as `{ userId: null, username }`.
 * Null for nothing stored.
 */
export function actorOfStored(value: unknown): Actor | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value === 'timeout' ? TIMEOUT_ACTOR : { userId: null, username: value, via: 'none' };
  const { userId = null, username = null, via = 'none' } = value as Partial<Actor>;
  return { userId, username, via };
}

/** How an actor is named in a sentence (an error summary): its username, else its user id; null for nobody. */
export function actorName(actor: Actor | null): string | null {
  return actor === null ? null : (actor.username ?? actor.userId);
}

/** 400 `invalid_request` for an access list that cannot be stored (no owner left). */
export class InvalidAccessError extends SwitchyardError {
  constructor(message: string) {
    super('invalid_request', 400, message);
  }
}

/**
 * 403 `permission_denied`: the caller lacks `requiredRole` on the workflow (spec §2.10 "Caller
 * lacks VIEW permission on the workflow"); `details: { requiredRole, workflowId }`, or
 * `{ requiredRole, runId }` for a run addressed without its workflow (`workflowId` null), whose
 * workflow a caller without a role is not told.
 */
export class AccessDeniedError extends SwitchyardError {
  constructor(requiredRole: Role, workflowId: string | null, runId?: string) {
    super('permission_denied', 403, `Caller lacks ${requiredRole.toUpperCase()} permission on the workflow`, {
      details: workflowId === null ? { requiredRole, runId } : { requiredRole, workflowId },
    });
  }
}

/** 403 `not_an_approver`: the gate names its approvers and the caller is none of them; `details: { approvers }`. */
export class NotAnApproverError extends SwitchyardError {
  constructor(stepId: string, approvers: readonly string[]) {
    super('not_an_approver', 403, `Only the gate's approvers may decide step '${stepId}'`, { details: { stepId, approvers: [...approvers] } });
  }
}

/** 403 `self_approval_forbidden`: four-eyes (`allowSelfApproval: false`) and the caller triggered the run. */
export class SelfApprovalForbiddenError extends SwitchyardError {
  constructor(stepId: string) {
    super('self_approval_forbidden', 403, `Step '${stepId}' needs a second person: whoever triggered the run may not decide its gates (allowSelfApproval: false)`, {
      details: { stepId },
    });
  }
}
