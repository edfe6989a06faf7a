/**
 * Callers with HS256 JWTs for end-to-end tests of authentication and access control (issue #18):
 * {@link signToken} makes a token for a `sub` with scopes, groups and a display name, and
 * {@link call} sends one request with it over real HTTP. Pair with a service started with
 * `edge: { authenticator: await Authenticator.create(jwtAuthConfig()) }`.
 */
import { bodyOf } from './service.ts';
import { SignJWT } from 'jose';
import type { AuthConfig } from '@switchyard/api';

/** The HS256 secret the helpers sign with (≥ 32 bytes). */
export const TEST_JWT_SECRET = 'a-test-secret-of-at-least-32-bytes!!';

/** The scopes of an ordinary user that may read, write and control (every scope but `workflows-admin`). */
export const USER_SCOPES = ['workflows-read', 'workflows-write', 'workflows-control'] as const;

/** Authentication by HS256 JWTs signed with {@link TEST_JWT_SECRET}, no proxy headers. */
export function jwtAuthConfig(): AuthConfig {
  return { modes: ['jwt'], jwt: { secret: TEST_JWT_SECRET }, trustProxyIdentity: false };
}

export interface TokenClaims {
  /** Space-joined into the `scope` claim; default {@link USER_SCOPES}. */
  scopes?: readonly string[];
  /** The `groups` claim (principals `group:<name>`); left out when undefined. */
  groups?: readonly string[];
  /** The display name; default `<sub>-name`. */
  preferredUsername?: string;
  /** Any other claims (override the above). */
  extra?: Record<string, unknown>;
  /** `exp`: a duration (`'5m'`) or epoch seconds; default 10 minutes. */
  expiresIn?: string | number;
}

/** An HS256 token for `sub` (signed with {@link TEST_JWT_SECRET}). */
export function signToken(sub: string, claims: TokenClaims = {}): Promise<string> {
  const payload: Record<string, unknown> = {
    scope: (claims.scopes ?? USER_SCOPES).join(' '),
    preferred_username: claims.preferredUsername ?? `${sub}-name`,
    ...(claims.groups === undefined ? {} : { groups: [...claims.groups] }),
    ...claims.extra,
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? '10m')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

/** An answer of {@link call}: status and parsed JSON body (raw text when not JSON; null when empty). */
export interface CallResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * `method path` against `baseUrl` with `Authorization: Bearer token` (none when token is null) and
 * `body` as JSON; `headers` are added last.
 */
export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult<T>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: bodyOf(await response.text()) as T, headers: response.headers };
}
