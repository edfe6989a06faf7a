/**
 * HTTP load on loopback with undici's Pool (no extra tool): a fixed number of connections, each
 * sending its next request as soon as the previous answer arrived, bounded in count and in time.
 */
import { Pool } from 'undici';

/** One request of a load. */
export interface LoadRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query, e.g. `/api/v1/workflows/<id>/runs`. */
  readonly path: string;
  /** JSON body, sent with `content-type: application/json`. */
  readonly body?: string;
  /** More request headers (e.g. `authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The headers of `request`: its own, plus the JSON content type when it has a body. */
function headersOf(request: LoadRequest): Record<string, string> {
  return { ...request.headers, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) };
}

/** Options of {@link runLoad}. */
export interface LoadOptions {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Connections, each with one request in flight. */
  readonly connections: number;
  /** Stops sending after this many milliseconds. */
  readonly durationMs: number;
  /** Stops sending after this many requests. */
  readonly maxRequests: number;
  /** The `index`-th request (0-based). */
  readonly request: (index: number) => LoadRequest;
}

/** What a load measured. */
export interface LoadResult {
  /** Requests answered. */
  readonly requests: number;
  /** Wall-clock seconds from the first request sent to the last answer. */
  readonly seconds: number;
  /** `requests / seconds`. */
  readonly perSecond: number;
  /** Answers by HTTP status. */
  readonly statuses: ReadonlyMap<number, number>;
  /** Latency of each request, milliseconds, in completion order. */
  readonly latenciesMs: readonly number[];
}

/**
 * Sends requests from `options.request` over `options.connections` connections until
 * `durationMs` or `maxRequests` is reached, then waits for the answers in flight. Rejects with
 * undici's error when a request fails at the connection level.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = openPool(options.origin, options.connections);
  const statuses = new Map<number, number>();
  const latenciesMs: number[] = [];
  let issued = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;
  const connection = async () => {
    while (issued < options.maxRequests && performance.now() < deadline) {
      const request = options.request(issued++);
      const t0 = performance.now();
      const response = await pool.request({ method: request.method, path: request.path, body: request.body, headers: headersOf(request) });
      await response.body.dump();
      latenciesMs.push(performance.now() - t0);
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.connections }, connection));
  } finally {
    await pool.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { requests: latenciesMs.length, seconds, perSecond: latenciesMs.length / seconds, statuses, latenciesMs };
}

/** A pool of `connections` connections to `origin` (loopback), for {@link sendAtOnce}; close it when done. */
export function openPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1 });
}

/**
 * Sends `requests` all at once through `pool` (a race: give it a connection per request, opened
 * beforehand by a first round, so that connecting is not measured) and returns their answers in
 * `requests` order: status, latency in milliseconds, body text. Rejects with undici's error when
 * a request fails at the connection level.
 */
export async function sendAtOnce(pool: Pool, requests: readonly LoadRequest[]): Promise<Array<{ status: number; ms: number; text: string }>> {
  return Promise.all(
    requests.map(async (request) => {
      const t0 = performance.now();
      const response = await pool.request({ method: request.method, path: request.path, body: request.body, headers: headersOf(request) });
      const text = await response.body.text();
      return { status: response.statusCode, ms: performance.now() - t0, text };
    }),
  );
}
