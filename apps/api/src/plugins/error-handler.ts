/**
 * One place that turns every error into `{ detail: { error, message, problems? } }` (STYLE.md
 * §2.5): domain errors keep their code and status, Fastify validation and parsing errors become
 * 400 `invalid_request`, unknown routes 404 `resource_not_found`, a store that refuses writes for
 * now 503 `store_unavailable` (with Retry-After, seconds), and anything else a logged 500
 * `internal_error` whose message hides internals.
 */
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance } from 'fastify';
import { SwitchyardError, type ErrorBody } from '@switchyard/domain';
import { isStoreUnavailable } from '@switchyard/store';

/** Path parameters that hold ids, and how messages name them. */
const ID_PARAMS: Record<string, string> = { workflow_id: 'workflow ID', run_id: 'run ID', node_run_id: 'node run ID' };

function body(error: string, message: string, problems?: string[]): ErrorBody {
  return { detail: problems ? { error, message, problems } : { error, message } };
}

/** Message for a schema validation failure; names malformed ids the way the spec does. */
function validationMessage(error: FastifyError, params: unknown): string {
  const first = error.validation?.[0];
  if (error.validationContext === 'params' && first) {
    const name = first.instancePath.replace(/^\//, '');
    const label = ID_PARAMS[name];
    if (label) return `Invalid ${label}: '${String((params as Record<string, unknown>)[name])}' is not a 24-character hex id`;
  }
  return `Invalid request: ${error.message}`;
}

export default fp(
  async function errorHandler(app: FastifyInstance) {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (error instanceof SwitchyardError) {
        return reply.status(error.status).send(body(error.code, error.message, error.problems));
      }
      if (isStoreUnavailable(error)) {
        request.log.warn({ err: error }, 'store unavailable');
        reply.header('retry-after', String(Math.ceil(error.retryAfterMs / 1000)));
        return reply.status(503).send(body('store_unavailable', error.message));
      }
      if (error.validation) {
        return reply.status(400).send(body('invalid_request', validationMessage(error, request.params)));
      }
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        return reply.status(status).send(body('invalid_request', error.message));
      }
      request.log.error({ err: error }, 'request failed');
      return reply.status(500).send(body('internal_error', 'Internal server error'));
    });
    app.setNotFoundHandler((request, reply) => {
      reply.status(404).send(body('resource_not_found', `Route ${request.method} ${request.url.split('?')[0]} not found`));
    });
  },
  { name: 'error-handler' },
);
