/**
 * Logging of the bridge: pino, structured, always to stderr (on stdio, stdout is the protocol).
 * Level from `LOG_LEVEL` (default `info`).
 */
import pino from 'pino';

export type Logger = pino.Logger;

/** A pino logger writing to stderr. */
export function createLogger(level = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  return pino({ name: 'switchyard-mcp', level }, pino.destination(2));
}
