/**
 * The error responses of every route, declared in one place so that no route can forget one and
 * the OpenAPI document lists every status a client can get. {@link declareErrorResponses} is an
 * `onRoute` hook (installed by the error-handler plugin, before any route) that adds to the
 * `response` schema of every documented route (one with a `response` schema and not hidden):
 *
 * - every route: 400 (a malformed id, query, header or body), 500 and 503 (`store_unavailable`
 *   with Retry-After, or `service_unavailable` while the service shuts down);
 * - routes that read a body (any method but GET and HEAD, see Fastify's `handleRequest`): 413
 *   and 415;
 * - routes under `/api/` (each requires a scope, auth/scopes.ts): 401 and 403, declared whether or
 *   not authentication is on;
 * - routes with path parameters: 404 (`detail.resource` says what is missing);
 * - routes of a rate-limit group (`config.rateLimitGroup`, rate-limits.ts): 429 `rate_limited`
 *   with Retry-After, declared whether or not the limits are on, so that the document does not
 *   depend on the configuration.
 *
 * Statuses only some routes answer (409, the SSE route's 406) are declared by the route itself.
 * Every error response, added here or by the route, refers to the shared schema
 * {@link ERROR_BODY_ID} (one type in generated clients) and gets a description of its status.
 * Errors answered before routing (408, 417, 431 of the HTTP parser, 404 of an unknown route) carry
 * the same body; the document's description says so.
 */
import type { RouteOptions } from 'fastify';
import { ErrorBody } from '@switchyard/domain';
import { requiredScopeOf } from '../auth/scopes.ts';

/** `$id` of the shared error body schema (`#/components/schemas/ErrorBody` in the OpenAPI document). */
export const ERROR_BODY_ID = 'ErrorBody';

/** {@link ErrorBody} as a shared schema, for `app.addSchema`. */
export const ERROR_BODY_SCHEMA = { ...ErrorBody, $id: ERROR_BODY_ID };

/** What each error status means, as the OpenAPI response description. */
const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Invalid request (`invalid_request`): a malformed id, query, header or body, or a request the rules refuse',
  401:
    'Not authenticated (`authentication_required`): no credential, or one that does not verify (expired, bad signature, unknown API key); ' +
    'answered only when authentication is on (SWITCHYARD_AUTH)',
  403:
    'Permission denied. `permission_denied`: the caller lacks the scope this operation requires (`detail.details.requiredScope`), or its ' +
    'role on the workflow is too low (`detail.details: { requiredRole, workflowId }`; roles: viewer < operator < editor < owner, ' +
    'docs/guide/access-control.md). Deciding a gate: `not_an_approver` (the gate names its approvers, `detail.details.approvers`) or ' +
    '`self_approval_forbidden` (four-eyes: the run\'s trigger may not decide it)',
  404: 'Not found (`resource_not_found`): `detail.resource` says what does not exist',
  406: 'Not acceptable (`invalid_request`): the Accept header does not allow the response type',
  409:
    'Conflict (`conflict`, `duplicate_entry`): the resource is not in a state that allows this; `detail.details` may say which. ' +
    '`limit_reached`: a per-run cap refuses it (`detail.details.limit`); `document_too_large`: the write would make a stored document larger than 16 MiB (nothing written)',
  413: 'Request too large (`request_too_large`): the body is larger than the limit',
  415:
    'Unsupported media type (`unsupported_media_type`): request bodies must be application/json (the workflow create, update and ' +
    'validate routes also take application/yaml, application/x-yaml and text/yaml), UTF-8',
  429:
    'Too many requests (`rate_limited`): this client sent more requests of this kind in the current minute than the service allows ' +
    '(triggers: trigger, retry, replay, node rerun, event posts; approvals: approve, pause, resume, cancel, human requests; definitions: create, update, validate); retry after the Retry-After header, seconds',
  500: 'Internal error (`internal_error`): an unexpected failure; the message hides internals',
  503:
    'Unavailable: `store_unavailable` (the store refuses writes for now; retry after the Retry-After header, seconds) or ' +
    '`service_unavailable` (the service is shutting down; retry on another instance or later), or `too_busy` (the workflow create, update ' +
    'and validate routes: every YAML parser thread busy and the queue full; retry after the Retry-After header, seconds, or send JSON)',
};

/** Statuses every documented route can answer. */
const EVERY_ROUTE = [400, 500, 503];
/** Statuses of routes that read a request body. */
const BODY_ROUTES = [413, 415];
/** Statuses of routes with path parameters. */
const PARAM_ROUTES = [404];
/** Statuses of routes that require a scope (plugins/auth.ts). */
const PROTECTED_ROUTES = [401, 403];
/** Statuses of rate-limited routes. */
const RATE_LIMITED_ROUTES = [429];

/** Headers of a 429 answer (plugins/rate-limits.ts). */
const RATE_LIMIT_HEADERS = {
  'retry-after': { type: 'integer', minimum: 0, description: 'Seconds until the limit resets' },
  'x-ratelimit-limit': { type: 'integer', minimum: 0, description: 'Requests of this kind one client may send a minute' },
  'x-ratelimit-remaining': { type: 'integer', minimum: 0, description: 'Requests left in the current minute (0)' },
  'x-ratelimit-reset': { type: 'integer', minimum: 0, description: 'Seconds until the limit resets' },
};

/** The response schema of error `status`: a reference to the shared body with the status's description. */
function errorResponse(status: number): Record<string, unknown> {
  const response: Record<string, unknown> = { $ref: `${ERROR_BODY_ID}#` };
  const description = ERROR_DESCRIPTIONS[status];
  if (description) response.description = description;
  if (status === 503) {
    response.headers = { 'retry-after': { type: 'integer', minimum: 0, description: 'With store_unavailable or too_busy: seconds to wait before retrying' } };
  }
  if (status === 429) response.headers = RATE_LIMIT_HEADERS;
  return response;
}

/** True when a route of `method` reads a request body. */
function readsBody(method: RouteOptions['method']): boolean {
  return (Array.isArray(method) ? method : [method]).some((m) => m !== 'GET' && m !== 'HEAD');
}

/** The statuses `route` answers with the error body besides those it declares. */
function commonStatuses(route: RouteOptions): number[] {
  return [
    ...EVERY_ROUTE,
    ...(requiredScopeOf(route) !== null ? PROTECTED_ROUTES : []),
    ...(readsBody(route.method) ? BODY_ROUTES : []),
    ...(route.url.includes('/:') ? PARAM_ROUTES : []),
    ...(route.config?.rateLimitGroup !== undefined ? RATE_LIMITED_ROUTES : []),
  ];
}

/**
 * The `onRoute` hook: declares the common error responses of a documented route and makes each of
 * its error responses (every {@link ErrorBody}) a described reference to the shared schema.
 * Idempotent (Fastify calls it again for the HEAD route of a GET route, with the same schema).
 */
export function declareErrorResponses(route: RouteOptions): void {
  const schema = route.schema as (RouteOptions['schema'] & { hide?: boolean; response?: Record<string, unknown> }) | undefined;
  if (!schema?.response || schema.hide === true) return;
  const response: Record<string, unknown> = {};
  for (const [status, declared] of Object.entries(schema.response)) {
    response[status] = declared === ErrorBody ? errorResponse(Number(status)) : declared;
  }
  for (const status of commonStatuses(route)) response[status] ??= errorResponse(status);
  route.schema = { ...schema, response };
}
