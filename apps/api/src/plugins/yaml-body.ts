/**
 * YAML request bodies (`application/yaml`, `application/x-yaml`, `text/yaml`) for the workflow
 * definition routes: create, update and validate (routes/workflows.ts registers the parser in
 * their scope only). A YAML body is turned into exactly the value the equivalent JSON body would
 * parse to, and then goes through the same body guard (body-guard.ts) and schema validation, so
 * its limits and errors are those of JSON. What YAML adds is refused with a 400 naming the line
 * and column (`YAML line 3, column 5: ...`); messages never quote the body.
 *
 * The rules (one document, core schema, alias and nesting bounds, ...) are the shared parser's
 * (`@switchyard/domain/yaml-definition`, which the MCP bridge uses too). It runs in worker threads
 * (yaml-parse-pool.ts), so a large body does not stall the event loop: when every thread is busy
 * and the queue full the body is refused with 503 `too_busy`, and a parse running out of time with
 * 413. What is cheap stays here, before a thread is asked: the body must not be empty, its bytes
 * must be UTF-8, and a `charset` parameter other than utf-8 is a 415.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidRequestError } from '@switchyard/domain';
import { YamlParsePool, type YamlParsePoolOptions } from './yaml-parse-pool.ts';

/** Media types of YAML request bodies (the first is the one answers carry). */
export const YAML_MEDIA_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'] as const;

/**
 * The text of a YAML request body's bytes, for the parser. Throws InvalidRequestError (400) for
 * an empty body (as for JSON) or bytes that are not UTF-8.
 */
export function yamlBodyText(bytes: Buffer): string {
  if (bytes.length === 0) throw new InvalidRequestError('The request body is empty but Content-Type is YAML');
  if (!isUtf8(bytes)) throw new InvalidRequestError('The request body is not valid UTF-8');
  return bytes.toString('utf8');
}

/** A request whose `charset` is not UTF-8: 415, as Fastify answers an unsupported type. */
export class UnsupportedCharsetError extends Error {
  readonly statusCode = 415;
}

/** The `charset` parameter of `request`'s Content-Type, lower-cased, or undefined. */
function charsetOf(request: FastifyRequest): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(request.headers['content-type'] ?? '');
  return match?.[1]?.toLowerCase();
}

/**
 * Installs the YAML parser for {@link YAML_MEDIA_TYPES} in `app`'s scope (call it inside the
 * plugin whose routes take YAML, before registering them). Its parser threads start with the first
 * YAML body and end when `app` closes; `pool` sets their bounds (default: yaml-parse-pool.ts's).
 */
export function installYamlParser(app: FastifyInstance, pool: YamlParsePoolOptions = {}): void {
  const parser = new YamlParsePool(pool);
  app.addHook('onClose', () => parser.close());
  app.addContentTypeParser([...YAML_MEDIA_TYPES], { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => {
    const charset = charsetOf(request);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw new UnsupportedCharsetError(`Unsupported charset '${charset}': YAML bodies must be UTF-8`);
    }
    return parser.parse(yamlBodyText(body), request.routeOptions.bodyLimit);
  });
}
