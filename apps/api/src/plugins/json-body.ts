/**
 * The `application/json` body parser, replacing Fastify's default so that every rejection says
 * what is wrong: an empty body, bytes that are not valid UTF-8 (Fastify's decoder would silently
 * turn them into U+FFFD), and JSON syntax errors (with the parser's position). The body is read as
 * raw bytes under the same limit as before (the server's `bodyLimit`, or a route's own).
 *
 * Keys that could poison prototypes (`__proto__`, `constructor.prototype`) are refused by the body
 * guard (body-guard.ts), which walks every parsed key anyway; `JSON.parse` itself only creates an
 * own property named `__proto__` and never changes a prototype. Fastify's `onProtoPoisoning` and
 * `onConstructorPoisoning` options therefore do not apply.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { InvalidRequestError } from '@switchyard/domain';

const BYTE_ORDER_MARK = '\uFEFF';

/** Parses a JSON request body; throws InvalidRequestError (400) saying why it cannot. */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) throw new InvalidRequestError("The request body is empty but Content-Type is 'application/json'");
  if (!isUtf8(bytes)) throw new InvalidRequestError('The request body is not valid UTF-8');
  let text = bytes.toString('utf8');
  if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidRequestError(`The request body is not valid JSON: ${withoutExcerpt((error as Error).message)}`);
  }
}

/**
 * The parser's message without the excerpt of the body it may quote (`Unexpected token 'a',
 * "abc123"... is not valid JSON`): a body sent by mistake may hold a secret, and error answers
 * must not echo it. Positions are kept.
 */
function withoutExcerpt(message: string): string {
  return message.replace(/,\s*".*?"(?:\.\.\.)? is not valid JSON$/s, '');
}

/** Installs {@link parseJsonBody} as the `application/json` parser of `app` (call before registering routes). */
export function installJsonParser(app: FastifyInstance): void {
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      done(error as InvalidRequestError, undefined);
    }
  });
}
