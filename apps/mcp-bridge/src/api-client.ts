/**
 * The REST client of the bridge: one undici keep-alive pool to the Switchyard API, JSON in and
 * out. Errors are typed: {@link ApiError} carries the API's error body (`detail.error`,
 * `detail.resource`, `detail.details`, `detail.problems`) and HTTP status; {@link ApiUnavailableError}
 * says the API could not be reached or did not answer in time, naming the URL.
 */
import type { Pool } from 'undici';

/** An error answer of the API (status >= 400), with the fields of its `{ detail }` body. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    /** `detail.error`, e.g. `resource_not_found`, `invalid_request`, `conflict`. */
    readonly code: string,
    message: string,
    readonly url: string,
    readonly body: { resource?: string; details?: Record<string, unknown>; problems?: string[] } = {},
  ) {
    super(message);
  }
}

/** The API did not answer: connection refused, reset, or timed out. */
export class ApiUnavailableError extends Error {
  override readonly name = 'ApiUnavailableError';
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(`The Switchyard API at ${url} is unavailable: ${reason}`);
  }
}

/** Query values; undefined ones are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** What a tool may ask of the API. Narrow, so tests can fake it. */
export interface ApiClient {
  get<T>(path: string, query?: Query): Promise<T>;
  post<T>(path: string, body?: unknown, headers?: Record<string, string>): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
  /** The absolute URL of an API path (for links in results). */
  url(path: string): string;
  close(): Promise<void>;
}

/** Options of {@link createApiClient}. */
export interface ApiClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  apiUrl: string;
  /** Bearer token, or null. */
  apiToken: string | null;
  /** Timeout of one request (headers and body), ms. */
  timeoutMs: number;
}

/** Creates the pooled client with one credential (stdio mode, tests). `close()` closes its pool. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const pool = createApiClientPool(options);
  return { ...pool.forToken(options.apiToken), close: () => pool.close() };
}

/**
 * REST clients sharing one undici pool, each with its own credential: the HTTP mode makes one per
 * request with that request's token (http.ts), so no token outlives the request that brought it.
 */
export interface ApiClientPool {
  /** A client sending `Authorization: Bearer <token>` (no Authorization when null). Its `close()` does nothing: the pool is shared. */
  forToken(token: string | null): ApiClient;
  /** Closes the pool (every client of it). */
  close(): Promise<void>;
}

/** Creates a pool of clients (the connections open with the first request). */
export function createApiClientPool(options: Omit<ApiClientOptions, 'apiToken'>): ApiClientPool {
  const base = new URL(options.apiUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  // undici is loaded with the first request, not at start-up (cold start of the bridge).
  let pool: Promise<Pool> | undefined;
  const poolOf = () =>
    (pool ??= import('undici').then(({ Pool }) => new Pool(base.origin, { connections: 16, keepAliveTimeout: 30_000, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs })));

  async function call<T>(auth: Record<string, string>, method: string, path: string, query: Query | undefined, body: unknown, headers: Record<string, string> = {}): Promise<T> {
    const search = query ? new URLSearchParams(Object.entries(query).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]]))).toString() : '';
    const fullPath = `${prefix}${path}${search ? `?${search}` : ''}`;
    const url = `${base.origin}${fullPath}`;
    let response;
    try {
      const client = await poolOf();
      response = await client.request({
        method: method as 'GET',
        path: fullPath,
        // The credential last: a tool's extra headers cannot replace it.
        headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers, ...auth },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new ApiUnavailableError(url, (error as Error).message || String(error));
    }
    const text = await response.body.text().catch((error: unknown) => {
      throw new ApiUnavailableError(url, `the answer broke off: ${(error as Error).message}`);
    });
    const parsed: unknown = text === '' ? null : safeJson(text);
    if (response.statusCode >= 400) {
      const detail = (parsed as { detail?: Record<string, unknown> } | null)?.detail;
      if (response.statusCode >= 502 && response.statusCode <= 504 && !detail) throw new ApiUnavailableError(url, `HTTP ${response.statusCode}`);
      throw new ApiError(
        response.statusCode,
        typeof detail?.['error'] === 'string' ? detail['error'] : `http_${response.statusCode}`,
        typeof detail?.['message'] === 'string' ? detail['message'] : `HTTP ${response.statusCode} from ${url}`,
        url,
        {
          resource: typeof detail?.['resource'] === 'string' ? detail['resource'] : undefined,
          details: isObject(detail?.['details']) ? detail['details'] : undefined,
          problems: Array.isArray(detail?.['problems']) ? (detail['problems'] as string[]) : undefined,
        },
      );
    }
    return parsed as T;
  }

  return {
    forToken(token) {
      const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      return {
        get: (path, query) => call(auth, 'GET', path, query, undefined),
        post: (path, body, headers) => call(auth, 'POST', path, undefined, body, headers),
        put: (path, body) => call(auth, 'PUT', path, undefined, body),
        delete: async (path) => void (await call(auth, 'DELETE', path, undefined, undefined)),
        url: (path) => `${base.origin}${prefix}${path}`,
        close: async () => {},
      };
    },
    close: async () => {
      if (pool) await (await pool).close();
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { raw: text };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
