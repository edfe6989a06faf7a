/**
 * Logging of the bridge: pino, structured, always to stderr (on stdio, stdout is the protocol).
 * Level from `LOG_LEVEL` (default `info`).
 */
import pino from 'pino';

export type Logger = pino.Logger;

/** Fields never written, should a credential ever reach a log call (the bridge logs no headers). */
const REDACT = ['authorization', '*.authorization', 'headers.authorization', '*.headers.authorization', 'apiToken', '*.apiToken', 'token', '*.token', 'bridgeTokens', '*.bridgeTokens'];

/** A pino logger writing to stderr. */
export function createLogger(level = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  return pino({ name: 'switchyard-mcp', level, redact: { paths: REDACT, censor: '[redacted]' } }, pino.destination(2));
}
