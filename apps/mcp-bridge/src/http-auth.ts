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
import type { HttpAuthMode } from './config.ts';

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
