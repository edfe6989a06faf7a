/**
 * Bearer JWT verification with `jose` (issue 9 item 7): HS256 with a shared secret
 * (`SWITCHYARD_JWT_SECRET`), or the asymmetric keys of a JWKS URL (`SWITCHYARD_JWKS_URL`, fetched
 * and cached by jose's remote key set, refetched for an unknown `kid`). `iss` and `aud` are
 * checked when configured; `exp` is required and checked, `nbf` when present (60 s clock tolerance);
 * `iat` may not lie in the future, and a token may not live longer than `maxTtlSeconds` (a leaked
 * token issued for years is refused).
 *
 * Claims: `sub` (required) is the user id, `preferred_username` (else `name`) the username, scopes
 * come from `scope` (space-separated) or `scopes` (an array of strings), groups (issue #18 item 1:
 * principals `group:<name>`) from the claim `groupsClaim` names — `groups` by default, else any
 * claim or dot-separated path into nested claims (`realm_access.roles`) — as an array of strings
 * or a string of names separated by commas/whitespace, bounded by groups.ts (a token breaking a
 * bound is refused, 401).
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { AuthenticationError } from '@switchyard/domain';
import { groupsOf } from './groups.ts';
import type { CallerIdentity } from './identity.ts';

/** Configuration of {@link JwtVerifier}: exactly one of `secret` and `jwksUrl`. */
export interface JwtOptions {
  /** HS256 shared secret (UTF-8; at least 32 bytes). */
  secret?: string;
  /** URL of a JSON Web Key Set (RS*, PS*, ES*, EdDSA keys). */
  jwksUrl?: string;
  /** Required `iss`, when set. */
  issuer?: string;
  /** Required `aud` (one of the token's), when set. */
  audience?: string;
  /**
   * Longest lifetime accepted, seconds: `exp` minus `iat` (or minus now without `iat`) may not
   * exceed it (`SWITCHYARD_JWT_MAX_TTL_SECONDS`, default {@link DEFAULT_JWT_MAX_TTL_SECONDS}).
   */
  maxTtlSeconds?: number;
  /**
   * The claim holding the caller's groups (`SWITCHYARD_JWT_GROUPS_CLAIM`, default
   * {@link DEFAULT_JWT_GROUPS_CLAIM}): a top-level claim name (used as is when the token has it,
   * dots included: `https://example.com/groups`), else a dot-separated path into nested objects
   * (`realm_access.roles`). A token without it has no groups.
   */
  groupsClaim?: string;
}

/** Default of {@link JwtOptions.groupsClaim}. */
export const DEFAULT_JWT_GROUPS_CLAIM = 'groups';

/** Default of {@link JwtOptions.maxTtlSeconds}: a day. */
export const DEFAULT_JWT_MAX_TTL_SECONDS = 86_400;

/** Accepted difference between our clock and the issuer's, seconds. */
const CLOCK_TOLERANCE_SECONDS = 60;

/** Algorithms accepted from a JWKS (never `none`, never HMAC: a public key must not verify HS256). */
const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** A key set that cannot be fetched: the service cannot verify anyone for now (503, not 401). */
export class KeySetUnavailableError extends Error {
  override readonly name = 'KeySetUnavailableError';
  readonly statusCode = 503;
  constructor(cause: unknown) {
    super('The identity provider\'s key set (SWITCHYARD_JWKS_URL) cannot be fetched; retry later', { cause });
  }
}

/** Verifies bearer JWTs into identities (see the module comment). */
export class JwtVerifier {
  readonly #key: Uint8Array | JWTVerifyGetKey;
  readonly #algorithms: string[];
  readonly #options: JwtOptions;

  /** Throws an Error naming the variable when the configuration is unusable. */
  constructor(options: JwtOptions) {
    this.#options = options;
    if (options.secret !== undefined) {
      this.#key = new TextEncoder().encode(options.secret);
      if (this.#key.byteLength < 32) throw new Error('SWITCHYARD_JWT_SECRET must be at least 32 bytes (HS256, RFC 7518 §3.2)');
      this.#algorithms = ['HS256'];
    } else if (options.jwksUrl !== undefined) {
      this.#key = createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 5_000, cooldownDuration: 30_000, cacheMaxAge: 600_000 });
      this.#algorithms = JWKS_ALGORITHMS;
    } else {
      throw new Error('SWITCHYARD_AUTH=jwt needs SWITCHYARD_JWT_SECRET or SWITCHYARD_JWKS_URL');
    }
  }

  /**
   * The identity `token` carries. Throws {@link AuthenticationError} (401) when it does not verify
   * (message says why: expired, bad signature, wrong issuer/audience, no `sub`, a groups claim of
   * the wrong shape or past the bounds of groups.ts), and
   * {@link KeySetUnavailableError} (503) when the JWKS cannot be fetched.
   */
  async verify(token: string): Promise<CallerIdentity> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#key as Uint8Array, {
        algorithms: this.#algorithms,
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        // A token without an expiry would be good forever.
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw verificationError(error);
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new AuthenticationError('The token has no \'sub\' claim (the user id)');
    const exp = payload.exp!; // required above
    checkLifetime(payload.iat, exp, this.#options.maxTtlSeconds ?? DEFAULT_JWT_MAX_TTL_SECONDS);
    const username = stringClaim(payload.preferred_username) ?? stringClaim(payload.name);
    const claim = this.#options.groupsClaim ?? DEFAULT_JWT_GROUPS_CLAIM;
    const groups = groupsOf(claimAt(payload, claim), `The token's '${claim}' claim`);
    return { userId: payload.sub, username, scopes: scopesOf(payload), groups, method: 'jwt', unrestricted: false, expiresAt: exp * 1000 };
  }
}

/**
 * Throws {@link AuthenticationError} when `iat` (seconds) lies in the future or the token lives
 * longer than `maxTtlSeconds` from `iat` (from now without it) to `exp`; both with the clock tolerance.
 */
function checkLifetime(iat: number | undefined, exp: number, maxTtlSeconds: number): void {
  const now = Date.now() / 1000;
  if (iat !== undefined && iat > now + CLOCK_TOLERANCE_SECONDS) throw new AuthenticationError("The token's 'iat' claim lies in the future");
  const lifetime = exp - (iat ?? now);
  if (lifetime > maxTtlSeconds + CLOCK_TOLERANCE_SECONDS) {
    throw new AuthenticationError(`The token is valid for ${Math.round(lifetime)} s, longer than the ${maxTtlSeconds} s accepted (SWITCHYARD_JWT_MAX_TTL_SECONDS)`);
  }
}

/** What a failed verification means for the caller. */
function verificationError(error: unknown): Error {
  if (error instanceof errors.JWTExpired) return new AuthenticationError('The token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) return new AuthenticationError(`The token's '${error.claim}' claim is not accepted: ${error.reason}`);
  if (error instanceof errors.JWSSignatureVerificationFailed) return new AuthenticationError('The token\'s signature does not verify');
  if (error instanceof errors.JOSEAlgNotAllowed) return new AuthenticationError('The token\'s signing algorithm is not accepted');
  if (error instanceof errors.JWKSNoMatchingKey) return new AuthenticationError('No key of the identity provider matches the token');
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || isFetchFailure(error)) return new KeySetUnavailableError(error);
  return new AuthenticationError('The token is malformed');
}

function isFetchFailure(error: unknown): boolean {
  return error instanceof TypeError || (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC');
}

function stringClaim(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** Scopes from `scope` (space-separated) or `scopes` (array of strings); [] when neither. */
function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(/\s+/).filter(Boolean);
  if (Array.isArray(payload.scopes)) return payload.scopes.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

/**
 * The claim `path` names in `payload`: the top-level claim of that exact name when there is one,
 * else the value at the dot-separated path through nested objects (own properties only);
 * undefined when absent.
 */
export function claimAt(payload: JWTPayload, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  let value: unknown = payload;
  for (const segment of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
