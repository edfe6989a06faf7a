/**
 * One place that turns every error of a routed request into `{ detail: { error, message,
 * problems?, resource?, details? } }` (STYLE.md §2.5): domain errors keep their code and status
 * (a NotFoundError adds `resource`, any domain error its `details`), Fastify validation and
 * parsing errors become 400 `invalid_request`, other Fastify client errors keep their status with
 * the code {@link errorCodeForStatus} gives it (413 `request_too_large`, 415
 * `unsupported_media_type`, ...), unknown routes 404 `resource_not_found`, a store that refuses
 * writes for now 503 `store_unavailable` (with Retry-After, seconds), a TooBusyError 503
 * `too_busy` (with Retry-After), a write the store refuses
 * for its size (over 16 MiB) 409 `document_too_large`, and anything else a logged
 * 500 `internal_error` whose message hides internals. Errors raised before routing (a malformed
 * URL) go through {@link frameworkErrorHandler}; errors of the HTTP parser through
 * `http-errors.ts`.
 *
 * The plugin also registers the shared `ErrorBody` schema and declares the error responses of
 * every route (error-responses.ts), so it must be registered before the routes.
 */
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { NotFoundError, SwitchyardError, TooBusyError } from '@switchyard/domain';
import { isDocumentTooLarge, isStoreUnavailable } from '@switchyard/store';
import { errorBody, errorCodeForStatus } from './error-body.ts';
import { ERROR_BODY_SCHEMA, declareErrorResponses } from './error-responses.ts';

/** Path parameters that hold ids, and how messages name them. */
const ID_PARAMS: Record<string, string> = { workflow_id: 'workflow ID', run_id: 'run ID', node_run_id: 'node run ID' };

/** Message for a schema validation failure; names malformed ids the way the spec does. */
function validationMessage(error: FastifyError, params: unknown): string {
  const first = error.validation?.[0];
  if (error.validationContext === 'params' && first) {
    const name = first.instancePath.replace(/^\//, '');
    const label = ID_PARAMS[name];
    if (label) return `Invalid ${label}: '${String((params as Record<string, unknown>)[name])}' is not a 24-character hex id`;
  }
  if (first?.keyword === 'additionalProperties') {
    const property = String((first.params as { additionalProperty?: unknown }).additionalProperty);
    const where = `${error.validationContext ?? 'body'}${first.instancePath.replace(/\//g, '.')}`;
    return `Invalid request: ${where} has an unknown property '${property}' (not part of this endpoint's schema)`;
  }
  return `Invalid request: ${error.message}`;
}

/** Message for a Fastify client error (4xx); says what the limit or the accepted type is where Fastify does not. */
function clientErrorMessage(error: FastifyError, request: FastifyRequest): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `The request body is larger than the limit of ${request.routeOptions.bodyLimit} bytes`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      // A route taking other types than JSON lists them in its schema's `consumes` (the workflow definition routes: YAML too).
      const types = request.routeOptions.schema?.consumes ?? ['application/json'];
      return `Unsupported Content-Type: request bodies must be ${types.length === 1 ? types[0] : `one of ${types.join(', ')}`}`;
    }
    default:
      return error.message;
  }
}

/**
 * The `frameworkErrors` server option: errors Fastify raises before a request reaches a route
 * (a malformed URL escape, an over-long path parameter) get the common error body.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode ?? 400;
  void reply.status(status).send(errorBody(errorCodeForStatus(status), error.message));
}

/** The option's declared (generic) type, which {@link frameworkErrorHandler} satisfies. */
export const frameworkErrors = frameworkErrorHandler as unknown as NonNullable<FastifyServerOptions['frameworkErrors']>;

/** Options of the error handler. */
export interface ErrorHandlerOptions {
  /** Rewrites store messages before they are answered (they name the data directory): runner public-text.ts. Default: unchanged. */
  publicText?: (text: string) => string;
}

export default fp(
  async function errorHandler(app: FastifyInstance, options: ErrorHandlerOptions) {
    const publicText = options.publicText ?? ((text: string) => text);
    app.addSchema(ERROR_BODY_SCHEMA);
    app.addHook('onRoute', declareErrorResponses);
    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (error instanceof SwitchyardError) {
        const resource = error instanceof NotFoundError ? error.resource : undefined;
        if (error instanceof TooBusyError) reply.header('retry-after', String(error.retryAfterSeconds));
        return reply.status(error.status).send(errorBody(error.code, error.message, { problems: error.problems, resource, details: error.details }));
      }
      if (isStoreUnavailable(error)) {
        request.log.warn({ err: error }, 'store unavailable');
        reply.header('retry-after', String(Math.ceil(error.retryAfterMs / 1000)));
        return reply.status(503).send(errorBody('store_unavailable', publicText(error.message)));
      }
      if (error.statusCode === undefined && isDocumentTooLarge(error)) {
        // A write the store refused for its size (MongoDB's 16 MiB): nothing was written; the caller's data made it too large.
        // (Fastify's own client errors, e.g. a body over the limit, carry a statusCode and keep it.)
        request.log.warn({ err: error }, 'document too large to store');
        return reply.status(409).send(errorBody('document_too_large', 'The write would make a stored document larger than the store accepts (16 MiB); nothing was written'));
      }
      if (error.validation) {
        return reply.status(400).send(errorBody('invalid_request', validationMessage(error, request.params)));
      }
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        return reply.status(status).send(errorBody(errorCodeForStatus(status), clientErrorMessage(error, request)));
      }
      request.log.error({ err: error }, 'request failed');
      return reply.status(500).send(errorBody('internal_error', 'Internal server error'));
    });
    app.setNotFoundHandler((request, reply) => {
      reply.status(404).send(errorBody('resource_not_found', `Route ${request.method} ${request.url.split('?')[0]} not found`));
    });
  },
  { name: 'error-handler' },
);
