/**
 * Connection-level bounds (issue #16 item 8, slowloris): how long a request may take to arrive,
 * how long a connection may idle, how many connections one address may hold, and no connection
 * kept open after the service refused a request whose body is still arriving.
 *
 * - {@link edgeServerOptions}: Fastify/Node options — `requestTimeout` (headers and body complete
 *   within it, else 408 and the connection closes; checked every quarter of it, at most every
 *   5 s), `headersTimeout` (the same or 60 s, whichever is less) and `connectionTimeout` (idle
 *   sockets closed; an event stream's keep-alive comments keep it busy).
 * - The plugin: a connection beyond `maxConnectionsPerAddress` from one address is answered 429
 *   `rate_limited` on the raw socket and closed; an answer of 401, 403, 408, 413, 429 or 431 to a
 *   request whose body has not been read completely carries `Connection: close`, so Node closes the
 *   socket after the answer instead of reading the rest of a trickled body.
 *
 * Production runs behind a buffering reverse proxy (docs/operations/security.md), which absorbs slow clients
 * before they reach the service; these bounds keep a directly exposed service alive.
 */
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { KeyedCounts } from '../keyed-counts.ts';
import { rawErrorResponse } from './http-errors.ts';

/** The connection-level settings (config.ts `EdgeConfig`). Milliseconds. */
export interface EdgeLimits {
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  /** 0: unlimited. */
  maxConnectionsPerAddress: number;
}

/** Statuses after which a half-received request body is not worth reading: the connection closes. */
const CLOSING_STATUSES = new Set([401, 403, 408, 413, 429, 431]);

/** Fastify server options for `limits` (spread into the Fastify options; `http` merges with other `http` options). */
export function edgeServerOptions(limits: EdgeLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.connectionTimeoutMs,
    http: {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.requestTimeoutMs, 60_000),
      // Node checks the two timeouts on this period (default 30 s).
      connectionsCheckingInterval: Math.min(5_000, Math.max(250, Math.floor(limits.requestTimeoutMs / 4))),
    },
  };
}

export default fp(
  async function edgeLimits(app: FastifyInstance, limits: EdgeLimits) {
    if (limits.maxConnectionsPerAddress > 0) {
      const open = new KeyedCounts();
      app.server.on('connection', (socket: Socket) => {
        const address = socket.remoteAddress ?? 'unknown';
        if (open.tryTake(address, limits.maxConnectionsPerAddress)) {
          socket.once('close', () => open.release(address));
          return;
        }
        // As Node answers its own parser errors: write what fits now, then close.
        socket.write(rawErrorResponse({ status: 429, message: `Too many open connections from this address (at most ${limits.maxConnectionsPerAddress}, SWITCHYARD_MAX_CONNECTIONS_PER_ADDRESS)` }));
        socket.destroy();
      });
    }
    app.addHook('onSend', async (request, reply) => {
      if (CLOSING_STATUSES.has(reply.statusCode) && !request.raw.complete) reply.header('connection', 'close');
    });
  },
  { name: 'edge-limits' },
);
