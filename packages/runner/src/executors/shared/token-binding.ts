/**
 * What the downstream token of an executor's calls is bound to (security issue, item 7): its
 * `aud` and the scopes it may carry, from the registry entry's optional `tokenAudience` and
 * `tokenScopes` (kinds `http`, `a2a`, `mcp`). The minter (`downstream-token.ts`) adds `azp`, the
 * executor key.
 *
 * - `aud`: the entry's `tokenAudience`, else the origin of the target the executor calls (an `http`
 *   entry's URL, an `a2a` agent's base URL, an MCP Streamable HTTP server's URL), else (built-ins,
 *   stdio MCP servers) the minter's configured audience (`SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE`).
 * - `scope`: the entry's `tokenScopes` that the run's identity holds; none by default (the claim
 *   is left out).
 */
import Type from 'typebox';

/** RFC 6749 §3.3 scope token: printable ASCII except space, `"` and `\`. */
const SCOPE_PATTERN = '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$';

/** The optional entry fields `tokenAudience` and `tokenScopes`, for the schemas of kinds whose executors send the token. */
export const TokenFields = {
  tokenAudience: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2000, description: "`aud` of the downstream tokens this executor sends; default the origin of its target URL" }),
  ),
  tokenScopes: Type.Optional(
    Type.Array(Type.String({ pattern: SCOPE_PATTERN, maxLength: 200, problem: 'must be a scope token (printable ASCII, no space, quote or backslash)' }), {
      maxItems: 100,
      description: "Scopes the downstream token may carry (those of the run's identity among them); default none",
    }),
  ),
};

/** What a downstream token minted for one executor's calls is bound to. */
export interface TokenBinding {
  /** `aud`; undefined: the minter's configured audience. */
  audience?: string;
  /** Scopes the token may carry (intersected with the identity's by the minter); empty: no `scope` claim. */
  scopes: readonly string[];
}

/**
 * The binding of an entry's tokens: `tokenAudience` else `targetOrigin` (an origin such as
 * `https://hooks.example.org`; undefined when the executor calls no URL), and `tokenScopes` (default none).
 */
export function tokenBinding(entry: { tokenAudience?: string; tokenScopes?: readonly string[] }, targetOrigin: string | undefined): TokenBinding {
  const audience = entry.tokenAudience ?? targetOrigin;
  const scopes = [...new Set(entry.tokenScopes ?? [])];
  return audience === undefined ? { scopes } : { audience, scopes };
}
