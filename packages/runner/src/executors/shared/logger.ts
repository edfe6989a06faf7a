/** The executors' logger type, and the silent default (redaction of log records: `redactingLogger` in `redact.ts`). */
import type { Logger } from '../../logger.ts';

/** The logging surface the executors need: the runner's pino-shaped {@link Logger}. */
export type ExecutorLogger = Logger;

const ignore = (): void => {};

/** A logger that drops everything; the default when no logger is given. */
export const silentLogger: ExecutorLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
