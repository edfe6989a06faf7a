/**
 * The console's REST client: JSON over `fetch` to the API on the same origin, with the caller's
 * token or API key (kept in sessionStorage, never in a URL) as `Authorization: Bearer`. Errors
 * come back as {@link ApiError} with the API's `detail` (error code, message, problems, details).
 */

/** Where the API lives (same origin). */
export const API = '/api/v1';

/** The sessionStorage key of the credential. */
const TOKEN_KEY = 'switchyard.console.token';

/** Listeners told when the credential changes (sign in, sign out). */
const tokenListeners = new Set<() => void>();

/** The credential of this browser session; null when none was entered. */
export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps `token` for this browser session (null forgets it) and tells every listener. */
export function setToken(token: string | null): void {
  if (token === null || token.trim() === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token.trim());
  for (const listener of tokenListeners) listener();
}

/** Calls `listener` whenever the credential changes; returns the unsubscribe function. */
export function onTokenChange(listener: () => void): () => void {
  tokenListeners.add(listener);
  return () => tokenListeners.delete(listener);
}

/** The headers every request carries: the credential, when there is one. */
export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token === null ? {} : { authorization: `Bearer ${token}` };
}

/** The `detail` of an API error body. */
export interface ErrorDetail {
  error: string;
  message: string;
  problems?: string[];
  resource?: string;
  details?: Record<string, unknown>;
}

/** A non-2xx answer: `status` and the API's `detail` (a made-up one when the body had none). */
export class ApiError extends Error {
  readonly status: number;
  readonly detail: ErrorDetail;
  constructor(status: number, detail: ErrorDetail) {
    super(detail.message);
    this.status = status;
    this.detail = detail;
  }
}

/**
 * `method path` (path under the origin, e.g. `/api/v1/runs`) with `body` as JSON. Resolves with
 * the parsed JSON body (null for 204); rejects with {@link ApiError} for a non-2xx answer, and
 * with a TypeError when the network fails.
 */
export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: { accept: 'application/json', ...authHeaders(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const detail: ErrorDetail = parsed?.detail ?? { error: `http_${response.status}`, message: text.slice(0, 200) || response.statusText };
    throw new ApiError(response.status, detail);
  }
  return parsed as T;
}

/** Path of a workflow's resource: `/api/v1/workflows/{id}{rest}`. */
export function workflowPath(workflowId: string, rest = ''): string {
  return `${API}/workflows/${encodeURIComponent(workflowId)}${rest}`;
}

/** Path of a run's resource: `/api/v1/workflows/{id}/runs/{run_id}{rest}`. */
export function runPath(workflowId: string, runId: string, rest = ''): string {
  return workflowPath(workflowId, `/runs/${encodeURIComponent(runId)}${rest}`);
}
