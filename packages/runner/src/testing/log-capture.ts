/**
 * A pino logger whose output is kept in memory, for tests that check what was (not) logged.
 * Not exported from the package; tests import it directly.
 */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

/** A debug-level logger and the text of everything it wrote so far. */
export interface LogCapture {
  logger: Logger;
  text(): string;
}

/** A logger at `level` (default `debug`) writing into memory. */
export function captureLogs(level = 'debug'): LogCapture {
  let output = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      output += chunk.toString();
      done();
    },
  });
  return { logger: pino({ level }, sink), text: () => output };
}
