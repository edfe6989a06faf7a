/**
 * Turns a request's headers into a {@link CallerIdentity} (issue 9 item 7), by the configured modes:
 *
 * - A credential travels as `Authorization: Bearer <token or key>` or `X-API-Key: <key>`. With
 *   `jwt` on, a bearer that looks like a JWT (three base64url segments) is verified as one; with
 *   `api-key` on, anything else (and every `X-API-Key`) is looked up among the hashed keys.
 * - With `trustProxyIdentity`, a request without a credential but with `x-switchyard-user-id` (or
 *   `-username`) is who those headers say (an authenticating proxy in front vouches for them),
 *   with the scopes of `x-switchyard-scopes` (none without it) and the groups of
 *   `x-switchyard-groups` — only without a credential mode:
 *   with `jwt` or `api-key` on, a missing credential is a 401 whatever the headers say.
 * - Otherwise: with a mode on, or in trusted-proxy mode, 401 `authentication_required`; with
 *   neither (`SWITCHYARD_AUTH=none`), the anonymous identity, for which no scope is checked.
 *
 * Scopes are checked by {@link authorize}: 403 `permission_denied` names the scope missing.
 * Groups (issue #18 item 1) come with each credential — the JWT claim `SWITCHYARD_JWT_GROUPS_CLAIM`,
 * an API key's `"groups"`, `x-switchyard-groups` — and make the caller's principals (identity.ts
 * `principalsOf`); a credential whose groups break the bounds of groups.ts is a 401.
 */
import { AuthenticationError, PermissionDeniedError } from '@switchyard/domain';
import { ApiKeyVerifier } from './api-keys.ts';
import { ANONYMOUS, ANONYMOUS_USER_ID, IDENTITY_HEADERS, headerValue, proxyIdentityOf, type CallerIdentity } from './identity.ts';
import { JwtVerifier, type JwtOptions } from './jwt.ts';
import type { Scope } from './scopes.ts';

/** Credential kinds `SWITCHYARD_AUTH` may turn on (`none` is the empty list). */
export const AUTH_MODES = ['jwt', 'api-key'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** How requests are authenticated (docs/operations/authentication.md). */
export interface AuthConfig {
  /** Empty: `none`. */
  modes: AuthMode[];
  /** With `jwt`: the secret or JWKS URL, optional issuer and audience. */
  jwt?: JwtOptions;
  /** With `api-key`: the keys file (absolute path). */
  apiKeysFile?: string;
  /** Honour the `x-switchyard-*` identity headers of an authenticating proxy. */
  trustProxyIdentity: boolean;
}

/** No authentication, no proxy headers: every caller is anonymous (the default on loopback). */
export const NO_AUTH: AuthConfig = Object.freeze({ modes: [], trustProxyIdentity: false }) as AuthConfig;

type Headers = Record<string, string | string[] | undefined>;

/** Three base64url segments separated by dots: a compact JWS. */
const COMPACT_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Authenticates requests (see the module comment). */
export class Authenticator {
  readonly config: AuthConfig;
  readonly #jwt: JwtVerifier | null;
  readonly #keys: ApiKeyVerifier | null;

  private constructor(config: AuthConfig, jwt: JwtVerifier | null, keys: ApiKeyVerifier | null) {
    this.config = config;
    this.#jwt = jwt;
    this.#keys = keys;
  }

  /** Builds the verifiers of `config` (reads the API keys file). Throws an Error naming the variable when something is missing or invalid. */
  static async create(config: AuthConfig): Promise<Authenticator> {
    const jwt = config.modes.includes('jwt') ? new JwtVerifier(config.jwt ?? {}) : null;
    let keys: ApiKeyVerifier | null = null;
    if (config.modes.includes('api-key')) {
      if (config.apiKeysFile === undefined) throw new Error('SWITCHYARD_AUTH=api-key needs SWITCHYARD_API_KEYS_FILE');
      keys = await ApiKeyVerifier.fromFile(config.apiKeysFile);
    }
    return new Authenticator(config, jwt, keys);
  }

  /** An authenticator with API keys given in memory (tests, benches). */
  static withKeys(keys: ApiKeyVerifier, trustProxyIdentity = false): Authenticator {
    return new Authenticator({ modes: ['api-key'], trustProxyIdentity }, null, keys);
  }

  /** True when a credential is required (a mode is on). */
  get required(): boolean {
    return this.config.modes.length > 0;
  }

  /**
   * The caller of a request with `headers`. Throws {@link AuthenticationError} (401) without a
   * required credential or with one that does not verify (groups past their bounds included); a JWKS that cannot be fetched throws a
   * 503 error (see jwt.ts).
   */
  async authenticate(headers: Headers, rawHeaders: readonly string[] = []): Promise<CallerIdentity> {
    // Without a mode, credentials are not looked at (a client may send one to any service).
    const credential = this.required ? credentialOf(headers) : null;
    if (credential !== null) return notAnonymous(await this.#verify(credential));
    // With a credential mode on, proxy headers never stand in for a missing credential: whoever
    // reaches the service directly could otherwise name any user.
    if (this.config.trustProxyIdentity && !this.required) {
      refuseRepeatedIdentityHeaders(rawHeaders);
      const proxied = proxyIdentityOf(headers);
      if (proxied !== null) return notAnonymous(proxied);
    }
    if (this.required) {
      throw new AuthenticationError(`Authentication required: send Authorization: Bearer <${this.config.modes.map((m) => (m === 'jwt' ? 'JWT' : 'API key')).join(' or ')}>`);
    }
    // Trusted-proxy mode: every request should have come through the proxy, which names the caller.
    if (this.config.trustProxyIdentity) throw new AuthenticationError('Authentication required: the request carries no identity from the authenticating proxy');
    return ANONYMOUS;
  }

  async #verify(credential: Credential): Promise<CallerIdentity> {
    if (credential.from === 'authorization' && this.#jwt !== null && COMPACT_JWT.test(credential.value)) return this.#jwt.verify(credential.value);
    if (this.#keys === null) {
      throw new AuthenticationError(credential.from === 'x-api-key' ? 'API keys are not accepted here (SWITCHYARD_AUTH has no api-key)' : 'The bearer token is not a JWT');
    }
    const identity = this.#keys.verify(credential.value);
    if (identity === null) throw new AuthenticationError('Unknown API key');
    return identity;
  }
}

/**
 * `identity`, unless its user id is `anonymous`: that id owns what was created without
 * authentication (`user:anonymous`), so no credential may claim it. Throws AuthenticationError (401).
 */
function notAnonymous(identity: CallerIdentity): CallerIdentity {
  if (identity.userId === ANONYMOUS_USER_ID || (identity.userId === null && identity.username === ANONYMOUS_USER_ID)) {
    throw new AuthenticationError(`The user id '${ANONYMOUS_USER_ID}' is reserved for callers without authentication`);
  }
  return identity;
}

/**
 * Throws AuthenticationError (401) when an identity header (`X-Switchyard-User-Id`, `-Username`,
 * `-Scopes`, `-Groups`) appears more than once in `rawHeaders` (name, value, name, value, …): Node
 * joins repeated `x-` headers with commas, so a proxy that appends its header to one the client
 * sent (instead of replacing it) would let the client add groups or scopes.
 */
function refuseRepeatedIdentityHeaders(rawHeaders: readonly string[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!(IDENTITY_HEADERS as readonly string[]).includes(name)) continue;
    if (seen.has(name)) throw new AuthenticationError(`The identity header ${name} appears more than once: the authenticating proxy must replace it, not add to it`);
    seen.add(name);
  }
}

/** A presented credential and where it came from. */
interface Credential {
  value: string;
  from: 'authorization' | 'x-api-key';
}

/** The credential of a request; null when none. Throws 401 for an `Authorization` header that is not `Bearer <credential>`. */
function credentialOf(headers: Headers): Credential | null {
  const authorization = headerValue(headers, 'authorization');
  if (authorization !== null) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (match === null) throw new AuthenticationError('The Authorization header must be \'Bearer <token or key>\'');
    return { value: match[1]!, from: 'authorization' };
  }
  const key = headerValue(headers, 'x-api-key');
  return key === null ? null : { value: key, from: 'x-api-key' };
}

/** Throws {@link PermissionDeniedError} (403) unless `identity` may use a route that requires `scope`. */
export function authorize(identity: CallerIdentity, scope: Scope): void {
  if (identity.unrestricted || identity.scopes.includes(scope)) return;
  throw new PermissionDeniedError(scope, identity.scopes);
}
