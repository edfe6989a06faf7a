/**
 * The logging surface the executors need. It is pino's `(obj, msg)` call shape, so a `pino.Logger`
 * (or a child of one) can be passed as is; tests pass a recording object. Same shape as the
 * runner's `Logger`, so either can be passed where the other is expected.
 */
export interface ExecutorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when no logger is given. */
export const silentLogger: ExecutorLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
