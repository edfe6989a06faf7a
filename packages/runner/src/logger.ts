/**
 * The logging surface the runner needs: pino's, structurally (a `pino.Logger` fits), so tests can
 * pass `pino({ level: 'silent' })` and the runner does not own logger construction.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
