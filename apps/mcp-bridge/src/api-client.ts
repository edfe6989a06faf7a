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

/** Creates the pooled client. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = new URL(options.apiUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  // undici is loaded with the first request, not at start-up (cold start of the bridge).
  let pool: Promise<Pool> | undefined;
  const poolOf = () =>
    (pool ??= import('undici').then(({ Pool }) => new Pool(base.origin, { connections: 16, keepAliveTimeout: 30_000, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs })));
  const auth: Record<string, string> = options.apiToken ? { authorization: `Bearer ${options.apiToken}` } : {};

  async function call<T>(method: string, path: string, query: Query | undefined, body: unknown, headers: Record<string, string> = {}): Promise<T> {
    const search = query ? new URLSearchParams(Object.entries(query).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]]))).toString() : '';
    const fullPath = `${prefix}${path}${search ? `?${search}` : ''}`;
    const url = `${base.origin}${fullPath}`;
    let response;
    try {
      const client = await poolOf();
      response = await client.request({
        method: method as 'GET',
        path: fullPath,
        headers: { accept: 'application/json', ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
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
    get: (path, query) => call('GET', path, query, undefined),
    post: (path, body, headers) => call('POST', path, undefined, body, headers),
    put: (path, body) => call('PUT', path, undefined, body),
    delete: async (path) => void (await call('DELETE', path, undefined, undefined)),
    url: (path) => `${base.origin}${prefix}${path}`,
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
