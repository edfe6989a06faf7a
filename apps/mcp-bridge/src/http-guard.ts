/**
 * `Host` and `Origin` allow-lists of the bridge's Streamable HTTP mode (DNS-rebinding protection,
 * as the MCP transport spec asks of servers: "validate the Origin header"). The SDK's transport
 * option `enableDnsRebindingProtection` does the same, but only after the request has been read
 * and authenticated, and it skips the Origin check when its list is empty; here the check runs
 * first, on every path, with lists that are never empty.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isLoopback } from './config.ts';

/** The two lists, lower case. */
export interface HostOriginLists {
  /** `host[:port]` values the `Host` header must be one of. */
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

/** Why a request is refused (message for the caller), or null when its Host and Origin are allowed. */
export function checkHostAndOrigin(headers: IncomingHttpHeaders, lists: HostOriginLists): string | null {
  const host = headers.host?.toLowerCase();
  if (!host || !lists.hosts.includes(host)) return `Forbidden: Host header '${headers.host ?? ''}' is not allowed (--allowed-hosts)`;
  const origin = headers.origin;
  if (origin !== undefined && !lists.origins.includes(origin.toLowerCase())) return `Forbidden: Origin '${origin}' is not allowed (--allowed-origins)`;
  return null;
}
