/**
 * Endpoint resolution shared by the kinds whose entries name an HTTP endpoint (`http`, `a2a`):
 * `url`, `headers` and `description`, expanded and checked, with the secrets they hold.
 */
import type { EntryScope } from '../kind.ts';
import { checkHeaderNames } from './headers.ts';

/** What an HTTP endpoint entry (`http`, `a2a`) resolves to, whatever else its kind adds. */
export interface ResolvedEndpoint {
  url: URL;
  headers: Record<string, string>;
  /** Values never to report (see `redact.ts`): header values, substituted values, URL credentials and query values. */
  secrets: string[];
  /** The entry's `description`. */
  description?: string;
}

/**
 * Resolves the `url`, `headers` and `description` of an HTTP endpoint entry (`http`, `a2a`):
 * expansions, URL checks, header names (see {@link checkHeaderNames}). Undefined after reporting
 * problems on `scope`.
 */
export function resolveEndpoint(entry: { url: string; headers?: Record<string, string>; description?: string }, scope: EntryScope): ResolvedEndpoint | undefined {
  const secrets = new Set<string>();
  const url = scope.url(entry.url, 'url', secrets);
  const headers = scope.headers(entry.headers, 'headers', secrets);
  const namesOk = checkHeaderNames(entry.headers, scope);
  if (!namesOk || url === undefined || headers === undefined) return undefined;
  const resolved: ResolvedEndpoint = { url, headers, secrets: [...secrets] };
  if (entry.description !== undefined) resolved.description = entry.description;
  return resolved;
}
