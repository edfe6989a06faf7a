import type { Logger } from '../../logger.ts';
import type { Redactor } from './redact.ts';

/** The logging surface the executors need: the runner's pino-shaped {@link Logger}. */
export type ExecutorLogger = Logger;

const ignore = (): void => {};

/** A logger that drops everything; the default when no logger is given. */
export const silentLogger: ExecutorLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/**
 * `logger` with `redactor` applied to every record: the message and every string of the logged
 * object are redacted, and Errors are replaced by redacted stand-ins without their extra
 * properties (see {@link Redactor.error}; a spawn error's `spawnargs` holds the command line).
 */
export function redactingLogger(logger: ExecutorLogger, redactor: Redactor): ExecutorLogger {
  const level = (write: (obj: object, msg?: string) => void) => (obj: object, msg?: string): void => {
    write(redactor.value(obj) as object, msg === undefined ? undefined : redactor.text(msg));
  };
  return {
    debug: level(logger.debug.bind(logger)),
    info: level(logger.info.bind(logger)),
    warn: level(logger.warn.bind(logger)),
    error: level(logger.error.bind(logger)),
  };
}
