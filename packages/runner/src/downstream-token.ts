/**
 * Short-lived tokens for downstream calls (issue 9 item 7; spec "Internal WorkflowRun Fields":
 * the run keeps the triggering identity, never the caller's token, and a fresh token is minted from
 * it whenever a step calls out, also after a HITL pause of days).
 *
 * Each executor call gets its own HS256 JWT, bound to the executor that receives it (security
 * issue, item 7: a token handed to one receiver must not work at another):
 * - `iss` (default `switchyard`), `sub` = the triggering user id, `preferred_username`;
 * - `aud`: the receiving executor's audience (`executors/shared/token-binding.ts`: its entry's
 *   `tokenAudience`, else the origin of its target URL), else — executors calling no URL — the
 *   configured audience (`SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE`);
 * - `azp`: the executor key the token was minted for;
 * - `scope` (space-separated): the scopes the executor's entry declares (`tokenScopes`) that the
 *   run's identity holds; left out when there are none (the default);
 * - `iat`/`exp` (lifetime configured, seconds), `jti`, and what the call is for:
 *   `switchyard_run_id`, `switchyard_node_id`.
 * Executors that call over HTTP (`http`, `a2a`, MCP over HTTP) send it as `Authorization: Bearer
 * <token>` unless their registry entry sets an `Authorization` header itself. A run triggered
 * without an identity gets no token. Receivers must check the signature, `iss`, `exp` and that
 * `aud` is their own audience (and may check `azp`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';

/** Who a run acts for (stored on the run as `triggering_*`). */
export interface DownstreamIdentity {
  userId: string | null;
  username: string | null;
  scopes: string[];
}

/** What a downstream token is for, and whom it is for. */
export interface DownstreamTokenContext {
  runId: string;
  nodeId: string;
  /** The executor key the token is minted for: its `azp`. */
  executorKey: string;
  /** `aud`; undefined: the minter's configured audience. */
  audience?: string;
  /** Scopes the token may carry: those of them the identity holds become `scope`; default none. */
  scopes?: readonly string[];
}

/** Mints the token of one executor call; resolves undefined when there is nobody to act for. */
export interface DownstreamTokenMinter {
  mint(identity: DownstreamIdentity, context: DownstreamTokenContext): Promise<string | undefined>;
}

/** Configuration of {@link HmacTokenMinter}. */
export interface HmacTokenMinterOptions {
  /** HS256 signing key (at least 32 bytes of UTF-8, as RFC 7518 §3.2 requires). */
  secret: string;
  /** `aud` of tokens whose context names no audience (executors calling no URL, see `token-binding.ts`). */
  audience: string;
  /** `iss` of every token (default `switchyard`). */
  issuer?: string;
  /** Lifetime, seconds (default 300). */
  ttlSeconds?: number;
  clock?: Clock;
}

/** Smallest HS256 key accepted, bytes. */
export const MIN_HS256_KEY_BYTES = 32;

/** HS256 minter (see the module comment). Throws at construction when the secret is shorter than 32 bytes. */
export class HmacTokenMinter implements DownstreamTokenMinter {
  readonly #key: Uint8Array;
  readonly #options: Required<Omit<HmacTokenMinterOptions, 'secret' | 'clock'>>;
  readonly #clock: Clock;

  constructor(options: HmacTokenMinterOptions) {
    this.#key = new TextEncoder().encode(options.secret);
    if (this.#key.byteLength < MIN_HS256_KEY_BYTES) throw new Error(`the downstream token key must be at least ${MIN_HS256_KEY_BYTES} bytes`);
    this.#options = { audience: options.audience, issuer: options.issuer ?? 'switchyard', ttlSeconds: options.ttlSeconds ?? 300 };
    this.#clock = options.clock ?? systemClock;
  }

  async mint(identity: DownstreamIdentity, context: DownstreamTokenContext): Promise<string | undefined> {
    if (identity.userId === null) return undefined;
    const now = Math.floor(this.#clock.now().getTime() / 1000);
    const held = new Set(identity.scopes);
    const scopes = [...new Set(context.scopes ?? [])].filter((scope) => held.has(scope));
    const claims: Record<string, unknown> = { azp: context.executorKey, switchyard_run_id: context.runId, switchyard_node_id: context.nodeId };
    if (scopes.length > 0) claims.scope = scopes.join(' ');
    if (identity.username !== null) claims.preferred_username = identity.username;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(identity.userId)
      .setIssuer(this.#options.issuer)
      .setAudience(context.audience ?? this.#options.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + this.#options.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.#key);
  }
}

/**
 * The headers an HTTP-calling executor adds for `token`: `authorization: Bearer <token>`, unless
 * `configured` (the entry's own headers, any case) already sets `Authorization`. Empty without a token.
 */
export function downstreamAuthorization(token: string | undefined, configured: Readonly<Record<string, string>>): Record<string, string> {
  if (token === undefined) return {};
  if (Object.keys(configured).some((name) => name.toLowerCase() === 'authorization')) return {};
  return { authorization: `Bearer ${token}` };
}

/**
 * The downstream token of the executor call in progress, for transports that are shared between
 * calls and cannot take per-call headers (MCP over Streamable HTTP: its `fetch` reads this, see
 * `mcp-transport.ts`). An executor runs its request inside `callScope.run(call.downstreamToken, ...)`.
 */
export const callScope = new AsyncLocalStorage<string | undefined>();
