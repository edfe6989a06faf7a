/**
 * `Host` and `Origin` allow-lists of the bridge's Streamable HTTP mode (DNS-rebinding protection,
 * as the MCP transport spec asks of servers: "validate the Origin header"). The SDK's transport
 * option `enableDnsRebindingProtection` does the same, but only after the request has been read
 * and authenticated, and it skips the Origin check when its list is empty; here the check runs
 * first, on every path, with lists that are never empty.
 *
 * Default ports: browsers leave `:80` out of an `http://` Host and Origin (and `:443` out of an
 * `https://` Origin), so `name` and `name:80` are the same Host here, as in the API's `hostAllowed`
 * (apps/api/src/plugins/request-origin.ts: a Host without port is port 80), and `http://name:80`
 * the same Origin as `http://name`. Any other port must match exactly.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isLoopback } from './config.ts';

/** The two lists, lower case. */
export interface HostOriginLists {
  /** `host[:port]` values the `Host` header must be one of (`host` and `host:80` are the same). */
  hosts: readonly string[];
  /** `scheme://host[:port]` values an `Origin` header, when present, must be one of. */
  origins: readonly string[];
}

/**
 * Default `Host` values for a bridge listening on `host:port`: `host:port`, and on loopback also
 * `localhost`, `127.0.0.1` and `[::1]` with the port. IPv6 addresses are bracketed.
 */
export function defaultAllowedHosts(host: string, port: number): string[] {
  const bracket = (name: string) => (name.includes(':') && !name.startsWith('[') ? `[${name}]` : name);
  const names = [bracket(host.toLowerCase())];
  if (isLoopback(host)) names.push('localhost', '127.0.0.1', '[::1]');
  return [...new Set(names.map((name) => `${name}:${port}`))];
}

/** Default `Origin` values: `http://` and `https://` of every allowed host. */
export function defaultAllowedOrigins(hosts: readonly string[]): string[] {
  return hosts.flatMap((host) => [`http://${host}`, `https://${host}`]);
}

/**
 * Why a request is refused (message for the caller), or null when its Host and Origin are allowed.
 * Compares lower case, with default ports left out on both sides ({@link hostKey}, {@link originKey}).
 */
export function checkHostAndOrigin(headers: IncomingHttpHeaders, lists: HostOriginLists): string | null {
  const host = headers.host;
  if (!host || !lists.hosts.some((entry) => hostKey(entry) === hostKey(host))) return `Forbidden: Host header '${host ?? ''}' is not allowed (--allowed-hosts)`;
  const origin = headers.origin;
  if (origin !== undefined && !lists.origins.some((entry) => originKey(entry) === originKey(origin))) return `Forbidden: Origin '${origin}' is not allowed (--allowed-origins)`;
  return null;
}

/**
 * A `host[:port]` value as compared: lower case, `:80` left out (`example.com:80` → `example.com`,
 * `[::1]:80` → `[::1]`). Nothing else is rewritten: a value that is not `name[:port]` stays as it
 * is and matches only itself.
 */
export function hostKey(value: string): string {
  const lower = value.toLowerCase();
  const match = /^(\[[^\]]+\]|[^:[\]]+):80$/.exec(lower);
  return match ? match[1]! : lower;
}

/**
 * A `scheme://host[:port]` value as compared: lower case, the scheme's default port left out
 * (`http://x:80` → `http://x`, `https://x:443` → `https://x`), as browsers send it.
 */
export function originKey(value: string): string {
  const lower = value.toLowerCase();
  const match = /^(https?):\/\/(\[[^\]]+\]|[^:/[\]]+):(\d+)$/.exec(lower);
  if (match && ((match[1] === 'http' && match[3] === '80') || (match[1] === 'https' && match[3] === '443'))) return `${match[1]}://${match[2]}`;
  return lower;
}
