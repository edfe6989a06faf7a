/**
 * Error text fit for API answers (issue #16 item 9): what an executor, its server or the network
 * stack says about a failure becomes a node run's `error`, a run event and the run's
 * `errorSummary`, which every reader of the API sees. Those must not map the operator's machine or
 * network, so {@link publicErrorText} replaces
 *
 * - the service's data directory (absolute, as configured and as resolved through symlinks) with
 *   `$DATA_DIR` (an MCP filesystem server quotes its allowed directory when it refuses a path);
 * - network locations — a URL's `scheme://host[:port]`, an IPv4 or IPv6 address with or without
 *   a port, the host name of a DNS failure — with `[address]` (a refused connection names the
 *   address it tried, a failed lookup the name).
 *
 * Paths below the data directory keep their relative part (`$DATA_DIR/files/a.txt`), and URL paths
 * stay (`[address]/hook`), so a message still says what failed. The executors' own log records keep
 * the full text for operators.
 */
import { realpathSync } from 'node:fs';

/** What network locations become. */
export const ADDRESS_PLACEHOLDER = '[address]';

/** What the data directory becomes. */
export const DATA_DIR_PLACEHOLDER = '$DATA_DIR';

/** `scheme://authority` of a URL (any scheme a message may name: http, https, ws, wss, mongodb…). */
const URL_ORIGIN = /\b[a-z][a-z0-9+.-]{1,15}:\/\/(?:[^\s/"'`<>()[\]{},@]*@)?(?:\[[0-9a-f:.]+\]|[^\s/"'`<>()[\]{},:@]+)(?::\d{1,5})?/gi;

/** An IPv4 address, optionally with a port. */
const IPV4 = /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g;

/**
 * IPv6 addresses as Node prints them in connection errors (`fd00::5:443`, `::1:8080`,
 * `2001:db8::1`): hex groups with at least two colons, one of them part of a `::` or seven in all.
 */
const IPV6 = /(?<![\w:.])(?=[0-9a-f:]*::|(?:[0-9a-f]{1,4}:){7})[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,8}(?![\w:])/gi;

/** The host name a DNS failure names (`getaddrinfo ENOTFOUND hooks.internal.corp`). */
const DNS_FAILURE = /\b(ENOTFOUND|EAI_AGAIN|ESERVFAIL|ENODATA)\s+[^\s,;:'")]+/g;

/** Options of {@link publicErrorText}. */
export interface PublicTextOptions {
  /** The service's data directory (absolute); its occurrences become `$DATA_DIR`. */
  dataDir?: string;
}

/** Escapes `text` for use inside a RegExp. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms of `dataDir` a message may quote: as given and as resolved (e.g. /tmp → /private/tmp), without a trailing slash. */
function dataDirForms(dataDir: string): string[] {
  const forms = new Set([dataDir.replace(/\/+$/, '')]);
  try {
    forms.add(realpathSync(dataDir).replace(/\/+$/, ''));
  } catch {
    // Not there (yet): the configured form only.
  }
  return [...forms].filter((form) => form.length > 1).sort((a, b) => b.length - a.length);
}

/**
 * A function that rewrites error text as the module comment says. Pure apart from resolving
 * `dataDir` once, here.
 */
export function publicErrorText(options: PublicTextOptions = {}): (text: string) => string {
  const forms = options.dataDir === undefined ? [] : dataDirForms(options.dataDir);
  const dataDir = forms.length === 0 ? null : new RegExp(forms.map(escapeRegExp).join('|'), 'g');
  return (text) => {
    let out = dataDir === null ? text : text.replace(dataDir, DATA_DIR_PLACEHOLDER);
    out = out.replace(URL_ORIGIN, ADDRESS_PLACEHOLDER).replace(IPV4, ADDRESS_PLACEHOLDER).replace(IPV6, ADDRESS_PLACEHOLDER);
    out = out.replace(DNS_FAILURE, `$1 ${ADDRESS_PLACEHOLDER}`);
    return out;
  };
}
