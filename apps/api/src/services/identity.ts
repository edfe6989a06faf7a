/**
 * Who makes a request, as an authenticating proxy in front of the API tells it:
 * `x-switchyard-user-id`, `x-switchyard-username`, `x-switchyard-scopes` (comma-separated).
 */

/** The caller's identity; all null/empty without the headers. */
export interface TriggeringIdentity {
  userId: string | null;
  username: string | null;
  scopes: string[];
}

type Headers = Record<string, string | string[] | undefined>;

/** The request headers read here (a browser on another origin must be allowed to send them: plugins/cors.ts). */
export const IDENTITY_HEADERS = ['x-switchyard-user-id', 'x-switchyard-username', 'x-switchyard-scopes'] as const;

/** Reads the identity headers. Stored on a run it triggers (not exposed by the API) and handed to executors, also after a HITL pause. */
export function identityOf(headers: Headers): TriggeringIdentity {
  const one = (name: string) => {
    const value = headers[name];
    return (Array.isArray(value) ? value[0] : value)?.trim() || null;
  };
  const scopes = one('x-switchyard-scopes');
  return { userId: one('x-switchyard-user-id'), username: one('x-switchyard-username'), scopes: scopes ? scopes.split(',').map((s) => s.trim()).filter(Boolean) : [] };
}

/** How the caller is named on what it records (a cancel's `cancelledBy`, a directive event): username, else user id, else `api`. */
export function requesterOf(headers: Headers): string {
  const identity = identityOf(headers);
  return identity.username ?? identity.userId ?? 'api';
}
