/**
 * The service's pino logger (server.ts builds it; the services and the Fastify app log through it).
 *
 * Secrets never reach the log output:
 * - Redaction (pino `redact`, censor `[REDACTED]`) of the credentials a request may carry —
 *   `req.headers.authorization`, `req.headers["x-api-key"]`, `req.headers.cookie` — and of any
 *   property named `apiToken`, `token`, `secret` or `password` one level down (`*.token`, ...).
 *   Registry secrets (values from `${env:NAME}`) are redacted by the executors themselves before
 *   they log (see packages/runner/src/executors/shared/redact.ts).
 * - The request serializer logs method, URL, host and the remote address only: never headers or
 *   bodies (the redaction paths are a second line of defence should a header ever be logged).
 */
import pino, { type Logger, type LoggerOptions } from 'pino';

/** What a redacted value is replaced with (the same text as the executors' redaction). */
export const LOG_CENSOR = '[REDACTED]';

/** The pino redaction paths: request credentials, and secret-named properties of any logged object. */
export const LOG_REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.apiToken',
  '*.token',
  '*.secret',
  '*.password',
];

/** A request as logged: no headers, no body. */
interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** The options of the service logger at `level` (exported for tests, which add their own destination). */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    base: { service: 'switchyard-api' },
    redact: { paths: [...LOG_REDACT_PATHS], censor: LOG_CENSOR },
    serializers: {
      // Replaces Fastify's (which logs only these too): an explicit allow-list, so that neither
      // headers nor the body can ever be added to request logs by accident.
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: req.url,
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
      res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
      err: pino.stdSerializers.err,
    },
  };
}

/** The service logger: JSON lines on stdout at `level`, with the redaction above. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return destination === undefined ? pino(loggerOptions(level)) : pino(loggerOptions(level), destination);
}
