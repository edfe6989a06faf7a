/**
 * Caller authentication of the bridge's Streamable HTTP mode (config.ts {@link HttpAuthMode}): from
 * a request's `Authorization` header, decides which credential the bridge sends to the API while
 * serving that request, or refuses with a `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, with
 * `resource_metadata` as the MCP authorization spec and RFC 9728 §5.1 have it).
 *
 * Nothing here keeps or logs a token: the decision holds the credential for the one request.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, type ApiClient } from './api-client.ts';
import { isLoopback, type HttpAuthMode } from './config.ts';

/** Longest bearer token accepted, characters (JWTs with many claims stay well below). */
const MAX_TOKEN_LENGTH = 8192;

/** The credential a request is served with. */
export interface Admitted {
  ok: true;
  /** Sent to the API as `Authorization: Bearer <apiToken>` for this request's REST calls; null: none. */
  apiToken: string | null;
  /** `caller` (bearer mode: the caller's own token) or `bridge` (tokens / none: the bridge's --api-token). */
  acting: 'caller' | 'bridge';
}

/** A refused request: why (for the log and the challenge), never the token. */
export interface Refused {
  ok: false;
  /** `missing`: no bearer credential (RFC 6750: no error code); `invalid_token`: a wrong or malformed one. */
  reason: 'missing' | 'invalid_token';
  /** Says what to send; safe to show the caller. */
  description: string;
}

/** Options of {@link createHttpAuthenticator}. */
export interface HttpAuthOptions {
  mode: HttpAuthMode;
  /** Accepted bridge tokens (`tokens` mode). */
  bridgeTokens: readonly string[];
  /** The bridge's own API token (`tokens` and `none` modes); null: none. */
  apiToken: string | null;
}

/** Decides, per request, with which credential it is served. */
export type HttpAuthenticator = (headers: IncomingHttpHeaders) => Admitted | Refused;

/** The authenticator for `options.mode`. Bridge tokens are kept only as sha-256 digests. */
export function createHttpAuthenticator(options: HttpAuthOptions): HttpAuthenticator {
  const { mode, apiToken } = options;
  if (mode === 'none') return () => ({ ok: true, apiToken, acting: 'bridge' });
  if (mode === 'bearer') {
    return (headers) => {
      const presented = bearerOf(headers);
      return presented.ok ? { ok: true, apiToken: presented.token, acting: 'caller' } : presented;
    };
  }
  const digests = options.bridgeTokens.map(sha256);
  return (headers) => {
    const presented = bearerOf(headers);
    if (!presented.ok) return presented;
    const digest = sha256(presented.token);
    // Every digest is compared (no early exit), each in constant time.
    let match = false;
    for (const known of digests) match = timingSafeEqual(known, digest) || match;
    return match ? { ok: true, apiToken, acting: 'bridge' } : { ok: false, reason: 'invalid_token', description: 'The bearer token is not one of the bridge tokens' };
  };
}

/** The bearer token of `Authorization: Bearer <token>`, or why there is none. */
function bearerOf(headers: IncomingHttpHeaders): { ok: true; token: string } | Refused {
  const header = headers.authorization;
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing', description: 'Authorization: Bearer <token> is required' };
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  if (!match) {
    return /^Bearer\b/i.test(header)
      ? { ok: false, reason: 'invalid_token', description: 'The Authorization header is not Bearer <token>' }
      : { ok: false, reason: 'missing', description: 'Authorization: Bearer <token> is required (other schemes are not accepted)' };
  }
  const token = match[1]!;
  if (token.length > MAX_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) return { ok: false, reason: 'invalid_token', description: 'The bearer token is malformed' };
  return { ok: true, token };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** The cheapest authenticated read of the API: one workflow of the first page. */
const PROBE_PATH = '/api/v1/workflows';

/**
 * Bearer mode: whether the API refuses the caller's credential (HTTP 401 to one small read made
 * with it). Any other answer counts as accepted: 403 is an authenticated caller without the read
 * scope, and an unreachable API is reported by the tool calls themselves. Never throws.
 */
export async function apiRefusesCredential(api: ApiClient): Promise<boolean> {
  try {
    await api.get(PROBE_PATH, { page: 1, perPage: 1 });
    return false;
  } catch (error) {
    return error instanceof ApiError && error.status === 401;
  }
}

/**
 * Whether the API requires a credential at all: the same small read as {@link apiRefusesCredential},
 * made with NO `Authorization` header (`anonymous` must be a client without a token). true: 401 or
 * 403 (the API authenticates its callers); false: 2xx (it serves anyone, e.g. `SWITCHYARD_AUTH=none`,
 * so it also ignores whatever bearer token a caller sends); null: unknown (the API unreachable, or
 * any other answer). Never throws.
 */
export async function apiNeedsCredential(anonymous: ApiClient): Promise<boolean | null> {
  try {
    await anonymous.get(PROBE_PATH, { page: 1, perPage: 1 });
    return false;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return true;
    return null;
  }
}

/** How long a definite answer of {@link createCredentialRequirementCheck} is reused, ms. */
export const CREDENTIAL_CHECK_TTL_MS = 60_000;

/** Options of {@link createCredentialRequirementCheck}. */
export interface CredentialRequirementCheckOptions {
  /** How long a definite answer (true or false) is reused, ms; default {@link CREDENTIAL_CHECK_TTL_MS}. Unknown answers are not reused. */
  ttlMs?: number;
  /** Clock, ms (tests). */
  now?: () => number;
}

/**
 * {@link apiNeedsCredential} with a cache: a definite answer is reused for `ttlMs`, concurrent calls
 * share one probe, and an unknown answer (API unreachable) is asked again by the next call.
 * The returned function never throws.
 */
export function createCredentialRequirementCheck(anonymous: ApiClient, options: CredentialRequirementCheckOptions = {}): () => Promise<boolean | null> {
  const ttlMs = options.ttlMs ?? CREDENTIAL_CHECK_TTL_MS;
  const now = options.now ?? Date.now;
  let cached: { value: boolean; until: number } | null = null;
  let inFlight: Promise<boolean | null> | null = null;
  return () => {
    if (cached && now() < cached.until) return Promise.resolve(cached.value);
    inFlight ??= apiNeedsCredential(anonymous).then((value) => {
      inFlight = null;
      cached = value === null ? null : { value, until: now() + ttlMs };
      return value;
    });
    return inFlight;
  };
}

/**
 * Whether the HTTP mode may serve at all, given what the API behind it does with credentials.
 * False only for `bearer` mode on a non-loopback `host` in front of an API that needs no credential
 * (`apiNeedsCredential` false): the API would ignore every caller's token, so any network caller
 * with `Bearer x` would be served. Loopback hosts (local callers only), the `tokens` and `none`
 * modes (the bridge itself checks or needs no caller credential) and an unknown answer (null: the
 * API unreachable) are usable.
 */
export function bearerModeUsable(input: { mode: HttpAuthMode; host: string; apiNeedsCredential: boolean | null }): boolean {
  if (input.mode !== 'bearer' || isLoopback(input.host)) return true;
  return input.apiNeedsCredential !== false;
}

/**
 * The `WWW-Authenticate` value of a 401: `Bearer realm="switchyard-mcp"`, plus
 * `error="invalid_token", error_description="…"` for a wrong token and
 * `resource_metadata="<url>"` when the protected-resource metadata is served.
 */
export function challengeOf(refused: Refused, resourceMetadataUrl: string | null): string {
  const parts = ['realm="switchyard-mcp"'];
  if (refused.reason === 'invalid_token') parts.push('error="invalid_token"', `error_description="${refused.description.replace(/["\\]/g, '')}"`);
  if (resourceMetadataUrl) parts.push(`resource_metadata="${resourceMetadataUrl}"`);
  return `Bearer ${parts.join(', ')}`;
}
