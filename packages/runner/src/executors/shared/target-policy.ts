/**
 * Where an executor's HTTP requests may go (security issue, item 6). The redirect rule is shared by
 * the `http` and `a2a` kinds; the origin and address rules apply to `a2a` only (an agent card may
 * name another target, while a webhook's URL is the operator's and nobody else can steer it):
 *
 * - Redirects are never followed: a 3xx answer fails the attempt, not retryable
 *   ({@link isRedirect}, {@link redirectRefusal}). Following one would send the entry's secret
 *   headers, the downstream token and the request body to wherever the `Location` points.
 * - Origins ({@link TargetPolicy.checkOrigin}): a request may go to the entry's own origin, or to
 *   one the entry lists in `allowedOrigins` (exact origins such as `https://rpc.example.org:8443`).
 * - Addresses ({@link TargetPolicy.checkAddress}): only public addresses, unless the entry itself
 *   names a non-public one. The ranges refused by default are loopback (127/8, ::1), private
 *   (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local (169.254/16, fe80::/10),
 *   unspecified (0/8, ::), multicast and reserved ones (240/4, documentation and benchmark
 *   networks, ...). An entry whose URL (or one of its `allowedOrigins`) is an IP literal of such a
 *   range, or `localhost` / `*.localhost` (loopback), allows that range for itself. Hostnames are
 *   checked on every address they resolve to, at connect time ({@link TargetPolicy.lookup}, a
 *   `lookup` for `net.connect`), so DNS rebinding between a check and the connect cannot bypass it.
 *
 * Refusals are {@link TargetRefusedError}s: thrown before anything is sent.
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/** The kind of network an IP address belongs to (see the module comment). */
export type AddressRange = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

/** One address a hostname resolves to (as `dns.lookup` with `all: true` answers). */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a hostname to every address it has; rejects as `dns.lookup` does (`ENOTFOUND`, ...).
 * Default: `dns.lookup(hostname, { all: true })`. Tests inject their own.
 */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** `dns.lookup(hostname, { all: true })` as a {@link Resolver}. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 })));
    });
  });

/** Error code of {@link TargetRefusedError}. */
export const TARGET_REFUSED = 'ERR_SWITCHYARD_TARGET_REFUSED';

/** A request refused by the target policy before it was sent (a redirect, a foreign origin, a non-public address). */
export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
  readonly code = TARGET_REFUSED;
}

/** The {@link TargetRefusedError} of `error` or one of its first causes (fetch wraps connect errors: `TypeError: fetch failed`). */
export function targetRefusalOf(error: unknown): TargetRefusedError | undefined {
  let current = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof TargetRefusedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** True for a 3xx status: a redirect, which executors never follow. */
export function isRedirect(status: number): boolean {
  return status >= 300 && status <= 399;
}

/** The end of the message of a refused redirect: `answered HTTP <status>, a redirect; redirects are not followed`. */
export function redirectRefusal(status: number): string {
  return `answered HTTP ${status}, a redirect; redirects are not followed (configure the final URL instead)`;
}

/** `a.b.c.d` as a 32-bit number; undefined when not a dotted IPv4 address. */
function ipv4Number(address: string): number | undefined {
  if (isIP(address) !== 4) return undefined;
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

/** True when `n` lies in `base/bits` (IPv4). */
function inV4(n: number, base: string, bits: number): boolean {
  const size = 2 ** (32 - bits);
  const start = ipv4Number(base)!;
  return n >= start && n < start + size;
}

/** The range of an IPv4 address (as a number). */
function rangeOfV4(n: number): AddressRange {
  if (inV4(n, '0.0.0.0', 8)) return 'unspecified';
  if (inV4(n, '127.0.0.0', 8)) return 'loopback';
  if (inV4(n, '10.0.0.0', 8) || inV4(n, '172.16.0.0', 12) || inV4(n, '192.168.0.0', 16) || inV4(n, '100.64.0.0', 10)) return 'private';
  if (inV4(n, '169.254.0.0', 16)) return 'link-local';
  if (inV4(n, '224.0.0.0', 4)) return 'multicast';
  if (
    inV4(n, '240.0.0.0', 4) || // reserved, and 255.255.255.255 broadcast
    inV4(n, '192.0.0.0', 24) || // IETF protocol assignments
    inV4(n, '192.0.2.0', 24) || inV4(n, '198.51.100.0', 24) || inV4(n, '203.0.113.0', 24) || // documentation
    inV4(n, '198.18.0.0', 15) // benchmarking
  ) return 'reserved';
  return 'public';
}

/** The 8 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail converted); undefined when not IPv6. */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = ipv4Number(dotted[1]!)!;
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head === '' ? [] : head!.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...(tail === undefined ? [] : Array(missing).fill('0')), ...tailGroups];
  return groups.map((group) => parseInt(group, 16));
}

/**
 * The range an IP address (v4 or v6, without brackets) lies in; `reserved` for anything that is
 * not an IP address. IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible and NAT64 (`64:ff9b::/96`)
 * IPv6 addresses count as the IPv4 address they carry.
 */
export function addressRange(address: string): AddressRange {
  const v4 = ipv4Number(address);
  if (v4 !== undefined) return rangeOfV4(v4);
  const g = ipv6Groups(address);
  if (g === undefined) return 'reserved';
  const embedded = (g[6]! * 65536 + g[7]!) >>> 0;
  if (g.slice(0, 7).every((x) => x === 0)) return g[7] === 0 ? 'unspecified' : g[7] === 1 ? 'loopback' : rangeOfV4(embedded);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return rangeOfV4(embedded); // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return rangeOfV4(embedded); // NAT64
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private'; // fc00::/7
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'reserved'; // documentation
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return 'reserved'; // discard-only
  return 'public';
}

/** A URL's hostname without IPv6 brackets. */
function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** The range a URL's host names by itself: an IP literal's range, loopback for `localhost` / `*.localhost`; undefined for other hostnames. */
export function literalRange(url: URL): AddressRange | undefined {
  const host = bareHostname(url);
  if (isIP(host) !== 0) return addressRange(host);
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback';
  return undefined;
}

/** What a {@link TargetPolicy} is built from. */
export interface TargetPolicyOptions {
  /** The entry's URL: its origin is always allowed, and so is the range its host names by itself. */
  entryUrl: URL;
  /** Further exact origins requests may go to (an `a2a` entry's `allowedOrigins`); their literal ranges are allowed too. */
  allowedOrigins?: readonly string[];
  /** How hostnames are resolved at connect time (default {@link systemResolver}). */
  resolver?: Resolver;
}

/** The target rules of one entry (see the module comment). */
export class TargetPolicy {
  /** Origins requests may go to: the entry's, then its `allowedOrigins`. */
  readonly origins: ReadonlySet<string>;
  /** Address ranges connections may reach: `public`, plus the ranges the entry's URLs name literally. */
  readonly ranges: ReadonlySet<AddressRange>;
  readonly #entryOrigin: string;
  readonly #resolver: Resolver;

  constructor(options: TargetPolicyOptions) {
    const allowed = (options.allowedOrigins ?? []).map((origin) => new URL(origin));
    this.#entryOrigin = options.entryUrl.origin;
    this.origins = new Set([options.entryUrl.origin, ...allowed.map((url) => url.origin)]);
    const ranges = new Set<AddressRange>(['public']);
    for (const url of [options.entryUrl, ...allowed]) {
      const range = literalRange(url);
      if (range !== undefined) ranges.add(range);
    }
    this.ranges = ranges;
    this.#resolver = options.resolver ?? systemResolver;
  }

  /** True when `url` has the entry's own origin (whose answers may be quoted in errors). */
  isEntryOrigin(url: URL | string): boolean {
    return new URL(url).origin === this.#entryOrigin;
  }

  /**
   * Checks that `url` may be requested: its origin is allowed and, when its host is an IP literal
   * (which `net.connect` does not look up), its range is. Hostnames are checked by {@link lookup}.
   * @throws TargetRefusedError naming the origin and why.
   */
  checkUrl(url: URL): void {
    this.checkOrigin(url);
    const host = bareHostname(url);
    if (isIP(host) !== 0) this.checkAddress(host, url.origin);
  }

  /** @throws TargetRefusedError when `url`'s origin is neither the entry's nor one of its `allowedOrigins`. */
  checkOrigin(url: URL): void {
    if (!this.origins.has(url.origin)) {
      throw new TargetRefusedError(`refused to send to ${url.origin}: not the entry's origin and not listed in its allowedOrigins`);
    }
  }

  /** @throws TargetRefusedError when `address` lies in a range the entry does not allow (`target` names it in the message, never the address). */
  checkAddress(address: string, target: string): void {
    const range = addressRange(address);
    if (!this.ranges.has(range)) {
      throw new TargetRefusedError(`refused to connect to ${target}: it is a ${range} address, and the entry's own URL is not one`);
    }
  }

  /**
   * A `lookup` for `net.connect` / `tls.connect` (undici's `connect` options): resolves with the
   * policy's resolver and fails with a {@link TargetRefusedError} when any address is refused, so
   * the connection only ever goes to an address that was checked.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.#resolver(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) {
          const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
          callback(error, options.all ? [] : '', 4);
          return;
        }
        try {
          for (const { address } of wanted) this.checkAddress(address, hostname);
        } catch (error) {
          callback(error as Error, options.all ? [] : '', 4);
          return;
        }
        if (options.all) (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : '', 4),
    );
  };
}
