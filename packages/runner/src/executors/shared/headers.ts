/**
 * Header handling shared by the kinds that send HTTP requests (`http`, `a2a`): which header names an
 * entry may configure, and header maps with lower-case names (so an entry's `Authorization` and
 * the downstream token's `authorization` are one header).
 */
import type { EntryScope } from '../kind.ts';

/** Header names the request sets itself or that undici does not allow to be set. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer',
]);

/** RFC 9110 token: what a header name may contain. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Checks the names of an entry's `headers` (`http`, `a2a`): each must be an RFC 9110 token and not
 * one the HTTP client sets itself (`host`, `content-length`, ...). Reports each bad name on `scope`
 * at `["headers", name]`; true when all are fine.
 */
export function checkHeaderNames(headers: Readonly<Record<string, string>> | undefined, scope: EntryScope): boolean {
  let ok = true;
  for (const name of Object.keys(headers ?? {})) {
    if (!HEADER_NAME.test(name)) {
      scope.problem(['headers', name], 'is not a valid header name');
      ok = false;
    } else if (RESERVED_HEADERS.has(name.toLowerCase())) {
      scope.problem(['headers', name], 'is set by the HTTP client and cannot be configured');
      ok = false;
    }
  }
  return ok;
}

/** `headers` with every name in lower case (values unchanged). */
export function lowerCaseKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
