/**
 * Errors that Node's HTTP server or Fastify answer on their own, before any route or error handler
 * runs, made to answer with the common error body (`error-body.ts`) too:
 *
 * - HTTP parser errors on the raw socket ({@link clientErrorHandler}): 431 `headers_too_large`
 *   (request line and headers above Node's `maxHeaderSize`), 413 `request_too_large` (chunk
 *   extensions), 408 `request_timeout` (request not received in time), 400 `invalid_request`
 *   (malformed HTTP: an invalid method, header or chunk, Content-Length with Transfer-Encoding...).
 * - An `Expect` header other than `100-continue`: 417 `invalid_request` (Node: an empty 417).
 * - HTTP/1.1 without a Host header: 400 `invalid_request` (Node: an empty 400; its own check is
 *   turned off by {@link SERVER_ERROR_OPTIONS} and done in a hook instead).
 * - A request arriving while the app closes: 503 `service_unavailable` with `Connection: close`
 *   (Fastify's `return503OnClosing` would answer its own body; it is turned off).
 *
 * Use: spread {@link SERVER_ERROR_OPTIONS} into the Fastify options and register the plugin.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { ConnectionError, FastifyInstance } from 'fastify';
import { InvalidRequestError } from '@switchyard/domain';
import { errorBody, errorCodeForStatus } from './error-body.ts';
import { frameworkErrors } from './error-handler.ts';

/** Status and message answered to one HTTP parser error. */
export interface ClientErrorAnswer {
  status: number;
  message: string;
}

/** What to answer to a client error of Node's HTTP parser (`error.code`: HPE_* or ERR_HTTP_*). */
export function clientErrorAnswer(error: ConnectionError): ClientErrorAnswer {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: `The request line and headers are larger than ${http.maxHeaderSize} bytes` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'The chunk extensions of the request body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'The request was not received completely in time' };
    default: {
      // llhttp's reason is a fixed text such as "Invalid method encountered"; it never echoes input.
      const reason = (error as ConnectionError & { reason?: unknown }).reason;
      return { status: 400, message: typeof reason === 'string' && reason !== '' ? `Malformed HTTP request: ${reason}` : 'Malformed HTTP request' };
    }
  }
}

/** A complete raw HTTP response carrying the common error body; the connection closes after it. */
export function rawErrorResponse({ status, message }: ClientErrorAnswer): string {
  const json = JSON.stringify(errorBody(errorCodeForStatus(status), message));
  return [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    'Connection: close',
    '',
    json,
  ].join('\r\n');
}

/**
 * True when nothing of a response is on the wire yet, so an error response cannot corrupt one in
 * flight (Node's own client-error answer checks the same).
 */
function canAnswer(socket: Socket): boolean {
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  return socket.writable && !inFlight?.headersSent;
}

/**
 * The `clientErrorHandler` server option: answers an HTTP parser error on the raw socket with the
 * common error body and closes the connection. A reset connection gets nothing.
 */
export function clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = clientErrorAnswer(error);
  this.log.debug({ err: error, status: answer.status }, 'client error');
  if (canAnswer(socket)) socket.write(rawErrorResponse(answer));
  socket.destroy();
}

/** Listener of the server's `checkExpectation` event (an `Expect` other than 100-continue). */
function refuseExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const json = JSON.stringify(errorBody(errorCodeForStatus(417), "Unsupported Expect header: only '100-continue' is supported"));
  response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), connection: 'close' });
  response.end(json);
}

/** Fastify server options that route HTTP-level errors to the handlers of this module and error-handler.ts. */
export const SERVER_ERROR_OPTIONS = {
  clientErrorHandler,
  frameworkErrors,
  return503OnClosing: false,
  http: { requireHostHeader: false },
} as const;

export default fp(
  async function httpErrors(app: FastifyInstance) {
    app.server.on('checkExpectation', refuseExpectation);
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onRequest', async (request, reply) => {
      if (closing) {
        reply.header('connection', 'close').status(503).send(errorBody(errorCodeForStatus(503), 'The service is shutting down; retry the request'));
        return reply;
      }
      if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
        reply.header('connection', 'close');
        throw new InvalidRequestError('HTTP/1.1 requests need a Host header');
      }
    });
  },
  { name: 'http-errors' },
);
