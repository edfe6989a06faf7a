/**
 * Who makes a request (issue 9 item 7). The auth plugin (plugins/auth.ts) sets one
 * {@link CallerIdentity} on every request: from a verified JWT, an API key, an authenticating
 * proxy's headers (only with `SWITCHYARD_TRUST_PROXY_IDENTITY=true`), or nobody (`SWITCHYARD_AUTH=none`).
 * A run stores its trigger's {@link TriggeringIdentity} (never the credential: spec "Internal
 * WorkflowRun Fields"), and hands it to executors, which mint downstream tokens from it.
 */

import type { Actor } from '@switchyard/domain';
import { groupsOf } from './groups.ts';

/** The identity a run keeps of its trigger (`triggering_user_id`, `triggering_username`, `triggering_scopes`, `triggering_via`). */
export interface TriggeringIdentity {
  userId: string | null;
  username: string | null;
  scopes: string[];
  /** How the trigger was identified (`triggeredBy.via`); absent on identities made before #18. */
  via?: Actor['via'];
}

/** How the caller was identified. */
export type AuthMethod = 'jwt' | 'api-key' | 'proxy' | 'none';

/** The caller of one request. */
export interface CallerIdentity extends TriggeringIdentity {
  method: AuthMethod;
  /** Groups the caller belongs to (JWT `groups` claim, an API key's `groups`, `X-Switchyard-Groups`): principals `group:<name>`. */
  groups: string[];
  /** True when no scope is checked: `SWITCHYARD_AUTH=none` without trusted-proxy mode. */
  unrestricted: boolean;
  /** When the credential stops being valid (a JWT's `exp`), ms since the epoch; absent: it does not expire. */
  expiresAt?: number;
}

/** Nobody: `SWITCHYARD_AUTH=none` (and no trusted-proxy mode). */
export const ANONYMOUS: CallerIdentity = Object.freeze({ userId: null, username: null, scopes: [], groups: [], method: 'none', unrestricted: true }) as CallerIdentity;

/** The user id of the anonymous caller (`SWITCHYARD_AUTH=none`): `user:anonymous` owns what it creates. */
export const ANONYMOUS_USER_ID = 'anonymous';

type Headers = Record<string, string | string[] | undefined>;

/** The headers an authenticating proxy sets (read only in trusted-proxy mode; a browser on another origin may send them: plugins/cors.ts). */
export const IDENTITY_HEADERS = ['x-switchyard-user-id', 'x-switchyard-username', 'x-switchyard-scopes', 'x-switchyard-groups'] as const;

/** The first value of header `name`, trimmed; null when absent or blank. */
export function headerValue(headers: Headers, name: string): string | null {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() || null;
}

/**
 * The identity a trusted proxy asserts: `x-switchyard-user-id` and/or `x-switchyard-username`
 * (null when neither is sent), `x-switchyard-scopes` (comma- or space-separated; absent: none, so
 * a proxy that forgets them grants nothing), `x-switchyard-groups` (issue #18 item 1: group names
 * separated by commas, spaces around them ignored; absent: none). Throws AuthenticationError (401)
 * when the groups break the bounds of groups.ts (more than 100, a name that is not 1–200
 * characters without whitespace or commas).
 */
export function proxyIdentityOf(headers: Headers): CallerIdentity | null {
  const userId = headerValue(headers, 'x-switchyard-user-id');
  const username = headerValue(headers, 'x-switchyard-username');
  if (userId === null && username === null) return null;
  const scopes = headerValue(headers, 'x-switchyard-scopes');
  return {
    userId,
    username,
    scopes: scopes === null ? [] : scopes.split(/[\s,]+/).filter(Boolean),
    groups: groupsOf(headerValue(headers, 'x-switchyard-groups'), 'The X-Switchyard-Groups header'),
    method: 'proxy',
    unrestricted: false,
  };
}

/** What a run stores of its caller: user id, name, scopes and how it was identified; never the credential. */
export function triggeringIdentity(identity: CallerIdentity): TriggeringIdentity {
  const { userId, username, via } = callerActor(identity);
  return { userId, username, scopes: [...identity.scopes], via };
}

/** The scope that acts as owner of every workflow (issue #18). */
export const ADMIN_SCOPE = 'workflows-admin';

/** True for a caller with every right: no authentication (`SWITCHYARD_AUTH=none`), or the `workflows-admin` scope. */
export function isAdmin(identity: CallerIdentity): boolean {
  return identity.unrestricted || identity.scopes.includes(ADMIN_SCOPE);
}

/**
 * The stable id of a caller, the one every check compares: its user id; a trusted proxy that
 * names only a username: that username; nobody (no authentication): `anonymous`. Principals
 * (`user:<id>`), the actor it records and a run's trigger all use it, so four-eyes compares like
 * with like.
 */
function stableIdOf(identity: CallerIdentity): string | null {
  return identity.userId ?? identity.username ?? (identity.unrestricted ? ANONYMOUS_USER_ID : null);
}

/** The principals of a caller (domain access.ts): `user:<its stable id>` and `group:<name>` for each of its groups. */
export function principalsOf(identity: CallerIdentity): string[] {
  const id = stableIdOf(identity);
  return [...(id === null ? [] : [`user:${id}`]), ...identity.groups.map((group) => `group:${group}`)];
}

/** The principal that owns what the caller creates: `user:<its stable id>` (`user:anonymous` without authentication). */
export function creatorPrincipal(identity: CallerIdentity): string {
  return `user:${stableIdOf(identity) ?? ANONYMOUS_USER_ID}`;
}

/** Who the caller is on what it records (decisions, directives, triggers, audit entries): `{ userId: its stable id, username, via }`. */
export function callerActor(identity: CallerIdentity): Actor {
  return { userId: stableIdOf(identity), username: identity.username, via: identity.method };
}
